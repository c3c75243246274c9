//! Poll sends: version by choice count, the random message secret, validation,
//! and a vote on the built poll decrypting with that secret.
use whatsapp_rust::wacore::poll::{compute_option_hash, encrypt_poll_vote_with_secret};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::convert::inbound::{VoteAddressing, VoteKey};
use crate::convert::outbound::{Context, PollRequest, poll, poll_with_secret};
use parley_model::inbound::Content;

use super::{CHAT, echo, mid, reply_context};

fn request(count: u32) -> PollRequest {
    PollRequest {
        name: "Lunch?".into(),
        options: vec!["Pizza".into(), "Sushi".into(), "Salad".into()],
        selectable_count: count,
        context: Context::default(),
    }
}

fn secret_of(msg: &wa::Message) -> Vec<u8> {
    msg.message_context_info
        .as_option()
        .and_then(|c| c.message_secret.clone())
        .expect("message secret")
}

#[test]
fn single_choice_is_v3_with_a_random_secret() {
    let (msg, secret) = poll(&request(1)).expect("build");
    assert!(msg.poll_creation_message.is_unset());
    let p = msg.poll_creation_message_v3.as_option().expect("v3");
    assert_eq!(p.name.as_deref(), Some("Lunch?"));
    let options: Vec<_> = p.options.iter().map(|o| o.option_name.as_deref()).collect();
    assert_eq!(options, [Some("Pizza"), Some("Sushi"), Some("Salad")]);
    assert_eq!(p.selectable_options_count, Some(1));
    assert_eq!(
        p.poll_content_type,
        Some(wa::message::PollContentType::TEXT)
    );
    assert_eq!(secret_of(&msg), secret.to_vec());
    assert_ne!(secret, [0; 32]);
    let (_, other) = poll(&request(1)).expect("build");
    assert_ne!(secret, other, "a fresh secret per poll");
}

#[test]
fn multiple_choice_is_v1_with_quote_and_mentions() {
    let mut req = request(2);
    req.context = reply_context();
    let msg = poll_with_secret(&req, [9; 32]).expect("build");
    assert!(msg.poll_creation_message_v3.is_unset());
    let p = msg.poll_creation_message.as_option().expect("v1");
    assert_eq!(p.selectable_options_count, Some(2));
    let ctx = p.context_info.as_option().expect("context");
    assert_eq!(ctx.stanza_id.as_deref(), Some("3EB0Q"));
    assert_eq!(ctx.mentioned_jid.len(), 2);
    assert_eq!(secret_of(&msg), vec![9; 32]);
    assert_eq!(
        echo(&msg, None).content,
        Content::Poll {
            name: "Lunch?".into(),
            options: vec!["Pizza".into(), "Sushi".into(), "Salad".into()],
            selectable_count: 2,
        }
    );
}

#[test]
fn invalid_polls_are_refused() {
    let with = |f: fn(&mut PollRequest)| {
        let mut r = request(1);
        f(&mut r);
        poll(&r)
    };
    assert!(with(|r| r.options.truncate(1)).is_err());
    assert!(with(|r| r.options = (0..13).map(|i| i.to_string()).collect()).is_err());
    assert!(with(|r| r.options[1] = "Pizza".into()).is_err());
    assert!(with(|r| r.options[1] = " ".into()).is_err());
    assert!(with(|r| r.name.clear()).is_err());
    assert!(with(|r| r.selectable_count = 0).is_err());
    assert!(with(|r| r.selectable_count = 4).is_err());
}

#[test]
fn a_vote_on_the_built_poll_decrypts_with_its_secret() {
    let (msg, secret) = poll(&request(2)).expect("build");
    let creator = "100000099999999@lid";
    let voter = CHAT;
    let chosen: Vec<Vec<u8>> = ["Salad", "Pizza"]
        .iter()
        .map(|o| compute_option_hash(o).to_vec())
        .collect();
    let (enc_payload, iv) =
        encrypt_poll_vote_with_secret(&chosen, &secret_of(&msg), "3EB0POLL", creator, voter)
            .expect("encrypt");
    let vote = wa::Message {
        poll_update_message: MessageField::some(wa::message::PollUpdateMessage {
            poll_creation_message_key: MessageField::some(wa::MessageKey {
                remote_jid: Some(creator.into()),
                from_me: Some(false),
                id: Some("3EB0POLL".into()),
                participant: None,
            }),
            vote: MessageField::some(wa::message::PollEncValue {
                enc_payload: Some(enc_payload),
                enc_iv: Some(iv.to_vec()),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let key = VoteKey {
        secret: secret.to_vec(),
        addressing: VoteAddressing {
            poll_creator: creator.into(),
            voter: voter.into(),
        },
        alternate: None,
    };
    assert_eq!(
        echo(&vote, Some(&key)).content,
        Content::Vote {
            poll_message_id: mid("3EB0POLL"),
            selected_hashes: vec![compute_option_hash("Salad"), compute_option_hash("Pizza")],
        }
    );
}
