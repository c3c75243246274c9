//! The contract every network adapter passes: one suite of the port's
//! behaviours, run by each adapter's tests against the adapter and the network
//! on its other side (the sandbox against its own simulation; the whatsapp
//! adapter against the wire-level test network). A [`Counterpart`] plays that
//! other side: the phone that scans and unlinks, and a contact who writes.
//!
//! Built with the `contract` feature, for tests only.
mod forward_proxy;
mod proxied;

use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::mpsc;

use crate::{
    ClientId, Connection, ContactName, DisconnectReason, Identity, Jid, Network, NetworkError,
    NetworkEvent, Outgoing, PhoneNumber, PictureLookup, SessionContext,
};
use parley_contract::wire::sandbox::{SandboxHistory, SandboxPastLabel, SandboxPastMessage};
use parley_model::inbound::{Content, InboundMessage, LabelChange, LabelNotice};
use parley_model::outgoing::Content as OutgoingContent;

pub use forward_proxy::ForwardProxy;
pub use proxied::a_sessions_proxy_carries_its_connection;

/// One of the suite's phone numbers.
fn phone(digits: &str) -> PhoneNumber {
    PhoneNumber::from_digits(digits).expect("a phone number")
}

/// How long the suite waits for any one event.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// A message the network carried from the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    /// The chat JID it went to.
    pub to: String,
    pub body: String,
    pub message_id: String,
}

/// A profile picture, as its owner sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Avatar {
    None,
    /// Set, but shown to no one else (privacy).
    Hidden,
    /// An image's bytes.
    Image(Vec<u8>),
    /// An image shown only to the accounts its owner wrote to: they hold the
    /// privacy token the owner's client issued them.
    ForContacts(Vec<u8>),
}

/// The network's other side, as the suite drives it.
#[async_trait]
pub trait Counterpart: Send + Sync {
    /// The phone `phone` (digits) scans the QR code `code` that `client_id`
    /// shows, and so links the session.
    async fn scan(&self, client_id: &ClientId, code: &str, phone: &str) -> Result<(), String>;
    /// The pairing code `code` that `client_id` asked for is typed into the
    /// phone `phone`, and so links the session.
    async fn enter_code(&self, client_id: &ClientId, code: &str, phone: &str)
    -> Result<(), String>;
    /// The contact `from` (phone digits) writes `text` to the session.
    async fn write(&self, client_id: &ClientId, from: &str, text: &str) -> Result<(), String>;
    /// The text message `message_id` that the network carried from the
    /// session, once it reached the other side; waits up to [`DEADLINE`]
    /// (`None` when it did not arrive).
    async fn carried(
        &self,
        client_id: &ClientId,
        message_id: &str,
    ) -> Result<Option<Carried>, String>;
    /// The linked phone removes the session's device.
    async fn unlink(&self, client_id: &ClientId) -> Result<(), String>;
    /// The network refuses the session's next `count` messages.
    async fn refuse_sends(&self, client_id: &ClientId, count: u32) -> Result<(), String>;
    /// The network refuses the session's next `count` 1:1 messages for want
    /// of a privacy token (error 463).
    async fn refuse_without_token(&self, client_id: &ClientId, count: u32) -> Result<(), String>;
    /// `phone` (registered on the network if it was not) shows `about` and
    /// `avatar` to others.
    async fn profile(&self, phone: &str, about: &str, avatar: Avatar) -> Result<(), String>;
    /// The phone `past.phone` holds the chats and labels `past` (checked,
    /// as the control route passes them on), which each device it links
    /// from now on learns.
    async fn history(&self, past: SandboxHistory) -> Result<(), String>;
    /// The name `phone`'s account gives itself (its push name).
    async fn name(&self, phone: &str, name: &str) -> Result<(), String>;
}

/// What the suite runs against; `client_id` names a session no other test uses.
pub struct Subject<'a> {
    pub network: &'a dyn Network,
    pub counterpart: &'a dyn Counterpart,
    pub client_id: ClientId,
}

/// The phone that links the session.
pub const PHONE: &str = "4915100000001";
/// The contact who writes to it.
pub const CONTACT: &str = "4915100000002";
/// A contact who hides its picture.
pub const SHY: &str = "4915100000003";
/// A number not registered on the network.
pub const STRANGER: &str = "4915100000099";

type Events = mpsc::Receiver<NetworkEvent>;

fn ctx(s: &Subject<'_>, fence: u64) -> SessionContext {
    SessionContext {
        client_id: s.client_id.clone(),
        fence,
        pod_name: format!("contract-{fence}"),
        proxy: None,
    }
}

/// The next event that is not a QR rotation.
async fn next_beyond_qr(events: &mut Events, what: &str) -> NetworkEvent {
    loop {
        match tokio::time::timeout(DEADLINE, events.recv()).await {
            Ok(Some(NetworkEvent::Qr { .. })) => continue,
            Ok(Some(event)) => return event,
            Ok(None) => panic!("the event stream closed while waiting for {what}"),
            Err(_) => panic!("no {what} within {DEADLINE:?}"),
        }
    }
}

/// The next message a contact sent, past the other events (a receipt
/// names a message but is none).
async fn from_a_contact(events: &mut Events, what: &str) -> Box<InboundMessage> {
    loop {
        match next_beyond_qr(events, what).await {
            NetworkEvent::Message(m) if !m.from_me && !m.content.is_notice() => return m,
            _ => continue,
        }
    }
}

async fn first_qr(events: &mut Events) -> String {
    match tokio::time::timeout(DEADLINE, events.recv()).await {
        Ok(Some(NetworkEvent::Qr { code })) => code,
        other => panic!("expected a QR code first, got {other:?}"),
    }
}

/// The same linked device (the push name may arrive only after pairing,
/// with the account's settings).
fn assert_same_device(online: &Identity, paired: &Identity) {
    assert_eq!(
        (&online.jid, &online.lid),
        (&paired.jid, &paired.lid),
        "{online:?} is not {paired:?}"
    );
}

/// Connects a new session, scans its first QR and waits for it to be online.
async fn pair(s: &Subject<'_>, fence: u64) -> (Box<dyn Connection>, Events, Identity) {
    pair_with(s, ctx(s, fence)).await
}

/// [`pair`], connecting with `context`.
async fn pair_with(
    s: &Subject<'_>,
    context: SessionContext,
) -> (Box<dyn Connection>, Events, Identity) {
    let (conn, mut events) = s.network.connect(context).await.expect("connect");
    let code = first_qr(&mut events).await;
    assert!(!code.is_empty(), "an empty QR code");
    s.counterpart
        .scan(&s.client_id, &code, PHONE)
        .await
        .expect("the phone scans");
    let identity = linked(&mut events).await;
    (conn, events, identity)
}

/// Waits for the session to be paired as [`PHONE`]'s device, then online.
async fn linked(events: &mut Events) -> Identity {
    let identity = match next_beyond_qr(events, "the pairing").await {
        NetworkEvent::Paired(identity) => identity,
        other => panic!("expected Paired, got {other:?}"),
    };
    assert!(
        identity.jid.bare_user() == PHONE && identity.jid.is_phone(),
        "{identity:?}"
    );
    assert!(!identity.lid.is_empty(), "{identity:?}");
    match next_beyond_qr(events, "the connection").await {
        NetworkEvent::Connected(online) => assert_same_device(&online, &identity),
        other => panic!("expected Connected, got {other:?}"),
    }
    identity
}

/// A new session shows a QR code, pairs when the phone scans it, and comes
/// back online as the same device after a reconnect, without a new scan.
pub async fn pairs_by_qr_and_reconnects_without_a_scan(s: Subject<'_>) {
    let (conn, _events, identity) = pair(&s, 1).await;
    conn.close().await;
    reconnects_as(&s, &identity, "a QR").await;
}

/// The chats the linking phone holds reach the new device once it is
/// paired, as history: every message of them, oldest first, with its id,
/// direction, author, time and text or file (its caption, type and a
/// download of its bytes), in the chat with the contact (its LID
/// known, its message named with the name the contact gave itself), and
/// that name with the contact's LID and phone (first with the LID alone
/// when the phone's names come before the chunk that pairs them);
/// the phone's labels and the chats they are on come as label notices of
/// the first app-state sync; messages that come live later still come as
/// messages.
pub async fn the_phones_past_arrives_after_linking(s: Subject<'_>) {
    let at = |minutes: i64| chrono::Utc::now() - chrono::Duration::minutes(minutes);
    let past = |id: &str, from_me: bool, body: &str, when: chrono::DateTime<chrono::Utc>| {
        SandboxPastMessage {
            chat: format!("{CONTACT}@s.whatsapp.net"),
            from_me,
            from: None,
            kind: Some("text".into()),
            body: body.into(),
            at: Some(when.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
            message_id: Some(id.into()),
            ..SandboxPastMessage::default()
        }
    };
    let (first, between, second) = (at(90), at(75), at(60));
    let receipt = b"\x89PNG\r\n\x1a\n a receipt".to_vec();
    let picture = SandboxPastMessage {
        kind: Some("image".into()),
        data: Some(base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            &receipt,
        )),
        mime_type: Some("image/png".into()),
        ..past("3EB0C0FFEE000000000003", false, "the receipt", between)
    };
    s.counterpart
        .name(CONTACT, "Ann Lee")
        .await
        .expect("the contact's name is set");
    let paid = SandboxPastLabel {
        label_id: "3".into(),
        name: "Paid".into(),
        color: 2,
        chats: vec![format!("{CONTACT}@s.whatsapp.net")],
    };
    s.counterpart
        .history(SandboxHistory {
            phone: PHONE.into(),
            messages: vec![
                past("3EB0C0FFEE000000000002", true, "the reply", second),
                past("3EB0C0FFEE000000000001", false, "the question", first),
                picture,
            ],
            labels: vec![paid],
        })
        .await
        .expect("the phone's past is set");
    // The phone sends it once the device is paired: before or after the
    // device is online again on its new login.
    let (conn, mut events) = s.network.connect(ctx(&s, 1)).await.expect("connect");
    let code = first_qr(&mut events).await;
    s.counterpart
        .scan(&s.client_id, &code, PHONE)
        .await
        .expect("the phone scans");
    let (mut identity, mut online, mut names) = (None, false, Vec::new());
    let (mut history, mut labels) = (Vec::new(), Vec::new());
    let with_phone = |names: &[ContactName]| names.iter().any(|n| !n.phone.is_empty());
    while !online || history.len() < 3 || !with_phone(&names) || labels.len() < 2 {
        match next_beyond_qr(&mut events, "the pairing, the history, names and labels").await {
            NetworkEvent::Paired(paired) => identity = Some(paired),
            NetworkEvent::Connected(_) => online = true,
            NetworkEvent::History(messages) => {
                assert!(identity.is_some(), "a history before the pairing");
                // Each chunk oldest first; a phone may send the newest first.
                assert!(messages.is_sorted_by_key(|m| m.timestamp), "{messages:?}");
                history.extend(messages);
            }
            NetworkEvent::ContactNames(named) => {
                assert!(identity.is_some(), "names before the pairing");
                names.extend(named);
            }
            NetworkEvent::Message(m) => match m.content {
                Content::Label(label) => labels.push(label),
                _ if !m.content.is_notice() => panic!("a message before the history: {m:?}"),
                _ => continue,
            },
            _ => continue,
        }
    }
    let identity = identity.expect("paired");
    history.sort_by_key(|m| m.timestamp);
    let ids: Vec<&str> = history.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "3EB0C0FFEE000000000001",
            "3EB0C0FFEE000000000003",
            "3EB0C0FFEE000000000002"
        ]
    );
    let (question, file, reply) = (&history[0], &history[1], &history[2]);
    past_file_is(file, &receipt, "the receipt", between);
    assert_eq!(file.chat, question.chat, "one chat: {history:?}");
    assert_eq!(
        (question.from_me, reply.from_me),
        (false, true),
        "{history:?}"
    );
    for (m, body, when) in [
        (question, "the question", first),
        (reply, "the reply", second),
    ] {
        assert_eq!(m.content, Content::Text { body: body.into() }, "{m:?}");
        assert!(
            (m.timestamp - when).num_seconds().abs() <= 1,
            "{m:?} not at {when}"
        );
        assert_eq!(m.chat, question.chat, "one chat: {history:?}");
        assert!(!m.chat_lid.is_empty(), "the contact's LID: {m:?}");
        assert!(!m.is_group(), "{m:?}");
    }
    assert_eq!(
        reply.sender.bare_user(),
        identity.jid.bare_user(),
        "{reply:?}"
    );
    assert_eq!(
        question.push_name, "Ann Lee",
        "the contact's name: {question:?}"
    );
    assert_ne!(
        question.sender.bare_user(),
        identity.jid.bare_user(),
        "{question:?}"
    );
    let named = ContactName {
        lid: question.chat_lid.clone(),
        phone: CONTACT.into(),
        name: "Ann Lee".into(),
    };
    let by_lid = ContactName {
        phone: String::new(),
        ..named.clone()
    };
    // Whole once, after the LID alone at most once.
    assert_eq!(names.last(), Some(&named), "{names:?}");
    assert!(
        names.len() == 1 || names == [by_lid, named.clone()],
        "{names:?}"
    );
    let on_chat = LabelChange::Chat {
        chat: Jid::parse(&format!("{}@lid", question.chat_lid)).expect("a LID JID"),
        labeled: true,
    };
    for change in [
        LabelChange::Saved {
            name: "Paid".into(),
            color: 2,
        },
        on_chat,
    ] {
        let notice = LabelNotice {
            label_id: "3".into(),
            change,
            from_full_sync: true,
        };
        assert!(labels.contains(&notice), "{notice:?} in {labels:?}");
    }
    s.counterpart
        .write(&s.client_id, CONTACT, "and now live")
        .await
        .expect("the contact writes");
    let live = from_a_contact(&mut events, "the live message").await;
    assert_eq!(
        live.content,
        Content::Text {
            body: "and now live".into()
        }
    );
    conn.close().await;
}

/// `m` is a contact's image of the past, sent at `when` with `caption`,
/// whose download names `bytes` (their length and SHA-256).
fn past_file_is(
    m: &InboundMessage,
    bytes: &[u8],
    caption: &str,
    when: chrono::DateTime<chrono::Utc>,
) {
    use sha2::Digest;
    let Content::Media {
        kind,
        info,
        download,
    } = &m.content
    else {
        panic!("a file of the past: {m:?}");
    };
    assert_eq!(*kind, parley_model::media::MediaKind::Image, "{m:?}");
    assert_eq!(
        (info.caption.as_str(), info.mime_type.as_str()),
        (caption, "image/png"),
        "{m:?}"
    );
    assert!(!m.from_me, "{m:?}");
    assert!(
        (m.timestamp - when).num_seconds().abs() <= 1,
        "{m:?} not at {when}"
    );
    let sha = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        sha2::Sha256::digest(bytes),
    );
    assert_eq!(
        (download.file_length, download.file_sha256.as_str()),
        (bytes.len() as u64, sha.as_str()),
        "{download:?}"
    );
    assert!(
        !download.direct_path.is_empty() && !download.media_key.is_empty(),
        "{download:?}"
    );
}

/// A new session asked for a pairing code pairs when the code is typed into
/// the phone, and comes back online after a reconnect without another code.
pub async fn pairs_by_code_and_reconnects_without_one(s: Subject<'_>) {
    let (conn, mut events) = s.network.connect(ctx(&s, 1)).await.expect("connect");
    first_qr(&mut events).await;
    let code = conn
        .pair_phone(&phone(PHONE))
        .await
        .expect("a pairing code");
    let plain: String = code.chars().filter(char::is_ascii_alphanumeric).collect();
    assert_eq!(plain.len(), 8, "an 8-character code: {code:?}");
    s.counterpart
        .enter_code(&s.client_id, &code, PHONE)
        .await
        .expect("the code is typed into the phone");
    let identity = linked(&mut events).await;
    conn.close().await;
    reconnects_as(&s, &identity, "a code").await;
}

/// The session connects again and comes online as `identity`'s device,
/// without `another_pairing` (a QR, a code).
async fn reconnects_as(s: &Subject<'_>, identity: &Identity, another_pairing: &str) {
    let (again, mut events) = s.network.connect(ctx(s, 2)).await.expect("reconnect");
    match tokio::time::timeout(DEADLINE, events.recv()).await {
        Ok(Some(NetworkEvent::Connected(online))) => assert_same_device(&online, identity),
        other => panic!("expected Connected without {another_pairing}, got {other:?}"),
    }
    again.close().await;
}

/// A text goes out with the id the network gave it, and a contact's text
/// comes in as a message event.
pub async fn texts_go_out_and_come_in(s: Subject<'_>) {
    let (conn, mut events, _) = pair(&s, 1).await;
    let to = Jid::phone(&phone(CONTACT));
    let sent = conn
        .send(Outgoing {
            to: to.clone(),
            content: OutgoingContent::Text {
                body: "hello from the gateway".into(),
            },
            quoted_id: None,
            mentions: vec![],
            status: None,
        })
        .await
        .expect("send");
    assert_eq!(sent.to, to);
    let carried = s
        .counterpart
        .carried(&s.client_id, sent.message_id.as_str())
        .await
        .expect("carried")
        .unwrap_or_else(|| panic!("{sent:?} did not reach the contact within {DEADLINE:?}"));
    assert_eq!(carried.body, "hello from the gateway");
    assert_eq!(carried.message_id, sent.message_id.as_str());

    s.counterpart
        .write(&s.client_id, CONTACT, "hello from a contact")
        .await
        .expect("the contact writes");
    let message = from_a_contact(&mut events, "the contact's message").await;
    assert_eq!(
        message.content,
        Content::Text {
            body: "hello from a contact".into()
        }
    );
    // A direct chat: the contact is the chat and the sender, known by a LID.
    assert!(!message.chat_lid.is_empty(), "{message:?}");
    assert!(message.chat.is_lid(), "{message:?}");
    assert_eq!(message.chat.user(), message.chat_lid, "{message:?}");
    assert_eq!(message.sender, message.chat, "{message:?}");
    conn.close().await;
}

/// A text to `to`.
fn text_to(to: Jid, body: &str) -> Outgoing {
    Outgoing {
        to,
        content: OutgoingContent::Text { body: body.into() },
        quoted_id: None,
        mentions: vec![],
        status: None,
    }
}

/// After a refusal, a text `body` to the contact goes out and reaches it;
/// then the connection closes.
async fn the_next_one_goes(s: &Subject<'_>, conn: Box<dyn Connection>, body: &str) {
    let sent = conn
        .send(text_to(Jid::phone(&phone(CONTACT)), body))
        .await
        .expect("the next send");
    let carried = s
        .counterpart
        .carried(&s.client_id, sent.message_id.as_str())
        .await
        .expect("carried")
        .unwrap_or_else(|| panic!("{sent:?} did not reach the contact within {DEADLINE:?}"));
    assert_eq!(carried.body, body);
    conn.close().await;
}

/// A message the network refuses is an error of the send, not a message
/// sent: the network answers each send, and the send waits for the answer.
/// The next one goes out again.
pub async fn a_refused_send_is_an_error(s: Subject<'_>) {
    let (conn, _events, _) = pair(&s, 1).await;
    let text = |body: &str| text_to(Jid::phone(&phone(CONTACT)), body);
    s.counterpart
        .refuse_sends(&s.client_id, 1)
        .await
        .expect("refuse the next send");
    match conn.send(text("refused")).await {
        Err(NetworkError::Rejected(why)) => assert!(!why.is_empty()),
        other => panic!("a refused send answered {other:?}"),
    }
    the_next_one_goes(&s, conn, "taken").await;
}

/// A 1:1 message the network refuses for want of a privacy token (error
/// 463) is an error naming the cause ([`crate::NO_PRIVACY_TOKEN`]); it
/// reaches no one, and the next one goes out.
pub async fn a_message_without_a_privacy_token_is_refused_naming_it(s: Subject<'_>) {
    let (conn, _events, _) = pair(&s, 1).await;
    let text = |body: &str| text_to(Jid::phone(&phone(CONTACT)), body);
    s.counterpart
        .refuse_without_token(&s.client_id, 1)
        .await
        .expect("refuse the next message for want of a token");
    match conn.send(text("hello, new customer")).await {
        Err(NetworkError::Rejected(why)) => assert_eq!(why, crate::NO_PRIVACY_TOKEN),
        other => panic!("a message without a token answered {other:?}"),
    }
    the_next_one_goes(&s, conn, "hello again").await;
}

/// A message to a group the session's account is not (or no longer) in is
/// refused, naming the cause ([`crate::NOT_A_MEMBER`]): the network relays
/// it to no one.
pub async fn a_send_to_a_group_left_is_refused(s: Subject<'_>) {
    let (conn, _events, _) = pair(&s, 1).await;
    let created = conn
        .create_group("Orders", &[Jid::phone(&phone(CONTACT))])
        .await
        .expect("create a group");
    let group = created.group.jid;
    let text = |body: &str| text_to(group.clone(), body);
    conn.send(text("welcome")).await.expect("a member writes");
    conn.leave_group(&group).await.expect("leave the group");
    match conn.send(text("still here?")).await {
        Err(NetworkError::Rejected(why)) => {
            assert!(why.contains(crate::NOT_A_MEMBER), "{why}")
        }
        other => panic!("a send to a group left answered {other:?}"),
    }
    conn.close().await;
}

/// When the phone removes the device, the session is logged out and the
/// device is gone: the next connect pairs anew. A paired device whose state
/// is forgotten right after its connection closed (`/disconnect`) pairs anew
/// too: nothing the closed connection still flushes brings it back.
pub async fn unlinking_logs_out_and_forgetting_pairs_anew(s: Subject<'_>) {
    let (conn, mut events, _) = pair(&s, 1).await;
    s.counterpart
        .unlink(&s.client_id)
        .await
        .expect("the phone unlinks");
    match next_beyond_qr(&mut events, "the logout").await {
        NetworkEvent::Disconnected(reason) => assert_eq!(reason, DisconnectReason::LoggedOut),
        other => panic!("expected Disconnected(LoggedOut), got {other:?}"),
    }
    conn.close().await;
    let (conn, mut events) = s.network.connect(ctx(&s, 2)).await.expect("connect");
    let code = first_qr(&mut events).await;
    assert!(!code.is_empty(), "a logged-out session pairs anew");
    conn.close().await;

    let (conn, _events, _) = pair(&s, 3).await;
    conn.close().await;
    s.network.forget(&s.client_id).await.expect("forget");
    let (conn, mut events) = s.network.connect(ctx(&s, 4)).await.expect("connect");
    let code = first_qr(&mut events).await;
    assert!(!code.is_empty(), "a forgotten session pairs anew");
    conn.close().await;
    s.network.forget(&s.client_id).await.expect("forget");
}

/// A small image, distinct per `n` (PNG signature, then `n`).
fn image(n: u8) -> Vec<u8> {
    let mut data = b"\x89PNG\r\n\x1a\n".to_vec();
    data.extend(std::iter::repeat_n(n, 64));
    data
}

/// The picture a lookup found; panics on anything else.
async fn found(conn: &dyn Connection, jid: &Jid) -> crate::Picture {
    match conn.profile_picture(jid, true).await {
        Ok(PictureLookup::Found(picture)) => picture,
        other => panic!("expected {jid}'s picture, got {other:?}"),
    }
}

/// A registered number is found with its LID and an unknown one is not; a
/// contact's about text and picture id come back; its picture downloads as
/// set, by phone and by LID; a new picture gets a new id; a hidden one gives
/// no link.
pub async fn looks_up_numbers_people_and_pictures(s: Subject<'_>) {
    let (conn, _events, _) = pair(&s, 1).await;
    let (first, second) = (image(1), image(2));
    let c = s.counterpart;
    c.profile(CONTACT, "Out of office", Avatar::Image(first.clone()))
        .await
        .expect("the contact sets a picture");
    c.profile(SHY, "", Avatar::Hidden)
        .await
        .expect("a contact hides its picture");

    let known = conn
        .check_number(&phone(CONTACT))
        .await
        .expect("number check");
    assert!(known.registered, "{known:?}");
    let lid = known.lid.clone().expect("a registered number's LID");
    let unknown = conn
        .check_number(&phone(STRANGER))
        .await
        .expect("number check");
    assert!(!unknown.registered, "{unknown:?}");

    let jid = Jid::phone(&phone(CONTACT));
    let info = conn
        .user_info(&jid)
        .await
        .expect("user info")
        .expect("a registered contact has info");
    assert_eq!(info.status.as_deref(), Some("Out of office"), "{info:?}");
    assert_eq!(info.lid.as_deref(), Some(lid.as_str()), "{info:?}");
    let picture = found(conn.as_ref(), &jid).await;
    assert_eq!(info.picture_id.as_deref(), Some(picture.id.as_str()));
    let file = conn.download_picture(&picture).await.expect("download");
    assert_eq!(file.data.as_ref(), first.as_slice());

    c.profile(CONTACT, "Out of office", Avatar::Image(second.clone()))
        .await
        .expect("the contact changes its picture");
    let by_lid = Jid::new(&lid, "lid").expect("a LID JID");
    let changed = found(conn.as_ref(), &by_lid).await;
    assert_ne!(changed.id, picture.id, "a new picture, a new id");
    let file = conn.download_picture(&changed).await.expect("download");
    assert_eq!(file.data.as_ref(), second.as_slice());

    let hidden = conn
        .profile_picture(&Jid::phone(&phone(SHY)), true)
        .await
        .expect("a hidden picture is an answer, not an error");
    assert!(
        matches!(hidden, PictureLookup::Hidden | PictureLookup::NoPicture),
        "{hidden:?}"
    );
    conn.close().await;
}

/// A picture its owner shows to its contacts only is hidden from the
/// session until the owner writes to it: the owner's client then issues
/// the session's account a privacy token, which the lookup carries (on the
/// real network the token comes a moment after the message, so the lookup
/// is tried again until the deadline). The user lookup names the
/// picture's id on the same terms.
pub async fn a_picture_for_contacts_shows_once_its_owner_wrote(s: Subject<'_>) {
    let (conn, mut events, _) = pair(&s, 1).await;
    let face = image(3);
    s.counterpart
        .profile(CONTACT, "", Avatar::ForContacts(face.clone()))
        .await
        .expect("the contact shows its picture to its contacts");
    let jid = Jid::phone(&phone(CONTACT));
    let before = conn
        .profile_picture(&jid, true)
        .await
        .expect("a hidden picture is an answer, not an error");
    assert!(
        matches!(before, PictureLookup::Hidden | PictureLookup::NoPicture),
        "before the contact wrote: {before:?}"
    );
    let info = conn.user_info(&jid).await.expect("user info");
    let id = info.and_then(|i| i.picture_id);
    assert_eq!(id, None, "the picture's id before the contact wrote");
    s.counterpart
        .write(&s.client_id, CONTACT, "hello, it's me")
        .await
        .expect("the contact writes");
    from_a_contact(&mut events, "the contact's message").await;
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let picture = loop {
        match conn.profile_picture(&jid, true).await {
            Ok(PictureLookup::Found(picture)) => break picture,
            other if tokio::time::Instant::now() >= deadline => {
                panic!("the contact's picture stayed hidden: {other:?}")
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    let file = conn.download_picture(&picture).await.expect("download");
    assert_eq!(file.data.as_ref(), face.as_slice());
    let info = conn.user_info(&jid).await.expect("user info");
    let id = info.and_then(|i| i.picture_id);
    assert_eq!(
        id.as_deref(),
        Some(picture.id.as_str()),
        "the id once it wrote"
    );
    conn.close().await;
}
