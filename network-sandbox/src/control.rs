//! The network side of the `/sandbox/*` routes: what the simulated phone and the
//! test harness do to a session (link, enter a code, unlink, faults).
use std::sync::Arc;

use crate::store::groups::{ADMIN, MEMBER, SandboxGroup, SandboxMember};
use crate::store::{PhonePatch, SandboxDevice};
use chrono::Utc;
use parley_contract::command::{Outcome, Reply};
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::SandboxGroupCreated;

use super::live::{Live, Phase, State};
use super::notices::Ring;
use super::{PAIR_CODE_TTL, SandboxNetwork, codes, identity_of};
use crate::ops::SandboxOp;
use parley_model::inbound::CallPhase;
use parley_network::{
    ClientId, DisconnectReason, HISTORY_CHUNK, Jid, NetworkControl, NetworkEvent, PhoneNumber,
};

/// Faults armed in the database and used up by later operations.
const ARMED_FAULTS: [&str; 6] = [
    "send",
    "pair-code",
    "logout",
    "lookup",
    "receipt",
    "privacy-token",
];

/// The fault that acts at once.
const DROP: &str = "drop";

#[async_trait::async_trait]
impl NetworkControl for SandboxNetwork {
    async fn control(&self, client_id: &ClientId, request: serde_json::Value) -> Outcome {
        let op = SandboxOp::read(request)?;
        SandboxNetwork::control(self, client_id.as_str(), op).await
    }
}

impl SandboxNetwork {
    /// Executes a sandbox operation on `client_id`'s live connection in this
    /// process, with the statuses of the sandbox contract.
    pub async fn control(&self, client_id: &str, op: SandboxOp) -> Outcome {
        match op {
            SandboxOp::Link { phone, name, qr } => {
                self.link(client_id, phone.as_str(), &name, qr.as_deref())
                    .await
            }
            SandboxOp::EnterCode { code } => self.enter_code(client_id, &code).await,
            SandboxOp::Unlink => self.unlink(client_id).await,
            SandboxOp::Fault { op, count } => self.fault(client_id, &op, count).await,
            SandboxOp::Message(message) => self.deliver_message(client_id, *message).await,
            SandboxOp::CreateGroup {
                subject,
                participants,
                admins,
            } => {
                let digits = |all: Vec<PhoneNumber>| -> Vec<String> {
                    all.into_iter().map(PhoneNumber::into_string).collect()
                };
                let (participants, admins) = (digits(participants), digits(admins));
                self.create_group(client_id, &subject, &participants, &admins)
                    .await
            }
            SandboxOp::GroupSetting { jid, setting, by } => {
                self.change_setting(client_id, &jid, setting, by).await
            }
            SandboxOp::GroupMembers {
                jid,
                by,
                action,
                participants,
            } => {
                self.change_members(client_id, &jid, &by, action, &participants)
                    .await
            }
            SandboxOp::Receipt {
                from,
                status,
                message_ids,
                group,
            } => {
                self.receipt(client_id, &from, status, message_ids, group.as_ref())
                    .await
            }
            SandboxOp::Presence { from, available } => {
                self.presence(client_id, &from, available).await
            }
            SandboxOp::Label(label) => self.phone_label(client_id, label).await,
            SandboxOp::Typing { from, state, group } => {
                self.typing(client_id, &from, state, group.as_ref()).await
            }
            SandboxOp::Call {
                from,
                call_id,
                video,
                group,
            } => {
                let ring = Ring {
                    call_id,
                    phase: CallPhase::Offer,
                    video,
                    group,
                };
                self.call(client_id, &from, ring).await
            }
            SandboxOp::CallEnd {
                from,
                call_id,
                reason,
            } => {
                let ring = Ring {
                    call_id,
                    phase: CallPhase::Ended { reason },
                    video: false,
                    group: None,
                };
                self.call(client_id, &from, ring).await
            }
        }
    }

    /// The phone scans the session's current QR code (`qr`, when given, must be it).
    async fn link(&self, client_id: &str, phone: &str, name: &str, qr: Option<&str>) -> Outcome {
        let live = self.pairing(client_id)?;
        let mut state = live.state().await;
        let Phase::Pairing { qr: current, .. } = &state.phase else {
            return Err(not_pairing());
        };
        if qr.is_some_and(|qr| qr != current) {
            return Err(ApiError::bad_request("qr is not the current QR code"));
        }
        self.complete_link(&live, &mut state, phone, name).await
    }

    /// The phone enters the pairing code the session asked for. A session
    /// that is not pairing waits for no code: the code is wrong or expired
    /// (400, as the spec has it).
    async fn enter_code(&self, client_id: &str, code: &str) -> Outcome {
        let no_code =
            || ApiError::bad_request("wrong or expired code: the session is not waiting for one");
        let live = self.live(client_id).ok_or_else(no_code)?;
        let mut state = live.state().await;
        if !matches!(state.phase, Phase::Pairing { .. }) {
            return Err(no_code());
        }
        let code = codes::normalize_pair_code(code);
        let phone = self
            .store()
            .take_pair_code(client_id, &code, PAIR_CODE_TTL)
            .await?
            .ok_or_else(|| ApiError::bad_request("wrong or expired code"))?;
        self.complete_link(&live, &mut state, &phone, "").await
    }

    /// Writes the device record of `phone` under the connection's fence, stops
    /// pairing and tells the session it is paired and connected.
    async fn complete_link(
        &self,
        live: &Live,
        state: &mut State,
        phone: &str,
        name: &str,
    ) -> Outcome {
        let db = self.store();
        let registered = db.upsert_phone(phone, PhonePatch::default()).await?;
        let device = db.next_device_number(phone).await?;
        let push_name = if name.is_empty() {
            registered.name
        } else {
            name.to_string()
        };
        let record = SandboxDevice {
            client_id: live.client_id.clone(),
            phone: phone.to_string(),
            device,
            jid: format!("{phone}:{device}@s.whatsapp.net"),
            lid: registered.lid,
            push_name,
            fence: live.fence,
            linked_at: Utc::now(),
        };
        let identity = identity_of(&record)
            .ok_or_else(|| ApiError::internal("sandbox link", "a malformed device JID"))?;
        if !db.put_sandbox_device(&record).await? {
            return Err(ApiError::conflict("a newer connection owns this session"));
        }
        if let Some(qr) = state.link() {
            self.clear_qr(&live.client_id, &qr).await;
        }
        state.emit(NetworkEvent::Paired(identity.clone())).await;
        state.emit(NetworkEvent::Connected(identity)).await;
        // The phone sends the new device its chats, its contacts' names, its labels.
        let past = self.past_of(&record).await;
        for chunk in past.messages.chunks(HISTORY_CHUNK) {
            state.emit(NetworkEvent::History(chunk.to_vec())).await;
        }
        if !past.names.is_empty() {
            state.emit(NetworkEvent::ContactNames(past.names)).await;
        }
        for label in past.labels {
            state.emit(NetworkEvent::Message(Box::new(label))).await;
        }
        tracing::info!(client_id = %live.client_id, jid = %record.jid, "sandbox: linked");
        Ok(Reply::Linked {
            jid: record.jid,
            lid: record.lid,
        })
    }

    /// The phone removes the linked device: the session gets "logged out".
    async fn unlink(&self, client_id: &str) -> Outcome {
        let removed = self.store().delete_sandbox_device(client_id).await?;
        let live = self.live(client_id);
        let linked = match &live {
            Some(live) => matches!(live.state().await.phase, Phase::Linked),
            None => false,
        };
        if !removed && !linked {
            return Err(ApiError::conflict("session is not linked"));
        }
        if let Some(live) = live {
            self.end(&live, Some(DisconnectReason::LoggedOut)).await;
        }
        Ok(Reply::Done)
    }

    /// Arms a fault, or drops the connection now for `drop`.
    async fn fault(&self, client_id: &str, op: &str, count: u32) -> Outcome {
        if op == DROP {
            let live = self
                .live(client_id)
                .ok_or_else(|| ApiError::conflict("session has no live connection to drop"))?;
            self.end(&live, Some(DisconnectReason::ConnectionLost))
                .await;
            return Ok(Reply::Done);
        }
        if !ARMED_FAULTS.contains(&op) {
            return Err(ApiError::bad_request(format!(
                "unknown fault op {op:?}: one of send, pair-code, logout, lookup, receipt, privacy-token, drop"
            )));
        }
        self.suspects().suspect(client_id);
        self.store().arm_fault(client_id, op, count).await?;
        Ok(Reply::Done)
    }

    /// A group with the session's phone and `participants` (registered with
    /// defaults when unknown); `admins` among them (or the session's phone)
    /// are admins, the session's phone is a plain member unless listed.
    async fn create_group(
        &self,
        client_id: &str,
        subject: &str,
        participants: &[String],
        admins: &[String],
    ) -> Outcome {
        let db = self.store();
        let me = self.linked_phone(client_id).await?;
        let mut phones = vec![me.clone()];
        for p in participants {
            if !phones.contains(p) {
                phones.push(p.clone());
            }
        }
        if let Some(stranger) = admins.iter().find(|a| !phones.contains(a)) {
            return Err(ApiError::bad_request(format!(
                "admin {stranger} is not a participant"
            )));
        }
        let mut members = Vec::with_capacity(phones.len());
        for phone in phones {
            db.upsert_phone(&phone, PhonePatch::default()).await?;
            let role = if admins.contains(&phone) {
                ADMIN
            } else {
                MEMBER
            };
            members.push(SandboxMember {
                phone,
                role: role.into(),
            });
        }
        let group = SandboxGroup {
            jid: codes::group_jid(),
            subject: subject.to_string(),
            owner_phone: admins.first().cloned().unwrap_or_default(),
            invite_code: codes::invite_code(),
            created_at: Utc::now(),
            members,
            settings: Default::default(),
        };
        db.create_sandbox_group(&group).await?;
        Ok(group_answer(SandboxGroupCreated {
            jid: group.jid,
            subject: group.subject,
        }))
    }

    /// The phone the session is linked as (409 while it is not linked).
    pub(super) async fn linked_phone(&self, client_id: &str) -> Result<String, ApiError> {
        Ok(self
            .store()
            .sandbox_device(client_id)
            .await?
            .ok_or_else(|| ApiError::conflict("session is not linked"))?
            .phone)
    }

    /// The group `jid` with the session's phone in it, and that phone (404
    /// for another group, 409 while the session is not linked).
    pub(super) async fn session_group(
        &self,
        client_id: &str,
        jid: &Jid,
    ) -> Result<(SandboxGroup, String), ApiError> {
        let me = self.linked_phone(client_id).await?;
        let group = self
            .store()
            .sandbox_group(jid.as_str())
            .await?
            .filter(|g| g.member(&me).is_some())
            .ok_or_else(|| ApiError::not_found("no such group with the session's phone in it"))?;
        Ok((group, me))
    }

    /// The session's live connection, which must be pairing (checked again under
    /// its lock by the caller).
    fn pairing(&self, client_id: &str) -> Result<Arc<Live>, ApiError> {
        self.live(client_id).ok_or_else(not_pairing)
    }
}

fn not_pairing() -> ApiError {
    ApiError::conflict("session is not waiting for a QR scan or code")
}

/// A group control's answer, read back by its route.
fn group_answer(group: SandboxGroupCreated) -> Reply {
    Reply::Controlled {
        answer: serde_json::json!(group),
    }
}
