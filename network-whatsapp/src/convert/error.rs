//! Why a conversion failed: a request the network would refuse, or a received
//! message that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// A request field the network would refuse.
    #[error("invalid {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    /// A received message names an empty id or a malformed address.
    #[error("received {field} is malformed: {value:?}")]
    Malformed { field: &'static str, value: String },
    /// A poll vote arrived but the poll's message secret was not handed in.
    #[error("vote on poll {poll_id} needs the poll's message secret")]
    MissingVoteSecret { poll_id: String },
    /// A poll vote did not decrypt with the secret and addressing handed in.
    #[error("vote on poll {poll_id} does not decrypt: {reason}")]
    VoteDecrypt { poll_id: String, reason: String },
}

impl ConvertError {
    pub(super) fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        ConvertError::Invalid {
            field,
            reason: reason.into(),
        }
    }

    pub(super) fn malformed(field: &'static str, value: &str) -> Self {
        ConvertError::Malformed {
            field,
            value: value.into(),
        }
    }
}
