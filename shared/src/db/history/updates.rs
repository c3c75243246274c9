//! Changes of stored messages: reactions, edits, revokes and votes applied to
//! their target's row.

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter};
use serde_json::{Map, Value, json};

use super::*;
use crate::db::DbError;
use crate::db::entities::history::{messages, rooms};

pub(super) async fn find_message<C: ConnectionTrait>(
    conn: &C,
    client_id: &str,
    chat_room_id: &str,
    message_id: &str,
) -> Result<Option<messages::Model>, DbError> {
    Ok(messages::Entity::find()
        .filter(messages::Column::ClientId.eq(client_id))
        .filter(messages::Column::ChatRoomId.eq(chat_room_id))
        .filter(messages::Column::MessageId.eq(message_id))
        .one(conn)
        .await?)
}

/// Applies one change to its target's row (`extras`, `body`, `deleted`).
pub(super) async fn apply(
    txn: &DatabaseTransaction,
    target: &Target,
    change: &Change,
) -> Result<Written, DbError> {
    let Some(row) = find_message(
        txn,
        &target.client_id,
        &target.chat_room_id,
        &target.message_id,
    )
    .await?
    else {
        return Ok(Written::TargetMissing);
    };
    let mut extras = match serde_json::from_str::<Value>(&row.extras) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let mut body = row.body.clone();
    let mut deleted = row.deleted;
    match change {
        Change::React { reactor, emoji } => {
            let reactions = object_at(&mut extras, "reactions");
            if emoji.is_empty() {
                reactions.remove(reactor);
            } else {
                reactions.insert(reactor.clone(), Value::String(emoji.clone()));
            }
        }
        Change::Edit {
            edit_id,
            body: new,
            at,
        } => {
            let mut list = match extras.remove("editHistory") {
                Some(Value::Array(list)) => list,
                _ => Vec::new(),
            };
            let applied = list
                .iter()
                .any(|e| e.get("editId").and_then(Value::as_str) == Some(edit_id.as_str()));
            if !applied {
                list.push(json!({
                    "editId": edit_id,
                    "body": row.body,
                    "editedAt": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                }));
                body.clone_from(new);
            }
            extras.insert("editHistory".into(), Value::Array(list));
            extras.insert("edited".into(), Value::Bool(true));
        }
        Change::Revoke { at } => {
            deleted = true;
            extras.insert("revoked".into(), Value::Bool(true));
            extras
                .entry("revokedAt")
                .or_insert_with(|| json!(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)));
        }
        Change::Vote {
            voter,
            selected_options,
            selected_hashes,
        } => {
            object_at(&mut extras, "votes").insert(
                voter.clone(),
                json!({"selectedOptions": selected_options, "selectedHashes": selected_hashes}),
            );
        }
        Change::DeleteForMe => {
            deleted = true;
            extras.insert("deletedForMe".into(), Value::Bool(true));
        }
    }
    messages::Entity::update_many()
        .col_expr(
            messages::Column::Extras,
            Expr::value(Value::Object(extras).to_string()),
        )
        .col_expr(messages::Column::Body, Expr::value(body.clone()))
        .col_expr(messages::Column::Deleted, Expr::value(deleted))
        .filter(messages::Column::Id.eq(row.id))
        .exec(txn)
        .await?;
    if body != row.body {
        rooms::Entity::update_many()
            .col_expr(rooms::Column::LastMessage, Expr::value(body))
            .filter(rooms::Column::ClientId.eq(&target.client_id))
            .filter(rooms::Column::ChatRoomId.eq(&target.chat_room_id))
            .filter(rooms::Column::LastMessageId.eq(&target.message_id))
            .exec(txn)
            .await?;
    }
    Ok(Written::Updated)
}

/// The object under `key`, created (or replacing a non-object) when needed.
fn object_at<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}
