//! Chat labels (Parley's, beside the spec): the account's labels as its
//! devices keep them, and the chats each is on.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One label: its id (a small number), name and colour (0 to 19, an index
/// into the network's palette).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LabelView {
    pub id: String,
    pub name: String,
    pub color: i32,
}

/// A label in `GET /labels`, with the chats it is on (JIDs).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelListed {
    pub id: String,
    pub name: String,
    pub color: i32,
    pub chats: Vec<String>,
}

/// `GET /labels`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelList {
    pub client_id: String,
    pub labels: Vec<LabelListed>,
}

/// `POST /set-label`: creates a label (no `labelId`) or changes one.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetLabel {
    #[serde(default)]
    pub client_id: String,
    /// The label to change; none creates one.
    pub label_id: Option<String>,
    pub name: Option<String>,
    /// 0 to 19; a new label without it gets 0, a changed one keeps its own.
    pub color: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelSaved {
    pub ok: bool,
    pub client_id: String,
    pub label: LabelView,
}

/// `POST /delete-label`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteLabel {
    #[serde(default)]
    pub client_id: String,
    pub label_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelDeleted {
    pub ok: bool,
    pub client_id: String,
    pub label_id: String,
}

/// `POST /set-chat-label`: puts a label on a chat (`labeled`, the default)
/// or takes it off.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetChatLabel {
    #[serde(default)]
    pub client_id: String,
    /// The chat: a phone number or a group JID, as a send's `to`.
    pub to: Option<String>,
    pub label_id: Option<String>,
    pub labeled: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatLabelSet {
    pub ok: bool,
    pub client_id: String,
    pub to: String,
    pub label_id: String,
    pub labeled: bool,
}
