//! Hosted inbox reads, straight from the database (never over the bus): chat
//! rooms, their last 200 messages, a message's media link, and the hosted
//! unread reset. Also the history lookups of `/mark-read`, `/mark-unread` and
//! `/delete-message`.
use actix_web::{HttpRequest, get, post, web};
use parley_contract::error::ApiError;
use parley_contract::wire::inbox::{
    ChatRoom, ChatRoomList, HistoryMessage, InboxQuery, MediaUrl, MessageList, MessageMediaInfo,
};
use parley_contract::wire::messages::StatusText;
use parley_model::ids::{ChatRoomId, ClientId};
use parley_model::recipients::Recipient;
use parley_shared::db::SessionRow;
use parley_shared::db::history::{ChatRoomRow, HISTORY_LIMIT, MessageRow, hosted_inbox_active};

use crate::auth::Caller;
use crate::auth::{authorized_client, caller};
use crate::{AppState, HttpError};

/// Longest chat room or message id looked up (longer ones cannot exist).
const ID_MAX: usize = 256;

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// The session of a request that names it, checked against the caller; an
/// `orgId` that is given must be the session's. Unknown sessions are 404.
pub(super) async fn session_for(
    req: &HttpRequest,
    state: &AppState,
    client_id: &ClientId,
    org_id: Option<&str>,
) -> Result<SessionRow, ApiError> {
    if let Caller::Session(own) = caller(req)
        && own != *client_id
    {
        return Err(ApiError::not_found("no such chat room"));
    }
    let Some(row) = state.ports.db.session(client_id.as_str()).await? else {
        return Err(ApiError::not_found("unknown clientId"));
    };
    if let Some(org) = org_id
        && org.trim() != row.org_id
    {
        return Err(ApiError::not_found("unknown orgId for this session"));
    }
    Ok(row)
}

/// The session and the room of a `chatRoomId` path (`<clientId>-<myLid>-<other>`).
async fn room_for(
    req: &HttpRequest,
    state: &AppState,
    chat_room_id: &str,
    org_id: Option<&str>,
) -> Result<(SessionRow, ChatRoomRow), ApiError> {
    let not_found = || ApiError::not_found("no such chat room");
    if chat_room_id.len() > ID_MAX {
        return Err(not_found());
    }
    let client = ChatRoomId::parse(chat_room_id)
        .ok_or_else(not_found)?
        .client_id();
    let session = session_for(req, state, &client, org_id).await?;
    let room = state
        .ports
        .db
        .chat_room(client.as_str(), chat_room_id)
        .await?
        .ok_or_else(not_found)?;
    Ok((session, room))
}

fn chat_room(r: ChatRoomRow) -> ChatRoom {
    ChatRoom {
        chat_room_id: r.chat_room_id,
        client_id: r.client_id,
        name: r.name,
        my_lid: r.my_lid,
        client_lid: r.client_lid,
        is_group: r.is_group,
        remote_jid: r.remote_jid,
        last_message: r.last_message,
        last_message_from_me: r.last_message_from_me,
        last_message_at: r.last_message_at.map(rfc3339).unwrap_or_default(),
        unread_count: r.unread_count,
        avatar_url: r.avatar_url,
    }
}

fn message(m: MessageRow) -> HistoryMessage {
    HistoryMessage {
        message_id: m.message_id,
        chat_room_id: m.chat_room_id,
        client_id: m.client_id,
        body: m.body,
        message_type: m.message_type,
        from_me: m.from_me,
        pushname: m.pushname,
        sent_at: rfc3339(m.sent_at),
        deleted: m.deleted,
        from_ai: m.from_ai,
        media: m.media.map(|x| MessageMediaInfo {
            mime_type: x.mime_type,
            media_type: x.media_type,
            file_name: x.file_name,
            file_size: x.file_size,
        }),
        download_url: Some(m.download_url).filter(|u| !u.is_empty()),
        extras: m.extras,
    }
}

#[utoipa::path(tag = "inbox",
    params(("clientId" = String, Query, description = "The session"),
        ("orgId" = Option<String>, Query, description = "When given, must be the session's workspace id"),
        ("labelId" = Option<String>, Query, description = "Parley's: only the rooms of chats with this label (`GET /labels`)")),
    responses((status = 200, body = ChatRoomList),
        (status = 400, description = "Missing or invalid clientId"),
        (status = 404, description = "Unknown clientId, orgId not the session's, or no such label")))]
#[get("/chatrooms")]
pub async fn chat_rooms(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<InboxQuery>,
) -> Result<web::Json<ChatRoomList>, HttpError> {
    let query = query.into_inner();
    let id = authorized_client(&req, query.client_id.as_deref().unwrap_or_default())?;
    session_for(&req, &state, &id, query.org_id.as_deref()).await?;
    let mut rooms = state.ports.db.chat_rooms(id.as_str()).await?;
    if let Some(label_id) = query.label_id.as_deref().map(str::trim) {
        let chats = super::labels::chats_of(&state, &id, label_id).await?;
        rooms.retain(|room| labelled(room, &chats));
    }
    Ok(web::Json(ChatRoomList {
        chat_rooms: rooms.into_iter().map(chat_room).collect(),
    }))
}

/// Whether `room` is the chat of one of `chats` (JIDs, as the network names
/// them: a contact's by its LID or phone number, a group's by its JID).
fn labelled(room: &ChatRoomRow, chats: &[String]) -> bool {
    chats.iter().any(|chat| {
        *chat == room.remote_jid
            || (!room.is_group && chat.split('@').next() == Some(room.client_lid.as_str()))
    })
}

#[utoipa::path(tag = "inbox",
    params(("chatRoomId" = String, Path, description = "`<clientId>-<myLid>-<clientLid>`"),
        ("orgId" = Option<String>, Query, description = "When given, must be the session's workspace id")),
    responses((status = 200, body = MessageList, description = "The last 200 messages, oldest first"),
        (status = 404, description = "No such chat room")))]
#[get("/chatrooms/{chatRoomId}/messages")]
pub async fn messages(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<InboxQuery>,
) -> Result<web::Json<MessageList>, HttpError> {
    let (_, room) = room_for(&req, &state, &path, query.org_id.as_deref()).await?;
    let rows = state
        .ports
        .db
        .last_messages(&room.client_id, &room.chat_room_id, HISTORY_LIMIT)
        .await?;
    Ok(web::Json(MessageList {
        messages: rows.into_iter().map(message).collect(),
    }))
}

#[utoipa::path(tag = "inbox",
    params(("chatRoomId" = String, Path, description = "The chat room"),
        ("messageId" = String, Path, description = "Network message id"),
        ("orgId" = Option<String>, Query, description = "When given, must be the session's workspace id")),
    responses((status = 200, body = MediaUrl),
        (status = 404, description = "No such message, or it has no media")))]
#[get("/chatrooms/{chatRoomId}/messages/{messageId}/media-url")]
pub async fn media_url(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    query: web::Query<InboxQuery>,
) -> Result<web::Json<MediaUrl>, HttpError> {
    let (chat_room_id, message_id) = path.into_inner();
    let (_, room) = room_for(&req, &state, &chat_room_id, query.org_id.as_deref()).await?;
    if message_id.len() > ID_MAX {
        return Err(ApiError::not_found("no such message").into());
    }
    let row = state
        .ports
        .db
        .history_message(&room.client_id, &room.chat_room_id, &message_id)
        .await?
        .ok_or_else(|| ApiError::not_found("no such message"))?;
    if row.download_url.is_empty() {
        return Err(ApiError::not_found("this message has no media").into());
    }
    Ok(web::Json(MediaUrl {
        ok: true,
        url: row.download_url,
    }))
}

#[utoipa::path(tag = "inbox",
    params(("chatRoomId" = String, Path, description = "The chat room")),
    responses((status = 200, body = StatusText, description = "Hosted unreadCount reset to 0; no receipts are sent"),
        (status = 404, description = "No such chat room")))]
#[post("/chatrooms/{chatRoomId}/read")]
pub async fn read(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<web::Json<StatusText>, HttpError> {
    let (_, room) = room_for(&req, &state, &path, None).await?;
    state
        .ports
        .db
        .reset_unread(&room.client_id, &room.chat_room_id)
        .await?;
    Ok(web::Json(StatusText {
        status: "ok".into(),
    }))
}

/// Whether the session keeps a hosted inbox (then the history rules of
/// `/mark-unread` and `/delete-message` apply).
pub(super) async fn hosted(state: &AppState, id: &ClientId) -> Result<bool, ApiError> {
    let receiver = state.config.hosted_receiver_url.as_deref();
    if receiver.is_none() {
        return Ok(false);
    }
    Ok(state
        .ports
        .db
        .session(id.as_str())
        .await?
        .is_some_and(|s| hosted_inbox_active(&s.org_id, &s.webhook_url, receiver)))
}

/// The stored room of a `to`: by the contact's LID or phone, or the group id.
pub(super) async fn room_of(
    state: &AppState,
    id: &ClientId,
    to: &Recipient,
) -> Result<Option<ChatRoomRow>, ApiError> {
    Ok(state
        .ports
        .db
        .chat_room_for(id.as_str(), to.user(), to.is_group())
        .await?)
}
