//! Polls: creations (v1, v2, v3 and the later single/multi-select variants) and
//! votes, decrypted with whatsapp-rust's own poll-vote functions to the SHA-256
//! of each chosen option.
//!
//! A vote is encrypted under the poll's 32-byte message secret and the creator's
//! and voter's JIDs (without device). The adapter asks [`vote_target`] which poll
//! a vote is for, looks the secret up (`MsgSecretStore`), and hands a [`VoteKey`]
//! to [`super::to_inbound`].
use whatsapp_rust::wacore::poll::{
    PollVoteAddressing, PollVoteCiphertext, decrypt_poll_vote_with_fallback,
};
use whatsapp_rust::waproto::whatsapp as wa;

use crate::convert::ConvertError;
use parley_model::inbound::Content;
use parley_network::MessageId;

/// What decrypts a vote.
#[derive(Clone, PartialEq, Eq)]
pub struct VoteKey {
    /// The poll's `messageContextInfo.messageSecret`.
    pub secret: Vec<u8>,
    /// Creator and voter as the vote was addressed.
    pub addressing: VoteAddressing,
    /// The same pair in the other namespace (LID instead of phone, or back),
    /// tried when the first does not decrypt.
    pub alternate: Option<VoteAddressing>,
}

impl std::fmt::Debug for VoteKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VoteKey")
            .field("secret", &"<redacted>")
            .field("addressing", &self.addressing)
            .field("alternate", &self.alternate)
            .finish()
    }
}

/// The JIDs a vote's encryption is bound to (device suffixes are ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoteAddressing {
    pub poll_creator: String,
    pub voter: String,
}

/// The poll a vote refers to, for looking up its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoteTarget {
    pub poll_id: String,
    /// The poll's creator: the voter itself when the poll key says `fromMe`
    /// (written in the voter's frame), else the key's participant (groups) or
    /// chat (direct chats).
    pub poll_creator: String,
}

/// Which poll `msg` votes on, `None` when it is no vote.
pub fn vote_target(msg: &wa::Message, voter: &str) -> Option<VoteTarget> {
    use whatsapp_rust::wacore::proto_helpers::MessageExt;
    let update = msg.get_base_message().poll_update_message.as_option()?;
    let key = update.poll_creation_message_key.as_option()?;
    let poll_id = key.id.clone().filter(|id| !id.is_empty())?;
    let poll_creator = if key.from_me.unwrap_or(false) {
        voter.to_string()
    } else {
        key.participant
            .clone()
            .filter(|p| !p.is_empty())
            .or_else(|| key.remote_jid.clone())?
    };
    Some(VoteTarget {
        poll_id,
        poll_creator: non_ad(&poll_creator),
    })
}

pub(super) fn creation(base: &wa::Message) -> Option<Content> {
    let poll = [
        &base.poll_creation_message,
        &base.poll_creation_message_v2,
        &base.poll_creation_message_v3,
        &base.poll_creation_message_v5,
        &base.poll_creation_message_v6,
    ]
    .into_iter()
    .find_map(|p| p.as_option())?;
    Some(Content::Poll {
        name: poll.name.clone().unwrap_or_default(),
        options: poll
            .options
            .iter()
            .filter_map(|o| o.option_name.clone())
            .collect(),
        // As the network carries it: 0 means any number of options.
        selectable_count: poll.selectable_options_count.unwrap_or(0),
    })
}

pub(super) fn vote(
    update: &wa::message::PollUpdateMessage,
    key: Option<&VoteKey>,
) -> Result<Content, ConvertError> {
    let poll_id = update
        .poll_creation_message_key
        .as_option()
        .and_then(|k| k.id.clone())
        .unwrap_or_default();
    let Some(key) = key else {
        return Err(ConvertError::MissingVoteSecret { poll_id });
    };
    let fail = |reason: String| ConvertError::VoteDecrypt {
        poll_id: poll_id.clone(),
        reason,
    };
    let enc = update
        .vote
        .as_option()
        .ok_or_else(|| fail("the update carries no vote".into()))?;
    let ciphertext = PollVoteCiphertext {
        enc_payload: enc.enc_payload.as_deref().unwrap_or_default(),
        enc_iv: enc.enc_iv.as_deref().unwrap_or_default(),
    };
    let primary = (
        non_ad(&key.addressing.poll_creator),
        non_ad(&key.addressing.voter),
    );
    let alternate = key
        .alternate
        .as_ref()
        .map(|a| (non_ad(&a.poll_creator), non_ad(&a.voter)));
    let hashes = decrypt_poll_vote_with_fallback(
        ciphertext,
        &key.secret,
        &poll_id,
        PollVoteAddressing {
            poll_creator_jid: &primary.0,
            voter_jid: &primary.1,
        },
        alternate
            .as_ref()
            .map(|(creator, voter)| PollVoteAddressing {
                poll_creator_jid: creator,
                voter_jid: voter,
            }),
    )
    .map_err(|e| fail(e.to_string()))?;
    let selected_hashes = hashes
        .iter()
        .map(|h| {
            <[u8; 32]>::try_from(h.as_slice())
                .map_err(|_| fail(format!("an option hash of {} bytes", h.len())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Content::Vote {
        poll_message_id: MessageId::new(poll_id.as_str())
            .ok_or_else(|| ConvertError::malformed("poll message id", &poll_id))?,
        selected_hashes,
    })
}

/// `jid` without its device suffix (`user:3@server` -> `user@server`).
fn non_ad(jid: &str) -> String {
    jid.parse::<whatsapp_rust::Jid>()
        .map(|j| j.to_non_ad_string())
        .unwrap_or_else(|_| jid.to_string())
}
