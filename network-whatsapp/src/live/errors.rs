//! The library's failures as the port's errors, and the JIDs the port hands
//! in parsed for the library.
use std::fmt::Display;

use whatsapp_rust::{Client, Jid};

use parley_network::{NetworkError, QueryError};

/// A JID the port handed in (`…@s.whatsapp.net`, `…@lid`, `…@g.us`).
pub fn jid(raw: &str) -> Result<Jid, NetworkError> {
    raw.parse::<Jid>()
        .ok()
        .filter(|j| !j.user.is_empty())
        .ok_or_else(|| NetworkError::Rejected(format!("invalid JID {raw:?}")))
}

/// Refuses an operation while the session is not online and linked.
pub fn ready(client: &Client) -> Result<(), NetworkError> {
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
    if !client.is_connected() {
        NetworkError::Unreachable(format!("{what}: {e}"))
    } else {
        NetworkError::Rejected(format!("{what}: {e}"))
    }
}

/// A failed contact or group query; the network's "not found" and "not
/// allowed" codes (404, 403/401) keep their meaning.
pub fn query_failed(client: &Client, what: &str, e: impl Display) -> QueryError {
    let text = e.to_string();
    let lower = text.to_ascii_lowercase();
    if lower.contains("404") || lower.contains("item-not-found") || lower.contains("not found") {
        QueryError::NotFound(format!("{what}: {text}"))
    } else if lower.contains("403")
        || lower.contains("forbidden")
        || lower.contains("not-authorized")
    {
        QueryError::NotAllowed(format!("{what}: {text}"))
    } else {
        QueryError::Network(failed(client, what, text))
    }
}
