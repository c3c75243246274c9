//! The event pump on a real (never connected) client over the device store:
//! library events in, port events out, in order; a poll vote decrypts with the
//! secret found in the store; the port's receiver closes when the run ends.
use std::sync::Arc;
use std::time::{Duration, Instant};

use parley_shared::db::StatePatch;

use chrono::{TimeZone, Utc};
use tokio::sync::{mpsc, watch};
use whatsapp_rust::store::traits::MsgSecretStore;
use whatsapp_rust::types::events::{
    BatchOrigin, Event, EventHandler, GroupUpdate, InboundMessage, LoggedOut, MessageBatch,
};
use whatsapp_rust::wacore::poll::{compute_option_hash, encrypt_poll_vote_with_secret};
use whatsapp_rust::wacore::stanza::groups::GroupNotificationAction;
use whatsapp_rust::wacore::types::events::ConnectFailureReason;
use whatsapp_rust::wacore::types::message::{MessageInfo, MessageSource};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::connect::sqlite;
use super::offline_bot;
use crate::live::authors::Authors;
use crate::live::inbound::{Forward, Pump};
use crate::live::server_acks::ServerAcks;
use crate::store::{FenceRejected, SeaOrmDeviceStore, fence_rejection};
use parley_model::inbound::{Content, GroupSetting};
use parley_network::{DisconnectReason, NetworkEvent};

const ME: &str = "4917000000009@s.whatsapp.net";
const PEER: &str = "4915100000001@s.whatsapp.net";
const POLL_ID: &str = "3EB0POLL";
const GROUP: &str = "120363000000000001@g.us";
const MEMBER: &str = "4915100000002@s.whatsapp.net";
const SECRET: [u8; 32] = [7; 32];

fn info(id: &str) -> Arc<MessageInfo> {
    Arc::new(MessageInfo {
        source: MessageSource {
            chat: PEER.parse().expect("jid"),
            sender: PEER.parse().expect("jid"),
            ..Default::default()
        },
        id: id.into(),
        push_name: "Ana".into(),
        timestamp: Utc.timestamp_opt(1_790_000_000, 0).single().expect("time"),
        ..Default::default()
    })
}

fn batch(message: wa::Message, id: &str) -> Event {
    batch_with(message, info(id))
}

fn batch_with(message: wa::Message, info: Arc<MessageInfo>) -> Event {
    let item = InboundMessage::builder()
        .message(Arc::new(message))
        .info(info)
        .build();
    Event::Messages(
        MessageBatch::builder()
            .messages(Arc::from(vec![item]))
            .origin(BatchOrigin::Live)
            .build(),
    )
}

/// A member's text in a group.
fn group_batch(id: &str) -> Event {
    let info = MessageInfo {
        source: MessageSource {
            chat: GROUP.parse().expect("jid"),
            sender: MEMBER.parse().expect("jid"),
            is_group: true,
            ..Default::default()
        },
        ..(*info(id)).clone()
    };
    let text = wa::Message {
        conversation: Some("hi all".into()),
        ..Default::default()
    };
    batch_with(text, Arc::new(info))
}

/// The peer's vote for `Soup` on this session's poll.
fn vote() -> wa::Message {
    let hashes = vec![compute_option_hash("Soup").to_vec()];
    let (enc_payload, iv) =
        encrypt_poll_vote_with_secret(&hashes, &SECRET, POLL_ID, ME, PEER).expect("encrypt");
    wa::Message {
        poll_update_message: MessageField::some(wa::message::PollUpdateMessage {
            poll_creation_message_key: MessageField::some(wa::MessageKey {
                remote_jid: Some(ME.into()),
                from_me: Some(false),
                id: Some(POLL_ID.into()),
                participant: None,
            }),
            vote: MessageField::some(wa::message::PollEncValue {
                enc_payload: Some(enc_payload),
                enc_iv: Some(iv.to_vec()),
            }),
            sender_timestamp_ms: Some(1_790_000_000_000),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A pump over an offline client of `store`, running: what feeds it library
/// events, what it sends the session, and the switch that ends its run.
struct Running {
    forward: Forward,
    events: mpsc::Receiver<NetworkEvent>,
    ended: watch::Sender<bool>,
    authors: Authors,
    task: tokio::task::JoinHandle<()>,
    /// Keeps the client alive.
    bot: whatsapp_rust::bot::Bot,
}

/// Session live1's store, holding the secret the library stored when the
/// session sent the poll to PEER.
async fn with_poll_secret() -> (parley_shared::db::Db, tempfile::TempDir, SeaOrmDeviceStore) {
    let (db, dir) = sqlite().await;
    let store = SeaOrmDeviceStore::new(db.clone(), "live1", 1).expect("store");
    store
        .put_msg_secret(PEER, ME, POLL_ID, &SECRET)
        .await
        .expect("secret");
    (db, dir, store)
}

async fn running(store: &SeaOrmDeviceStore) -> Running {
    let bot = offline_bot(store.clone()).await;
    let (forward, library_events) = Forward::new(ServerAcks::default());
    let (out, events) = mpsc::channel(16);
    let (ended, ended_rx) = watch::channel(false);
    let authors = Authors::stored(store.clone());
    let pump = Pump {
        client: bot.client(),
        store: store.clone(),
        out,
        authors: authors.clone(),
        unpaired: Default::default(),
    };
    let task = tokio::spawn(pump.run(library_events, ended_rx));
    Running {
        forward,
        events,
        ended,
        authors,
        task,
        bot,
    }
}

#[tokio::test]
async fn library_events_become_port_events_in_order_until_the_run_ends() {
    let (db, _dir, store) = with_poll_secret().await;
    let Running {
        forward,
        mut events,
        ended: ended_tx,
        authors,
        task,
        bot: _bot,
    } = running(&store).await;

    let text = wa::Message {
        conversation: Some("hello".into()),
        ..Default::default()
    };
    forward.handle_event(Arc::new(batch(text, "3EB0TEXT")));
    // Housekeeping (a sender-key distribution only) is no user activity.
    forward.handle_event(Arc::new(batch(
        wa::Message {
            sender_key_distribution_message: MessageField::some(Default::default()),
            ..Default::default()
        },
        "3EB0SKD",
    )));
    forward.handle_event(Arc::new(batch(vote(), "3EB0VOTE")));
    forward.handle_event(Arc::new(group_batch("3EB0GROUP")));
    // A group's settings, each a notice of its own; what the port has no
    // notice for (a request to join) is no port event.
    let member: whatsapp_rust::Jid = MEMBER.parse().expect("member jid");
    for (index, action) in [
        GroupNotificationAction::Subject {
            subject: "Team, renamed".into(),
            subject_owner: None,
            subject_time: None,
        },
        GroupNotificationAction::MembershipApprovalMode { enabled: true },
        GroupNotificationAction::Description {
            id: "D1".into(),
            description: None,
        },
        GroupNotificationAction::Announce,
        GroupNotificationAction::Unlocked,
        GroupNotificationAction::Ephemeral {
            expiration: 604_800,
            trigger: None,
        },
    ]
    .into_iter()
    .enumerate()
    {
        forward.handle_event(Arc::new(Event::GroupUpdate(
            GroupUpdate::builder()
                .group_jid(GROUP.parse().expect("group jid"))
                .notification_id("N1".to_string())
                .action_index(index as u32)
                .participant(member.clone())
                .timestamp(Utc::now())
                .is_lid_addressing_mode(true)
                .action(action)
                .build(),
        )));
    }
    ended_tx.send(true).expect("signal");

    let Some(NetworkEvent::Message(first)) = events.recv().await else {
        panic!("the text comes first");
    };
    assert_eq!(first.id, "3EB0TEXT");
    assert_eq!(first.chat, PEER);
    assert_eq!(
        first.content,
        Content::Text {
            body: "hello".into()
        }
    );
    let Some(NetworkEvent::Message(second)) = events.recv().await else {
        panic!("then the vote");
    };
    assert_eq!(
        second.content,
        Content::Vote {
            poll_message_id: parley_network::MessageId::new(POLL_ID).expect("an id"),
            selected_hashes: vec![compute_option_hash("Soup")],
        }
    );
    let Some(NetworkEvent::Message(third)) = events.recv().await else {
        panic!("then the group message");
    };
    assert_eq!(
        (third.id.as_str(), third.chat.as_str()),
        ("3EB0GROUP", GROUP)
    );
    assert_eq!(third.group_subject, None, "the worker keeps group subjects");
    assert_eq!(
        authors.of(GROUP, "3EB0GROUP").await.as_deref(),
        Some(MEMBER),
        "reactions and receipts to it will name its author"
    );
    assert_eq!(
        authors.of(PEER, "3EB0TEXT").await,
        None,
        "direct chats need no author"
    );
    // Written to the device store too: the session's next owner (a newer
    // fence, another worker) still knows the author.
    let deadline = Instant::now() + Duration::from_secs(10);
    while store
        .group_author(GROUP, "3EB0GROUP")
        .await
        .expect("read")
        .is_none()
    {
        assert!(
            Instant::now() < deadline,
            "the author never reached the store"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        db.fenced_update("live1", 2, StatePatch::default())
            .await
            .expect("claim")
    );
    let next_owner = Authors::stored(SeaOrmDeviceStore::new(db, "live1", 2).expect("store"));
    assert_eq!(
        next_owner.of(GROUP, "3EB0GROUP").await.as_deref(),
        Some(MEMBER)
    );
    assert_eq!(next_owner.of(GROUP, "3EB0OTHER").await, None);
    for (id, setting) in [
        ("N1-0", GroupSetting::Subject("Team, renamed".into())),
        ("N1-2", GroupSetting::Description(String::new())),
        ("N1-3", GroupSetting::Announce(true)),
        ("N1-4", GroupSetting::Locked(false)),
        ("N1-5", GroupSetting::Ephemeral(604_800)),
    ] {
        let Some(NetworkEvent::Message(update)) = events.recv().await else {
            panic!("then the group's {setting:?}");
        };
        assert_eq!(
            (
                update.id.as_str(),
                update.chat.as_str(),
                update.sender.as_str()
            ),
            (id, GROUP, MEMBER)
        );
        assert_eq!(update.content, Content::GroupUpdate(setting));
        assert!(!update.from_me, "a member's change");
    }
    // The run is over: the session's receiver closes.
    assert_eq!(events.recv().await, None);
    task.await.expect("pump");
}

/// A logged-out device's state is deleted before the session hears of the
/// logout, and nothing the library writes later brings it back: the next
/// connect pairs anew.
#[tokio::test]
async fn a_logout_deletes_the_device_state_before_the_session_hears_of_it() {
    let (db, _dir, store) = with_poll_secret().await;
    let Running {
        forward,
        mut events,
        ended: _ended,
        bot: _bot,
        ..
    } = running(&store).await;
    forward.handle_event(Arc::new(Event::LoggedOut(
        LoggedOut::builder()
            .on_connect(false)
            .reason(ConnectFailureReason::LoggedOut)
            .build(),
    )));
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), events.recv()).await,
        Ok(Some(NetworkEvent::Disconnected(
            DisconnectReason::LoggedOut
        )))
    );
    let fresh = SeaOrmDeviceStore::new(db, "live1", 1).expect("store");
    assert_eq!(
        fresh.get_msg_secret(PEER, ME, POLL_ID).await.expect("read"),
        None,
        "the secret went with the device"
    );
    let late = store
        .put_msg_secret(PEER, ME, "3EB0LATE", &SECRET)
        .await
        .expect_err("a late write is refused");
    assert_eq!(
        fence_rejection(&late),
        Some(&FenceRejected::LoggedOut {
            client_id: "live1".into()
        })
    );
    assert_eq!(
        fresh
            .get_msg_secret(PEER, ME, "3EB0LATE")
            .await
            .expect("read"),
        None
    );
}

/// The server's answers to sent messages go to the sends waiting for them
/// (a nack with its code), never to the session as events; answers of other
/// classes (receipts, notifications) are no send's.
#[tokio::test]
async fn server_answers_reach_the_waiting_sends_not_the_session() {
    use parley_network::NetworkError;
    use whatsapp_rust::types::events::ServerAck;
    let acks = ServerAcks::default();
    let (forward, library_events) = Forward::new(acks.clone());
    let answer = |id: &str, class: &str, error: Option<&str>| {
        let ack = ServerAck::builder()
            .id(id.to_string())
            .class(class.to_string())
            .maybe_error(error.map(str::to_string))
            .build();
        Arc::new(Event::ServerAck(ack))
    };
    forward.handle_event(answer("3EB0TAKEN", "message", None));
    forward.handle_event(answer("3EB0REFUSED", "message", Some("463")));
    forward.handle_event(answer("3EB0RECEIPT", "receipt", Some("500")));
    let short = Duration::from_millis(50);
    assert!(acks.confirmed("3EB0TAKEN", false, short).await.is_ok());
    match acks.confirmed("3EB0REFUSED", false, short).await {
        Err(NetworkError::Rejected(why)) => assert!(why.contains("463"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(
            acks.confirmed("3EB0RECEIPT", false, short).await,
            Err(NetworkError::Unreachable(_))
        ),
        "a receipt's answer confirms no send"
    );
    assert!(library_events.is_empty(), "no answer reaches the session");
}
