//! Session rows: settings written by the API, state written by the owning worker
//! under its fencing token.
use chrono::{DateTime, Utc};

use parley_contract::pacing::Pacing;

/// One session as stored. `secret_hash` is the hex SHA-256 of the session secret;
/// `webhook_token` is kept so it can be sent, and no route ever returns it.
#[derive(Clone, PartialEq)]
pub struct SessionRow {
    pub client_id: String,
    pub status: String,
    pub pod_name: String,
    pub jid: String,
    pub lid: String,
    pub webhook_url: String,
    pub webhook_token: String,
    pub poll_lookup_url: String,
    pub org_id: String,
    pub secret_hash: Option<String>,
    pub enable_group_ai: bool,
    /// The events it turned on beside its messages (`/set-events`).
    pub events: Vec<String>,
    /// The event types its webhook takes (`/set-webhook-types`); empty: every type.
    pub webhook_types: Vec<String>,
    /// The presence it set (`/set-presence`): `available`, `unavailable`,
    /// or empty when it never set one.
    pub presence: String,
    /// Whether it rejects the calls that ring it (`/set-call-rejection`).
    pub reject_calls: bool,
    /// The text it sends a rejected call's caller; empty: none.
    pub call_reply: String,
    /// The session's own network proxy URL (credentials included: never
    /// shown; see `parley_network::Proxy::shown`); empty: none.
    pub proxy_url: String,
    /// The session's send limit; `None` when its sends are not paced.
    pub pacing: Option<Pacing>,
    pub connected: bool,
    pub logged_in: bool,
    pub reconnects: i64,
    pub connected_at: Option<DateTime<Utc>>,
    pub last_disconnect: String,
    /// Whether the session should be running (false after a network-side logout).
    pub desired: bool,
    /// The fencing token of the newest owner that wrote state.
    pub fence: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
parley_contract::debug_redacted!(SessionRow { client_id, status, pod_name, jid, lid, webhook_url, poll_lookup_url, org_id, enable_group_ai, events, webhook_types, presence, reject_calls, call_reply, pacing, connected, logged_in, reconnects, connected_at, last_disconnect, desired, fence, created_at, updated_at; webhook_token, secret_hash, proxy_url });

/// What `/start` knows about a new session.
#[derive(Clone, Default)]
pub struct NewSession {
    pub client_id: String,
    pub webhook_url: String,
    pub webhook_token: String,
    pub poll_lookup_url: String,
}
parley_contract::debug_redacted!(NewSession { client_id, webhook_url, poll_lookup_url; webhook_token });

/// Settings changes (API side, not fenced). `None` leaves a field as it is.
#[derive(Clone, Default)]
pub struct SettingsPatch {
    pub webhook_url: Option<String>,
    pub webhook_token: Option<String>,
    pub poll_lookup_url: Option<String>,
    pub org_id: Option<String>,
    /// `Some(None)` removes the secret.
    pub secret_hash: Option<Option<String>>,
    pub enable_group_ai: Option<bool>,
    pub events: Option<Vec<String>>,
    /// `Some(vec![])` selects every type.
    pub webhook_types: Option<Vec<String>>,
    pub presence: Option<String>,
    pub reject_calls: Option<bool>,
    pub call_reply: Option<String>,
    /// The session's own proxy URL; `Some("")` removes it.
    pub proxy_url: Option<String>,
    /// `Some(None)` turns pacing off.
    pub pacing: Option<Option<Pacing>>,
    pub desired: Option<bool>,
}
parley_contract::debug_redacted!(SettingsPatch { webhook_url, poll_lookup_url, org_id, enable_group_ai, events, webhook_types, presence, reject_calls, call_reply, pacing, desired; webhook_token, secret_hash, proxy_url });

/// What `parley rekey` sealed again of the sessions' secrets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionsRekeyed {
    pub webhook_tokens: usize,
    pub proxy_urls: usize,
}

/// State changes by the owning worker. `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct StatePatch {
    pub status: Option<String>,
    pub pod_name: Option<String>,
    pub jid: Option<String>,
    pub lid: Option<String>,
    pub connected: Option<bool>,
    pub logged_in: Option<bool>,
    /// Adds to `reconnects`.
    pub reconnects_add: i64,
    /// `Some(None)` clears it.
    pub connected_at: Option<Option<DateTime<Utc>>>,
    pub last_disconnect: Option<String>,
    pub desired: Option<bool>,
}

/// One line of a session's state history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateChange {
    pub at: DateTime<Utc>,
    pub status: String,
    pub connected: bool,
    /// The disconnect reason this change brought; empty when none.
    pub reason: String,
    /// The owning pod after the change.
    pub pod_name: String,
}

/// How health output counts a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    /// Linked and online.
    Connected,
    /// Linked before and meant to run, but offline now (reconnecting or unowned).
    Down,
    /// Will not come back without a human: logged out or banned by the network;
    /// `/start` pairs it again.
    Terminal,
    /// Never linked yet: waiting for a QR scan or a phone code.
    Pairing,
}

impl SessionRow {
    /// The event types its webhook selected; `None`: every type.
    pub fn selected_types(&self) -> Option<Vec<String>> {
        Some(self.webhook_types.clone()).filter(|t| !t.is_empty())
    }

    /// The presence it set: `Some(true)` online, `Some(false)` offline,
    /// `None` when it never set one.
    pub fn presence_set(&self) -> Option<bool> {
        parley_contract::wire::sessions::presence_available(&self.presence)
    }

    /// What it does with a call that rings it: `None` lets it ring;
    /// `Some(reply)` rejects it, then sends `reply` to the caller unless
    /// it is empty.
    pub fn call_rejection(&self) -> Option<&str> {
        self.reject_calls.then_some(self.call_reply.as_str())
    }

    pub fn health(&self) -> Health {
        if !self.desired {
            Health::Terminal
        } else if self.connected {
            Health::Connected
        } else if !self.jid.is_empty() {
            Health::Down
        } else {
            Health::Pairing
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_carries_no_secret() {
        let now = Utc::now();
        let row = SessionRow {
            client_id: "shop".into(),
            status: "connected".into(),
            pod_name: "worker-0".into(),
            jid: String::new(),
            lid: String::new(),
            webhook_url: "https://hooks.example/in".into(),
            webhook_token: "webhook-token-0123456789abcdef".into(),
            poll_lookup_url: String::new(),
            org_id: String::new(),
            secret_hash: Some("5e884898da28047151d0e56f8dc6292773603d0d".into()),
            enable_group_ai: false,
            events: Vec::new(),
            webhook_types: Vec::new(),
            presence: String::new(),
            reject_calls: false,
            call_reply: String::new(),
            proxy_url: "http://user:proxy-secret-42@proxy.example:3128".into(),
            pacing: None,
            connected: true,
            logged_in: true,
            reconnects: 0,
            connected_at: None,
            last_disconnect: String::new(),
            desired: true,
            fence: 1,
            created_at: now,
            updated_at: now,
        };
        let patch = SettingsPatch {
            webhook_token: Some("webhook-token-0123456789abcdef".into()),
            proxy_url: Some("http://user:proxy-secret-42@proxy.example:3128".into()),
            ..SettingsPatch::default()
        };
        let new = NewSession {
            client_id: "shop".into(),
            webhook_token: "webhook-token-0123456789abcdef".into(),
            ..NewSession::default()
        };
        let shown = format!("{row:?} {row:#?} {patch:?} {new:?}");
        assert!(shown.contains("hooks.example"), "{shown}");
        assert!(!shown.contains("webhook-token-"), "{shown}");
        assert!(!shown.contains("5e884898"), "{shown}");
        assert!(!shown.contains("proxy-secret"), "{shown}");
    }
}
