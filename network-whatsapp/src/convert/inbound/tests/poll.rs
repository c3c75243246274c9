//! Poll votes: encrypted with whatsapp-rust's own poll-vote functions, decrypted
//! by the conversion to the SHA-256 of each chosen option.
use whatsapp_rust::wacore::poll::{compute_option_hash, encrypt_poll_vote_with_secret};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::{PEER_LID, env, inbound_with, mid};
use crate::convert::ConvertError;
use crate::convert::inbound::{VoteAddressing, VoteKey, VoteTarget, to_inbound, vote_target};
use parley_model::inbound::Content;

const SECRET: [u8; 32] = [7; 32];
const POLL_ID: &str = "3EB0POLL";
const CREATOR_PN: &str = "4917000000009@s.whatsapp.net";
const VOTER_PN: &str = "4915100000001@s.whatsapp.net";
const CREATOR_LID: &str = "100000099999999@lid";
const VOTER_LID: &str = "100000012345678@lid";

/// A vote for `options` as the voter's client builds it, addressed `creator`/`voter`.
fn vote(options: &[&str], creator: &str, voter: &str) -> wa::Message {
    let hashes: Vec<Vec<u8>> = options
        .iter()
        .map(|o| compute_option_hash(o).to_vec())
        .collect();
    let (enc_payload, iv) =
        encrypt_poll_vote_with_secret(&hashes, &SECRET, POLL_ID, creator, voter).expect("encrypt");
    wa::Message {
        poll_update_message: MessageField::some(wa::message::PollUpdateMessage {
            poll_creation_message_key: MessageField::some(wa::MessageKey {
                remote_jid: Some(CREATOR_PN.into()),
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

fn addressing(creator: &str, voter: &str) -> VoteAddressing {
    VoteAddressing {
        poll_creator: creator.into(),
        voter: voter.into(),
    }
}

fn key(primary: VoteAddressing, alternate: Option<VoteAddressing>) -> VoteKey {
    VoteKey {
        secret: SECRET.to_vec(),
        addressing: primary,
        alternate,
    }
}

#[test]
fn a_vote_decrypts_to_the_chosen_option_hashes() {
    let msg = vote(&["Pizza", "Sushi"], CREATOR_PN, VOTER_PN);
    // Device suffixes in the handed-in JIDs do not matter.
    let k = key(
        addressing(
            "4917000000009:0@s.whatsapp.net",
            "4915100000001:5@s.whatsapp.net",
        ),
        None,
    );
    let got = inbound_with(&msg, Some(&k));
    assert_eq!(
        got.content,
        Content::Vote {
            poll_message_id: mid(POLL_ID),
            selected_hashes: vec![compute_option_hash("Pizza"), compute_option_hash("Sushi")],
        }
    );
    assert_eq!(got.id, "3EB0MSG", "the vote's own id");
}

#[test]
fn a_retracted_vote_has_no_hashes() {
    let msg = vote(&[], CREATOR_PN, VOTER_PN);
    let got = inbound_with(&msg, Some(&key(addressing(CREATOR_PN, VOTER_PN), None)));
    assert_eq!(
        got.content,
        Content::Vote {
            poll_message_id: mid(POLL_ID),
            selected_hashes: vec![],
        }
    );
}

#[test]
fn a_vote_addressed_in_the_other_namespace_decrypts_with_the_alternate() {
    let msg = vote(&["Sushi"], CREATOR_LID, VOTER_LID);
    let k = key(
        addressing(CREATOR_PN, VOTER_PN),
        Some(addressing(CREATOR_LID, VOTER_LID)),
    );
    assert_eq!(
        inbound_with(&msg, Some(&k)).content,
        Content::Vote {
            poll_message_id: mid(POLL_ID),
            selected_hashes: vec![compute_option_hash("Sushi")],
        }
    );
}

#[test]
fn a_vote_without_or_with_the_wrong_secret_is_an_error() {
    let msg = vote(&["Pizza"], CREATOR_PN, VOTER_PN);
    let e = env(PEER_LID, false);
    assert_eq!(
        to_inbound(&msg, &e, None),
        Err(ConvertError::MissingVoteSecret {
            poll_id: POLL_ID.into()
        })
    );
    let mut wrong = key(addressing(CREATOR_PN, VOTER_PN), None);
    wrong.secret = vec![8; 32];
    assert!(matches!(
        to_inbound(&msg, &e, Some(&wrong)),
        Err(ConvertError::VoteDecrypt { poll_id, .. }) if poll_id == POLL_ID
    ));
    let swapped = key(addressing(VOTER_PN, CREATOR_PN), None);
    assert!(matches!(
        to_inbound(&msg, &e, Some(&swapped)),
        Err(ConvertError::VoteDecrypt { .. })
    ));
}

#[test]
fn vote_target_names_the_poll_and_its_creator() {
    let direct = vote(&["Pizza"], CREATOR_PN, VOTER_PN);
    assert_eq!(
        vote_target(&direct, VOTER_PN),
        Some(VoteTarget {
            poll_id: POLL_ID.into(),
            poll_creator: CREATOR_PN.into(),
        })
    );

    let mut in_group = direct.clone();
    let mut own_poll = direct;
    if let Some(update) = in_group.poll_update_message.as_option_mut()
        && let Some(k) = update.poll_creation_message_key.as_option_mut()
    {
        k.remote_jid = Some("120363000000000001@g.us".into());
        k.participant = Some("100000099999999:3@lid".into());
    }
    if let Some(update) = own_poll.poll_update_message.as_option_mut()
        && let Some(k) = update.poll_creation_message_key.as_option_mut()
    {
        k.from_me = Some(true);
    }
    assert_eq!(
        vote_target(&in_group, VOTER_LID).map(|t| t.poll_creator),
        Some(CREATOR_LID.into()),
        "the participant, without device"
    );
    assert_eq!(
        vote_target(&own_poll, VOTER_PN).map(|t| t.poll_creator),
        Some(VOTER_PN.into()),
        "fromMe in the voter's frame: the voter made the poll"
    );
    let text = wa::Message {
        conversation: Some("no vote".into()),
        ..Default::default()
    };
    assert_eq!(vote_target(&text, VOTER_PN), None);
}
