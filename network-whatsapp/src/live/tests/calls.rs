//! Call signalling to port notices: an offer (or a group call's notice)
//! rings, a `<terminate>` ends the call, a call missed while offline ends
//! it too; the rest of the signalling is no news.
use chrono::Utc;
use whatsapp_rust::Jid;
use whatsapp_rust::types::call::{CallAction, MissedCall, MissedReason};

use crate::live::calls::{call_phase, missed_notice};
use parley_model::inbound::{CallPhase, Content};

fn caller() -> Jid {
    "100000000000009@lid".parse().expect("jid")
}

#[test]
fn offers_and_terminates_are_news_the_rest_is_not() {
    let terminate = CallAction::Terminate {
        call_id: "C1".into(),
        call_creator: caller(),
        reason: Some("timeout".into()),
        duration: None,
        audio_duration: None,
    };
    let ended = CallPhase::Ended {
        reason: Some("timeout".into()),
    };
    assert_eq!(call_phase(&terminate).map(|(p, _, _)| p), Some(ended));
    let notice = CallAction::OfferNotice {
        call_id: "C1".into(),
        call_creator: caller(),
        is_video: true,
        is_group: true,
    };
    let (phase, video, group) = call_phase(&notice).expect("an offer");
    assert_eq!((phase, video, group), (CallPhase::Offer, true, None));
    let latency = CallAction::RelayLatency {
        call_id: "C1".into(),
        call_creator: caller(),
    };
    assert!(call_phase(&latency).is_none());
}

#[test]
fn a_call_missed_while_offline_ends_it() {
    let from: Jid = "100000000000009:3@lid".parse().expect("jid");
    let missed = MissedCall::new(from.clone(), "C2".into(), Utc::now(), MissedReason::Offline);
    let phone = Some("4917600000009".to_string());
    let m = missed_notice(&missed, "100000000000009".into(), phone.clone()).expect("a notice");
    assert_eq!(m.id.as_str(), "C2");
    assert_eq!(m.chat.as_str(), "100000000000009@lid");
    assert_eq!(m.chat_lid, "100000000000009");
    assert_eq!(m.sender_phone, phone);
    let Content::Call(call) = &m.content else {
        panic!("not a call: {:?}", m.content);
    };
    let ended = CallPhase::Ended {
        reason: Some("offline".into()),
    };
    assert_eq!(call.phase, ended);
    assert_eq!(call.call.peer.as_str(), "100000000000009:3@lid");
    assert_eq!(call.call.creator.as_str(), "100000000000009@lid");
    // A call the caller gave up on is its `<terminate>`'s.
    let remote = MissedCall::new(from, "C3".into(), Utc::now(), MissedReason::Remote);
    assert!(missed_notice(&remote, String::new(), None).is_none());
}
