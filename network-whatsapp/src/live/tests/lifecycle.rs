//! Library events (built with the library's own builders) to port events.
use chrono::Duration;
use whatsapp_rust::Jid;
use whatsapp_rust::types::events::{
    Connected, Disconnected, Event, LoggedOut, PairSuccess, PairingQrCode, StreamReplaced,
    TemporaryBan,
};
use whatsapp_rust::wacore::net::DisconnectReason as WireReason;
use whatsapp_rust::wacore::types::events::{
    ConnectFailureReason, OfflineSyncCompleted, TempBanReason,
};

use crate::live::lifecycle;
use parley_network::{DisconnectReason, Identity, NetworkEvent};

fn me() -> Option<Identity> {
    Some(Identity {
        jid: parley_network::Jid::parse("4915100000001:7@s.whatsapp.net").expect("jid"),
        lid: "100000000000001".into(),
        push_name: "Parley".into(),
    })
}

#[test]
fn each_qr_code_becomes_a_qr_event() {
    for code in ["2@first,key,adv", "2@second,key,adv"] {
        let event = Event::PairingQrCode(
            PairingQrCode::builder()
                .code(code.to_string())
                .timeout(std::time::Duration::from_secs(20))
                .build(),
        );
        assert_eq!(
            lifecycle(&event, me),
            Some(NetworkEvent::Qr { code: code.into() })
        );
    }
}

#[test]
fn pair_success_names_the_new_identity() {
    let id: Jid = "4915100000001:7@s.whatsapp.net".parse().expect("jid");
    let lid: Jid = "100000000000001:7@lid".parse().expect("lid");
    let event = Event::PairSuccess(
        PairSuccess::builder()
            .id(id)
            .lid(lid)
            .business_name(String::new())
            .platform("android".into())
            .build(),
    );
    assert_eq!(
        lifecycle(&event, me),
        Some(NetworkEvent::Paired(Identity {
            jid: parley_network::Jid::parse("4915100000001:7@s.whatsapp.net").expect("jid"),
            lid: "100000000000001".into(),
            push_name: "Parley".into(),
        }))
    );
}

#[test]
fn online_is_connected_with_the_stored_identity_and_needs_one() {
    let event = Event::Connected(Connected::builder().build());
    assert_eq!(
        lifecycle(&event, me),
        Some(NetworkEvent::Connected(me().expect("identity")))
    );
    assert_eq!(lifecycle(&event, || None), None);
}

#[test]
fn endings_keep_their_reason() {
    let cases = [
        (
            Event::LoggedOut(
                LoggedOut::builder()
                    .on_connect(false)
                    .reason(ConnectFailureReason::LoggedOut)
                    .build(),
            ),
            DisconnectReason::LoggedOut,
        ),
        (
            Event::StreamReplaced(StreamReplaced::builder().build()),
            DisconnectReason::StreamReplaced,
        ),
        (
            Event::TemporaryBan(
                TemporaryBan::builder()
                    .code(TempBanReason::BlockedByUsers)
                    .expire(Duration::hours(24))
                    .build(),
            ),
            DisconnectReason::TemporaryBan,
        ),
        (
            Event::Disconnected(
                Disconnected::builder()
                    .reason(WireReason::StreamEnded)
                    .build(),
            ),
            DisconnectReason::ConnectionLost,
        ),
    ];
    for (event, reason) in cases {
        assert_eq!(
            lifecycle(&event, || panic!("an ending needs no identity")),
            Some(NetworkEvent::Disconnected(reason))
        );
    }
    assert!(DisconnectReason::LoggedOut.is_terminal());
    assert!(DisconnectReason::TemporaryBan.is_terminal());
}

#[test]
fn other_events_are_no_connection_change() {
    let event = Event::OfflineSyncCompleted(OfflineSyncCompleted::builder().count(3).build());
    assert_eq!(lifecycle(&event, me), None);
}
