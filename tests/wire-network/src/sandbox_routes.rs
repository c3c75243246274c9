//! The wire-level test network behind the sandbox's `/sandbox/*` routes,
//! served by the test-network build only (`parley-test-network` with
//! `PARLEY_NETWORK_CONTROL_URL`): a documented test-only departure from the
//! rule that they answer 404 with the real network. The routes are the
//! sandbox's own (`parley_network_sandbox::routes::control_routes`): they
//! check the caller, the session and the body, then this [`TestNetwork`]
//! has the test network's world do the real thing (`crate::world::control`):
//! its phone scans the QR, a contact's device sends an encrypted message,
//! the devices that received the session's messages say what they were. The
//! worker and the adapter are the real ones, untouched.
use std::time::Duration;

use actix_web::web;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parley_api::AppState;
use parley_api::extension::{RouteSet, ask_owner, known, unexpected};
use parley_contract::command::{Command, Reply};
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::{
    Outbox, SandboxContact, SandboxGroupChanged, SandboxGroupCreated, SandboxHistory,
    SandboxHistorySet, SandboxLinked, SandboxMessage, SandboxMessageSent, SandboxPhoneInfo,
};
use parley_model::address::{Jid, PhoneNumber};
use parley_model::ids::ClientId;
use parley_network::test_network::{
    CallEnd, MembersChange, NewCall, NewGroup, NewReceipt, NewTyping, PhoneLabel, SettingChange,
    TestNetwork,
};
use parley_shared::db::SessionRow;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::world::SessionRef;

/// The routes, and what the OpenAPI document says of them (the sandbox's).
pub const ROUTES: RouteSet = RouteSet {
    everywhere: |_| {},
    gateway: |cfg| parley_network_sandbox::routes::control_routes(cfg, WorldNetwork::boxed),
    rules: parley_network_sandbox::routes::ROUTES.rules,
    local_only: |path| {
        matches!(
            path,
            "/sandbox/outbox" | "/sandbox/contacts" | "/sandbox/history"
        )
    },
    lenient: &["/sandbox/link"],
};

/// How long a control may take on the test network (a new phone connects first).
const WORLD_TIMEOUT: Duration = Duration::from_secs(60);

/// How long `/sandbox/messages` waits for the session to log what it received.
const LOGGED_WAIT: Duration = Duration::from_secs(20);

/// The test network's world, as the gateway's API reaches it.
pub struct WorldNetwork {
    state: web::Data<AppState>,
}

impl WorldNetwork {
    /// For [`parley_network_sandbox::routes::control_routes`].
    pub fn boxed(state: web::Data<AppState>) -> Box<dyn TestNetwork> {
        Box::new(WorldNetwork { state })
    }

    /// The session's device on the network, or 409 when it is not linked.
    async fn device(&self, id: &ClientId) -> Result<SessionRef, ApiError> {
        linked_device(&known(&self.state, id.as_str()).await?)
    }
}

#[async_trait]
impl TestNetwork for WorldNetwork {
    async fn qr_owner(&self, qr: &str) -> Result<ClientId, ApiError> {
        let state = &self.state;
        let waiting = state.ports.db.sessions().await?;
        for row in waiting.into_iter().filter(|r| r.status == "qr") {
            let id = ClientId::parse(&row.client_id)?;
            if current_qr(state, &id).await.is_ok_and(|shown| shown == qr) {
                return Ok(id);
            }
        }
        Err(ApiError::bad_request("qr is not a current QR code"))
    }

    async fn link(
        &self,
        id: &ClientId,
        phone: PhoneNumber,
        name: String,
        qr: Option<String>,
    ) -> Result<SandboxLinked, ApiError> {
        let shown = current_qr(&self.state, id).await?;
        if qr.as_ref().is_some_and(|qr| *qr != shown) {
            return Err(ApiError::bad_request("qr is not a current QR code"));
        }
        let body = json!({ "phone": phone.into_string(), "name": name, "qr": shown });
        let linked: crate::world::Linked = world(&self.state, "/link", body).await?;
        connected(&self.state, id).await?;
        Ok(SandboxLinked {
            client_id: id.to_string(),
            jid: linked.jid,
            lid: linked.lid,
        })
    }

    async fn enter_code(&self, id: &ClientId, code: String) -> Result<SandboxLinked, ApiError> {
        let linked: crate::world::Linked =
            world(&self.state, "/enter-code", json!({ "code": code })).await?;
        connected(&self.state, id).await?;
        Ok(SandboxLinked {
            client_id: id.to_string(),
            jid: linked.jid,
            lid: linked.lid,
        })
    }

    async fn unlink(&self, id: &ClientId) -> Result<(), ApiError> {
        let session = self.device(id).await?;
        let _: Value = world(&self.state, "/unlink", json!({ "session": session })).await?;
        Ok(())
    }

    async fn fault(&self, id: &ClientId, op: String, count: u32) -> Result<(), ApiError> {
        if op == "pair-code" {
            // A session asking for a code has no device yet: the fault is
            // armed for the socket its QR code names.
            let qr = current_qr(&self.state, id).await?;
            let body = json!({ "qr": qr, "count": count });
            let _: Value = world(&self.state, "/code-fault", body).await?;
            return Ok(());
        }
        let session = self.device(id).await?;
        let body = json!({ "session": session, "op": op, "count": count });
        let _: Value = world(&self.state, "/faults", body).await?;
        Ok(())
    }

    async fn contact(&self, contact: SandboxContact) -> Result<SandboxPhoneInfo, ApiError> {
        world(&self.state, "/contacts", json!(contact)).await
    }

    async fn history(&self, history: SandboxHistory) -> Result<SandboxHistorySet, ApiError> {
        world(&self.state, "/history", json!(history)).await
    }

    async fn outbox(
        &self,
        id: &ClientId,
        to: Option<String>,
        since: Option<DateTime<Utc>>,
    ) -> Result<Outbox, ApiError> {
        // A session never linked, or gone, sent nothing.
        let Some(row) = self.state.ports.db.session(id.as_str()).await? else {
            return Ok(Outbox { messages: vec![] });
        };
        let Ok(session) = linked_device(&row) else {
            return Ok(Outbox { messages: vec![] });
        };
        let body = json!({ "session": session, "to": to, "since": since });
        world(&self.state, "/outbox", body).await
    }

    async fn message(
        &self,
        id: &ClientId,
        message: SandboxMessage,
    ) -> Result<SandboxMessageSent, ApiError> {
        let row = known(&self.state, id.as_str()).await?;
        if row.status != "connected" {
            return Err(ApiError::conflict("session not connected"));
        }
        let session = linked_device(&row)?;
        // Where the session's log ends now (reading it is only a fallback of
        // `logged`: a log it cannot read does not fail the injection).
        let after = last_seq(&self.state, id).await.unwrap_or(0);
        // A message the gateway logs no event of is answered once the
        // session's device acknowledged it instead.
        let statuses = row
            .events
            .iter()
            .any(|e| e == parley_contract::event::STATUS);
        let logs = logs_event(message.chat.as_deref(), row.enable_group_ai, statuses);
        let body = json!({ "session": session, "message": message, "acknowledged": !logs });
        let sent: SandboxMessageSent = world(&self.state, "/messages", body).await?;
        if logs {
            logged(&self.state, id, after, &sent.message_id).await?;
        }
        Ok(sent)
    }

    async fn create_group(
        &self,
        id: &ClientId,
        group: NewGroup,
    ) -> Result<SandboxGroupCreated, ApiError> {
        let session = self.device(id).await?;
        let phones = |all: Vec<PhoneNumber>| -> Vec<String> {
            all.into_iter().map(PhoneNumber::into_string).collect()
        };
        let body = json!({ "session": session, "subject": group.subject,
                "participants": phones(group.participants), "admins": phones(group.admins) });
        world(&self.state, "/groups", body).await
    }

    async fn update_group(
        &self,
        id: &ClientId,
        jid: Jid,
        change: SettingChange,
    ) -> Result<(), ApiError> {
        let session = self.device(id).await?;
        let by = change.by.as_ref().map(PhoneNumber::as_str);
        let body = json!({ "session": session, "jid": jid.as_str(),
            "setting": change.setting, "by": by });
        let _: Value = world(&self.state, "/groups/setting", body).await?;
        Ok(())
    }

    async fn receipt(&self, id: &ClientId, receipt: NewReceipt) -> Result<(), ApiError> {
        let session = self.device(id).await?;
        let ids: Vec<&str> = receipt.message_ids.iter().map(|i| i.as_str()).collect();
        let body = json!({ "session": session, "from": receipt.from.as_str(),
            "status": receipt.status.as_str(), "messageIds": ids,
            "group": receipt.group.as_ref().map(|g| g.as_str()) });
        let _: Value = world(&self.state, "/receipts", body).await?;
        Ok(())
    }

    async fn typing(&self, id: &ClientId, typing: NewTyping) -> Result<(), ApiError> {
        let session = self.device(id).await?;
        let body = json!({ "session": session, "from": typing.from.as_str(),
            "state": typing.state.as_str(), "group": typing.group.as_ref().map(|g| g.as_str()) });
        let _: Value = world(&self.state, "/typing", body).await?;
        Ok(())
    }

    async fn presence(
        &self,
        id: &ClientId,
        from: PhoneNumber,
        available: bool,
    ) -> Result<(), ApiError> {
        let session = self.device(id).await?;
        let body = json!({ "session": session, "from": from.as_str(), "available": available });
        let _: Value = world(&self.state, "/presence", body).await?;
        Ok(())
    }

    async fn call(&self, id: &ClientId, call: NewCall) -> Result<String, ApiError> {
        let session = self.device(id).await?;
        let body = json!({ "session": session, "from": call.from.as_str(), "video": call.video,
            "group": call.group.as_ref().map(|g| g.as_str()) });
        let placed: Value = world(&self.state, "/calls", body).await?;
        placed["callId"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| ApiError::bad_gateway("the test network named no call"))
    }

    async fn end_call(&self, id: &ClientId, end: CallEnd) -> Result<(), ApiError> {
        let session = self.device(id).await?;
        let body = json!({ "session": session, "from": end.from.as_str(),
            "callId": end.call_id, "reason": end.reason });
        let _: Value = world(&self.state, "/calls/end", body).await?;
        Ok(())
    }

    async fn phone_label(&self, id: &ClientId, label: PhoneLabel) -> Result<(), ApiError> {
        let session = self.device(id).await?;
        let mut body = json!(label);
        body["session"] = json!(session);
        let _: Value = world(&self.state, "/labels", body).await?;
        Ok(())
    }

    async fn change_members(
        &self,
        id: &ClientId,
        jid: Jid,
        change: MembersChange,
    ) -> Result<SandboxGroupChanged, ApiError> {
        let session = self.device(id).await?;
        let participants: Vec<String> = change
            .participants
            .into_iter()
            .map(PhoneNumber::into_string)
            .collect();
        let body = json!({ "session": session, "jid": jid.as_str(), "by": change.by.as_str(),
            "action": change.action.as_str(), "participants": participants });
        world(&self.state, "/groups/participants", body).await
    }
}

/// Calls the world's control `path` with `body`; its refusal is the answer.
async fn world<T: DeserializeOwned>(
    state: &AppState,
    path: &str,
    body: Value,
) -> Result<T, ApiError> {
    let base = state
        .config
        .network_control_url
        .as_deref()
        .ok_or_else(|| ApiError::not_found("the test network has no control URL"))?;
    let url = format!("{}{path}", base.trim_end_matches('/'));
    // The test network is on loopback: never through a proxy of the
    // environment (which the gateway's own egress ignores as well).
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| ApiError::bad_gateway(format!("the test network's client: {e}")))?;
    let res = client
        .post(&url)
        .json(&body)
        .timeout(WORLD_TIMEOUT)
        .send()
        .await
        .map_err(|e| ApiError::bad_gateway(format!("the test network did not answer: {e}")))?;
    let status = res.status().as_u16();
    let answer: Value = res
        .json()
        .await
        .map_err(|e| ApiError::bad_gateway(format!("the test network's answer: {e}")))?;
    if status != 200 {
        let why = answer["error"].as_str().unwrap_or("refused").to_string();
        return Err(ApiError::new(status, why));
    }
    serde_json::from_value(answer)
        .map_err(|e| ApiError::bad_gateway(format!("the test network's answer: {e}")))
}

/// The session's device on the network, or 409 when it is not linked.
fn linked_device(row: &SessionRow) -> Result<SessionRef, ApiError> {
    SessionRef::from_jid(&row.jid).ok_or_else(|| ApiError::conflict("session not linked"))
}

/// The QR code the session shows now; 409 when it is not waiting for a scan.
async fn current_qr(state: &AppState, id: &ClientId) -> Result<String, ApiError> {
    match ask_owner(state, id, Command::Qr).await? {
        Reply::Qr { status, qr } if status == "qr" && !qr.is_empty() => Ok(qr),
        Reply::Qr { .. } => Err(ApiError::conflict("session not in state qr")),
        other => Err(unexpected(other)),
    }
}

/// Waits until the session says it is connected (as the sandbox answers after it is).
async fn connected(state: &AppState, id: &ClientId) -> Result<(), ApiError> {
    let until = tokio::time::Instant::now() + WORLD_TIMEOUT;
    loop {
        let row = known(state, id.as_str()).await?;
        if row.status == "connected" {
            return Ok(());
        }
        if tokio::time::Instant::now() >= until {
            return Err(ApiError::gateway_timeout(
                "the session did not come online after the phone linked it",
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether the gateway logs an event of a message into `chat`: never of a
/// status, a broadcast list's or a channel's, of a group's only while the
/// session takes group messages (`enable_group_ai`).
fn logs_event(chat: Option<&str>, takes_groups: bool, takes_statuses: bool) -> bool {
    let chat = chat.unwrap_or_default().trim();
    if chat == "status@broadcast" {
        return takes_statuses;
    }
    if chat.ends_with("@broadcast") || chat.ends_with("@newsletter") {
        return false;
    }
    takes_groups || !chat.ends_with("@g.us")
}

/// The session's last logged event.
async fn last_seq(state: &AppState, id: &ClientId) -> Result<u64, ApiError> {
    let mut after = 0;
    loop {
        let page = state
            .ports
            .db
            .events_after(id.as_str(), after, 1000)
            .await?;
        match page.last() {
            Some(last) => after = last.seq,
            None => return Ok(after),
        }
    }
}

/// Waits until the session logged an event of message `message_id` after
/// `after`, as the sandbox answers once the event is persisted.
async fn logged(
    state: &AppState,
    id: &ClientId,
    mut after: u64,
    message_id: &str,
) -> Result<(), ApiError> {
    let event_id = format!("msg_{id}_{message_id}");
    let needle = format!("\"{message_id}\"");
    let until = tokio::time::Instant::now() + LOGGED_WAIT;
    loop {
        // Its own event, by id; else an event that names it (an update of
        // another message may be logged under that message's id).
        if state.ports.db.event_logged(&event_id).await? {
            return Ok(());
        }
        let later = state.ports.db.events_after(id.as_str(), after, 1000).await;
        for event in later.unwrap_or_default() {
            after = event.seq;
            if String::from_utf8_lossy(&event.body).contains(&needle) {
                return Ok(());
            }
        }
        if tokio::time::Instant::now() >= until {
            // As the sandbox answers a message whose event could not be
            // written (a full log, a full disk): the session did not take
            // it, and the network delivers it again.
            tracing::warn!(client_id = %id, message_id, "the session logged no event of the message in time");
            return Err(ApiError::unavailable(format!(
                "the session logged no event of message {message_id} within {} s: it did not take it (the network delivers it again)",
                LOGGED_WAIT.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
