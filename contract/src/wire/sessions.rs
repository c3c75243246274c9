//! Bodies of the session routes.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::pacing::Pacing;

/// A request that names only its session.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientOnly {
    #[serde(default)]
    pub client_id: String,
}

/// Optional `clientId` in a query string.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientQuery {
    pub client_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CheckState {
    /// True when connected.
    pub status: bool,
    /// The session's own JID when connected, else `not connected` or `unknown clientId`.
    pub state: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientSummary {
    pub client_id: String,
    pub jid: String,
    pub pod_name: String,
    pub org_id: String,
    pub webhook_url: String,
    /// The session's send limit; null when its sends are not paced.
    pub pacing: Option<Pacing>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ClientList {
    pub clients: Vec<ClientSummary>,
}

#[derive(Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetApiSecret {
    #[serde(default)]
    pub client_id: String,
    /// At least 16 characters; empty removes the secret.
    pub secret: String,
}
crate::debug_redacted!(SetApiSecret { client_id; secret });

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HasSecret {
    pub client_id: String,
    pub has_secret: bool,
}

/// Optional JSON body of `POST /start`.
#[derive(Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartBody {
    pub webhook_url: Option<String>,
    pub webhook_token: Option<String>,
    pub poll_lookup_url: Option<String>,
}
crate::debug_redacted!(StartBody { webhook_url, poll_lookup_url; webhook_token });

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Started {
    pub client_id: String,
    pub status: String,
    pub pod_name: String,
    pub webhook_url: String,
    pub poll_lookup_url: String,
}

/// Required `clientId` in a query string.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientIdQuery {
    #[serde(default)]
    pub client_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QrState {
    pub client_id: String,
    pub status: String,
    /// PNG data URL while `status` is `qr`, else empty.
    pub qr: String,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PairPhone {
    #[serde(default)]
    pub client_id: String,
    #[serde(default)]
    pub phone: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PairCode {
    pub client_id: String,
    pub phone: String,
    pub code: String,
}

#[derive(Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetWebhook {
    #[serde(default)]
    pub client_id: String,
    pub webhook_url: String,
    pub webhook_token: Option<String>,
    pub poll_lookup_url: Option<String>,
}
crate::debug_redacted!(SetWebhook { client_id, webhook_url, poll_lookup_url; webhook_token });

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookSet {
    pub ok: bool,
    pub client_id: String,
    pub webhook_url: String,
    pub poll_lookup_url: String,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetOrgId {
    #[serde(default)]
    pub client_id: String,
    pub org_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrgIdSet {
    pub ok: bool,
    pub client_id: String,
    pub org_id: String,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetEnableGroupAi {
    #[serde(default)]
    pub client_id: String,
    pub enabled: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupAiSet {
    pub ok: bool,
    pub client_id: String,
    pub enabled: bool,
}

/// `POST /set-events`: the events the session gets beside its messages
/// (replacing the earlier choice; empty: messages only).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetEvents {
    #[serde(default)]
    pub client_id: String,
    /// Of `group_participants`, `group_update`, `receipt`, `typing`,
    /// `presence` and `status`.
    pub events: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventsSet {
    pub ok: bool,
    pub client_id: String,
    pub events: Vec<String>,
}

/// `POST /set-webhook-types`: the event types the session's webhook takes
/// (replacing the earlier choice); `null` or left out: every type.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetWebhookTypes {
    #[serde(default)]
    pub client_id: String,
    /// Event `type`s (`text`, `image`, ..., `receipt`, `typing`), 1 to 32.
    #[serde(default)]
    pub types: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookTypesSet {
    pub ok: bool,
    pub client_id: String,
    /// `null`: every type.
    pub types: Option<Vec<String>>,
}

/// `POST /set-presence` (Parley's): the session's account says it is online
/// or offline, now and after every reconnect.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetPresence {
    #[serde(default)]
    pub client_id: String,
    /// `available` (online) or `unavailable` (offline).
    pub presence: Option<String>,
}

/// Whether a presence value says online: `Some(true)` for `available`,
/// `Some(false)` for `unavailable`, `None` for anything else.
pub fn presence_available(value: &str) -> Option<bool> {
    match value {
        "available" => Some(true),
        "unavailable" => Some(false),
        _ => None,
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PresenceSet {
    pub ok: bool,
    pub client_id: String,
    pub presence: String,
}

/// `POST /set-call-rejection` (Parley's): whether the session rejects the
/// calls that ring it as they come, and the text it then sends the caller.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetCallRejection {
    #[serde(default)]
    pub client_id: String,
    /// `true`: reject every call; `false`: let calls ring (the default).
    pub reject: Option<bool>,
    /// Sent to the caller after each rejection (only with `reject: true`);
    /// absent, null or empty: none.
    #[serde(default)]
    pub reply_text: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallRejectionSet {
    pub ok: bool,
    pub client_id: String,
    pub reject: bool,
    /// Empty when none is sent.
    pub reply_text: String,
}

/// `POST /reject-call` (Parley's): rejects a call that rings the session
/// now (its `call.offer` event names it).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RejectCall {
    #[serde(default)]
    pub client_id: String,
    pub call_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallRejected {
    pub ok: bool,
    pub client_id: String,
    pub call_id: String,
}

/// `POST /set-proxy` (Parley's): the proxy that carries the session's
/// connection and media requests instead of the deployment's.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetProxy {
    #[serde(default)]
    pub client_id: String,
    /// `http://[user:password@]host[:port]` (`CONNECT`),
    /// `socks5://...` or `socks5h://...`; `null` or empty: remove it (the
    /// deployment's proxy, or none, from then on).
    #[serde(default)]
    pub proxy_url: Option<String>,
}

/// A session's own proxy as shown: never its credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxyState {
    /// `scheme://host:port`.
    pub url: String,
    /// Whether it was given a user name and password (never shown).
    pub credentials: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxySet {
    pub ok: bool,
    pub client_id: String,
    /// `null` when the session has none.
    pub proxy: Option<ProxyState>,
}

/// `POST /set-send-pacing`: `messagesPerMinute` 0 turns pacing off.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetSendPacing {
    #[serde(default)]
    pub client_id: String,
    /// Sustained rate, 1 to 6000 messages a minute; 0 turns pacing off.
    #[schema(minimum = 0, maximum = 6000)]
    #[serde(default, deserialize_with = "crate::wire::integers::optional")]
    pub messages_per_minute: Option<i64>,
    /// How many messages may go back to back after a quiet spell (default 1).
    #[schema(minimum = 1, maximum = 1000)]
    #[serde(default, deserialize_with = "crate::wire::integers::optional")]
    pub burst: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendPacingSet {
    pub ok: bool,
    pub client_id: String,
    /// The limit now in force; null when off.
    pub pacing: Option<Pacing>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Disconnected {
    pub ok: bool,
    pub client_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Ok {
    pub ok: bool,
}
