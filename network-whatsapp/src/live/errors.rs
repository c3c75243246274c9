//! The library's failures as the port's errors, and the JIDs the port hands
//! in parsed for the library. Failures are told apart by the library's typed
//! errors and the IQ error codes the network answers with, never by their
//! text: 404 is "not found", 401 and 403 "not allowed", a lost connection is
//! "unreachable" and anything else the network said is a refusal.
use std::fmt::Display;
use std::time::Duration;

use whatsapp_rust::wacore_binary::JidExt;
use whatsapp_rust::{Client, ContactError, GroupError, IqError, Jid, MexError};

use parley_network::{NetworkError, QueryError};

/// A JID the port handed in (`…@s.whatsapp.net`, `…@lid`, `…@g.us`).
pub fn jid(raw: &str) -> Result<Jid, NetworkError> {
    raw.parse::<Jid>()
        .ok()
        .filter(|j| !j.user.is_empty())
        .ok_or_else(|| NetworkError::Rejected(format!("invalid JID {raw:?}")))
}

/// The port's JID of one the library names.
pub fn port_jid(j: &Jid) -> Result<parley_network::Jid, NetworkError> {
    parley_network::Jid::parse(&j.to_string())
        .ok_or_else(|| NetworkError::Rejected(format!("the network named an invalid JID {j}")))
}

/// How long an operation waits for the connection to come back.
const RECONNECT_WAIT: Duration = Duration::from_secs(5);

/// Refuses an operation while the session is not online and linked.
/// A connection that is coming back is waited for, a while: the library
/// reconnects by itself (after a pairing the server closes the first socket
/// and the device logs in again; a dropped socket comes back too), and an
/// operation that arrives in that gap, before the socket is up or while
/// the device is logging in on it, should not fail for it.
pub async fn ready(client: &Client) -> Result<(), NetworkError> {
    let up = |c: &Client| c.is_connected() && c.is_logged_in();
    if !up(client) {
        // Ends early once the device is logged in and synced its critical
        // app state; logged in is enough to go on.
        let _ = client.wait_for_connected(RECONNECT_WAIT).await;
    }
    if !client.is_connected() {
        return Err(NetworkError::Unreachable(
            "not connected to the network".into(),
        ));
    }
    if !client.is_logged_in() {
        return Err(NetworkError::NotPaired);
    }
    Ok(())
}

/// A failed operation: the network said no, or the connection went away.
pub fn failed(client: &Client, what: &str, e: impl Display) -> NetworkError {
    failure(client.is_connected(), what, e)
}

fn failure(connected: bool, what: &str, e: impl Display) -> NetworkError {
    if connected {
        NetworkError::Rejected(format!("{what}: {e}"))
    } else {
        NetworkError::Unreachable(format!("{what}: {e}"))
    }
}

/// A failed send (`what`: a message, a reaction). To a group, the network
/// refuses someone not (or no longer) in it: its group query answers 403
/// (404: a group that is gone), and the port names that cause. (A 403 on
/// the message's own ack: `ServerAcks::confirmed`.)
pub fn send_failed(
    client: &Client,
    what: &str,
    to: &Jid,
    e: whatsapp_rust::SendError,
) -> NetworkError {
    let refused = matches!(
        &e,
        whatsapp_rust::SendError::Iq(IqError::ServerError {
            code: 403 | 404,
            ..
        })
    );
    if to.is_group() && refused {
        return NetworkError::Rejected(format!("{what}: {}", parley_network::NOT_A_MEMBER));
    }
    failed(client, what, e)
}

/// The IQ failure inside one of the library's errors, when there is one.
pub trait IqCause: Display {
    fn iq(&self) -> Option<&IqError>;
}

impl IqCause for IqError {
    fn iq(&self) -> Option<&IqError> {
        Some(self)
    }
}

impl IqCause for ContactError {
    fn iq(&self) -> Option<&IqError> {
        match self {
            ContactError::Iq(e) => Some(e),
            _ => None,
        }
    }
}

impl IqCause for GroupError {
    fn iq(&self) -> Option<&IqError> {
        match self {
            GroupError::Iq(e) | GroupError::Mex(MexError::Request(e)) => Some(e),
            GroupError::Internal(e) => e.downcast_ref::<IqError>(),
            _ => None,
        }
    }
}

impl IqCause for anyhow::Error {
    fn iq(&self) -> Option<&IqError> {
        self.downcast_ref::<IqError>()
    }
}

/// What an IQ failure means to the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IqMeaning {
    NotFound,
    NotAllowed,
    /// The connection went away or never answered.
    Unreachable,
    /// The network answered no, for another reason.
    Refused,
}

pub fn meaning(e: &IqError) -> IqMeaning {
    match e {
        IqError::ServerError { code: 404, .. } => IqMeaning::NotFound,
        IqError::ServerError {
            code: 401 | 403, ..
        } => IqMeaning::NotAllowed,
        IqError::Timeout
        | IqError::NotConnected
        | IqError::Socket(_)
        | IqError::Disconnected(_)
        | IqError::InternalChannelClosed => IqMeaning::Unreachable,
        _ => IqMeaning::Refused,
    }
}

/// A failed contact or group query.
pub fn query_failed(client: &Client, what: &str, e: impl IqCause) -> QueryError {
    query_error(client.is_connected(), what, &e)
}

/// A failed request about one group: the network answers 403 to someone not
/// (or no longer) in it, which the port calls not found, as it does a group
/// that does not exist (401 stays "not allowed": not an admin).
pub fn group_failed(client: &Client, what: &str, e: impl IqCause) -> QueryError {
    group_error(client.is_connected(), what, &e)
}

fn group_error(connected: bool, what: &str, e: &impl IqCause) -> QueryError {
    match e.iq() {
        Some(IqError::ServerError { code: 403, .. }) => {
            QueryError::NotFound(format!("{what}: not a member of the group"))
        }
        _ => query_error(connected, what, e),
    }
}

fn query_error(connected: bool, what: &str, e: &impl IqCause) -> QueryError {
    let message = format!("{what}: {e}");
    match e.iq().map(meaning) {
        Some(IqMeaning::NotFound) => QueryError::NotFound(message),
        Some(IqMeaning::NotAllowed) => QueryError::NotAllowed(message),
        Some(IqMeaning::Unreachable) => QueryError::Network(NetworkError::Unreachable(message)),
        Some(IqMeaning::Refused) | None => QueryError::Network(failure(connected, what, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16) -> IqError {
        IqError::ServerError {
            code,
            text: "item-not-found".into(),
            error_type: None,
            backoff: None,
        }
    }

    #[test]
    fn a_group_one_is_not_in_is_not_found_and_not_an_admin_is_not_allowed() {
        let gone = group_error(true, "group", &GroupError::Iq(server(403)));
        assert!(matches!(gone, QueryError::NotFound(_)), "{gone:?}");
        let plain = group_error(true, "group members", &GroupError::Iq(server(401)));
        assert!(matches!(plain, QueryError::NotAllowed(_)), "{plain:?}");
        let anyone = query_error(true, "user info", &GroupError::Iq(server(403)));
        assert!(matches!(anyone, QueryError::NotAllowed(_)), "{anyone:?}");
    }

    #[test]
    fn iq_codes_keep_their_meaning_through_every_library_error() {
        let not_found = query_error(true, "group", &GroupError::Iq(server(404)));
        assert!(
            matches!(not_found, QueryError::NotFound(_)),
            "{not_found:?}"
        );
        let mex = query_error(
            true,
            "group",
            &GroupError::Mex(MexError::Request(server(403))),
        );
        assert!(matches!(mex, QueryError::NotAllowed(_)), "{mex:?}");
        let wrapped = GroupError::Internal(anyhow::Error::new(server(401)));
        let wrapped = query_error(true, "group", &wrapped);
        assert!(matches!(wrapped, QueryError::NotAllowed(_)), "{wrapped:?}");
        let contact = query_error(true, "user info", &ContactError::Iq(server(404)));
        assert!(matches!(contact, QueryError::NotFound(_)), "{contact:?}");
    }

    #[test]
    fn a_lost_connection_is_unreachable_and_other_answers_are_refusals() {
        let timeout = query_error(true, "groups", &GroupError::Iq(IqError::Timeout));
        assert!(
            matches!(timeout, QueryError::Network(NetworkError::Unreachable(_))),
            "{timeout:?}"
        );
        let gone = query_error(true, "groups", &ContactError::Iq(IqError::NotConnected));
        assert!(
            matches!(gone, QueryError::Network(NetworkError::Unreachable(_))),
            "{gone:?}"
        );
        // A code that is neither 404 nor 401/403, even with "404" in its text.
        let refused = IqError::ServerError {
            code: 500,
            text: "404 not found".into(),
            error_type: None,
            backoff: None,
        };
        let refused = query_error(true, "groups", &GroupError::Iq(refused));
        assert!(
            matches!(refused, QueryError::Network(NetworkError::Rejected(_))),
            "{refused:?}"
        );
        let invalid = GroupError::InvalidRequest("empty invite code".into());
        let invalid = query_error(false, "invite link", &invalid);
        assert!(
            matches!(invalid, QueryError::Network(NetworkError::Unreachable(_))),
            "offline: {invalid:?}"
        );
    }
}
