//! The network port's contract suite, run against the sandbox: the simulated
//! phone and contacts play the network's other side.
use crate::injected::{InjectedContent, InjectedMessage};
use crate::store::PhonePatch;
use crate::store::entities::phones::{CONTACTS, EVERYONE};
use async_trait::async_trait;
use parley_contract::wire::sandbox::SandboxHistory;
use parley_network::ClientId;
use parley_network::contract::{self, Avatar, Carried, Counterpart, Subject};

use super::*;

/// The sandbox's phone and contacts, through its controls and its outbox.
struct SandboxSide<'a>(&'a Fixture);

fn refused(outcome: parley_contract::command::Outcome) -> Result<(), String> {
    outcome.map(|_| ()).map_err(|e| e.to_string())
}

#[async_trait]
impl Counterpart for SandboxSide<'_> {
    async fn scan(&self, client_id: &ClientId, code: &str, phone: &str) -> Result<(), String> {
        let phone = PhoneNumber::from_digits(phone).ok_or("not a phone number")?;
        let op = SandboxOp::Link {
            phone,
            name: "Contract".into(),
            qr: Some(code.into()),
        };
        refused(self.0.network.control(client_id.as_str(), op).await)
    }

    async fn enter_code(
        &self,
        client_id: &ClientId,
        code: &str,
        _phone: &str,
    ) -> Result<(), String> {
        // The sandbox's phone is the number the code was asked for.
        let op = SandboxOp::EnterCode { code: code.into() };
        refused(self.0.network.control(client_id.as_str(), op).await)
    }

    async fn write(&self, client_id: &ClientId, from: &str, text: &str) -> Result<(), String> {
        let message = InjectedMessage {
            from: from.into(),
            chat: None,
            message_id: None,
            quoted_message_id: None,
            mentions: vec![],
            is_forwarded: false,
            content: InjectedContent::Text { body: text.into() },
        };
        let op = SandboxOp::Message(Box::new(message));
        refused(self.0.network.control(client_id.as_str(), op).await)
    }

    async fn carried(
        &self,
        client_id: &ClientId,
        message_id: &str,
    ) -> Result<Option<Carried>, String> {
        // The sandbox carries a send before it returns: the outbox has it or never will.
        let entries = self
            .0
            .db
            .outbox(client_id.as_str(), None, None, 1000)
            .await
            .map_err(|e| e.to_string())?;
        Ok(entries
            .into_iter()
            .filter(|e| e.kind == "text" && e.message_id == message_id)
            .map(|e| Carried {
                to: e.to_jid,
                body: e.payload["body"].as_str().unwrap_or_default().to_string(),
                message_id: e.message_id,
            })
            .next())
    }

    async fn unlink(&self, client_id: &ClientId) -> Result<(), String> {
        refused(
            self.0
                .network
                .control(client_id.as_str(), SandboxOp::Unlink)
                .await,
        )
    }

    async fn refuse_sends(&self, client_id: &ClientId, count: u32) -> Result<(), String> {
        let fault = SandboxOp::Fault {
            op: "send".into(),
            count,
        };
        refused(self.0.network.control(client_id.as_str(), fault).await)
    }

    async fn refuse_without_token(&self, client_id: &ClientId, count: u32) -> Result<(), String> {
        let fault = SandboxOp::Fault {
            op: "privacy-token".into(),
            count,
        };
        refused(self.0.network.control(client_id.as_str(), fault).await)
    }

    async fn profile(&self, phone: &str, about: &str, avatar: Avatar) -> Result<(), String> {
        use base64::Engine;
        let encode = |data| base64::engine::general_purpose::STANDARD.encode(data);
        let (avatar, privacy) = match avatar {
            Avatar::None => ("none".to_string(), EVERYONE),
            Avatar::Hidden => ("hidden".to_string(), EVERYONE),
            Avatar::Image(data) => (encode(data), EVERYONE),
            Avatar::ForContacts(data) => (encode(data), CONTACTS),
        };
        let patch = PhonePatch {
            about: Some(about.into()),
            avatar: Some(avatar),
            avatar_privacy: Some(privacy.into()),
            ..PhonePatch::default()
        };
        self.patch(phone, patch).await
    }

    async fn history(&self, past: SandboxHistory) -> Result<(), String> {
        let db = &self.0.db;
        for phone in past.contacts().into_iter().chain([past.phone.as_str()]) {
            db.upsert_phone(phone, PhonePatch::default())
                .await
                .map_err(|e| e.to_string())?;
        }
        db.set_history(&past).await.map_err(|e| e.to_string())
    }

    async fn name(&self, phone: &str, name: &str) -> Result<(), String> {
        let patch = PhonePatch {
            name: Some(name.into()),
            ..PhonePatch::default()
        };
        self.patch(phone, patch).await
    }
}

impl SandboxSide<'_> {
    /// Registers or changes the phone `phone`.
    async fn patch(&self, phone: &str, patch: PhonePatch) -> Result<(), String> {
        self.0
            .db
            .upsert_phone(phone, patch)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

fn subject<'a>(f: &'a Fixture, side: &'a SandboxSide<'a>, client_id: &'a str) -> Subject<'a> {
    Subject {
        network: &f.network,
        counterpart: side,
        client_id: ClientId::parse(client_id).expect("a clientId"),
    }
}

#[tokio::test]
async fn contract_pairs_by_qr_and_reconnects_without_a_scan() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::pairs_by_qr_and_reconnects_without_a_scan(subject(&f, &side, "k1")).await;
}

#[tokio::test]
async fn contract_pairs_by_code_and_reconnects_without_one() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::pairs_by_code_and_reconnects_without_one(subject(&f, &side, "k4")).await;
}

#[tokio::test]
async fn contract_texts_go_out_and_come_in() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::texts_go_out_and_come_in(subject(&f, &side, "k2")).await;
}

#[tokio::test]
async fn contract_unlinking_logs_out_and_forgetting_pairs_anew() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::unlinking_logs_out_and_forgetting_pairs_anew(subject(&f, &side, "k3")).await;
}

#[tokio::test]
async fn contract_looks_up_numbers_people_and_pictures() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::looks_up_numbers_people_and_pictures(subject(&f, &side, "k5")).await;
}

#[tokio::test]
async fn contract_a_picture_for_contacts_shows_once_its_owner_wrote() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::a_picture_for_contacts_shows_once_its_owner_wrote(subject(&f, &side, "k12")).await;
}

#[tokio::test]
async fn contract_the_phones_past_arrives_after_linking() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::the_phones_past_arrives_after_linking(subject(&f, &side, "k11")).await;
}

#[tokio::test]
async fn contract_a_refused_send_is_an_error() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::a_refused_send_is_an_error(subject(&f, &side, "k6")).await;
}

#[tokio::test]
async fn contract_a_message_without_a_privacy_token_is_refused_naming_it() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::a_message_without_a_privacy_token_is_refused_naming_it(subject(&f, &side, "k10"))
        .await;
}

#[tokio::test]
async fn contract_a_send_to_a_group_left_is_refused() {
    let f = steady().await;
    let side = SandboxSide(&f);
    contract::a_send_to_a_group_left_is_refused(subject(&f, &side, "k7")).await;
}

#[tokio::test]
async fn contract_a_sessions_proxy_carries_its_connection() {
    // The simulated network is reached at the gateway's public URL: here a
    // listener that takes connections and says nothing.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { while listener.accept().await.is_ok() {} });
    let mut f = steady().await;
    f.network = f
        .network
        .with_picture_links(base, std::time::Duration::from_secs(60));
    let side = SandboxSide(&f);
    contract::a_sessions_proxy_carries_its_connection(subject(&f, &side, "k13")).await;
}
