//! The `labels` and `chat_labels` entities: each session's chat labels and
//! the chats each is on (by chat JID).
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use crate::db::DbError;

pub mod label {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "labels")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub label_id: String,
        #[sea_orm(column_type = "Text")]
        pub name: String,
        pub color: i32,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod chat_label {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "chat_labels")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub label_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub chat: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// Creates or replaces label `label_id` of `client_id`.
pub async fn save(
    db: &impl ConnectionTrait,
    client_id: &str,
    label_id: &str,
    name: &str,
    color: i32,
) -> Result<(), DbError> {
    let row = label::ActiveModel {
        client_id: Set(client_id.to_string()),
        label_id: Set(label_id.to_string()),
        name: Set(name.to_string()),
        color: Set(color),
    };
    label::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([label::Column::ClientId, label::Column::LabelId])
                .update_columns([label::Column::Name, label::Column::Color])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// Deletes label `label_id` of `client_id` and takes it off every chat.
pub async fn delete(
    db: &impl ConnectionTrait,
    client_id: &str,
    label_id: &str,
) -> Result<(), DbError> {
    chat_label::Entity::delete_many()
        .filter(chat_label::Column::ClientId.eq(client_id))
        .filter(chat_label::Column::LabelId.eq(label_id))
        .exec(db)
        .await?;
    label::Entity::delete_by_id((client_id.to_string(), label_id.to_string()))
        .exec(db)
        .await?;
    Ok(())
}

/// Puts label `label_id` on `chat`, or takes it off.
pub async fn set_on_chat(
    db: &impl ConnectionTrait,
    client_id: &str,
    label_id: &str,
    chat: &str,
    labeled: bool,
) -> Result<(), DbError> {
    if !labeled {
        let key = (
            client_id.to_string(),
            label_id.to_string(),
            chat.to_string(),
        );
        chat_label::Entity::delete_by_id(key).exec(db).await?;
        return Ok(());
    }
    let row = chat_label::ActiveModel {
        client_id: Set(client_id.to_string()),
        label_id: Set(label_id.to_string()),
        chat: Set(chat.to_string()),
    };
    chat_label::Entity::insert(row)
        .on_conflict_do_nothing()
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// The labels of `client_id`, by id.
pub async fn all(db: &impl ConnectionTrait, client_id: &str) -> Result<Vec<label::Model>, DbError> {
    Ok(label::Entity::find()
        .filter(label::Column::ClientId.eq(client_id))
        .all(db)
        .await?)
}

/// Label `label_id` of `client_id`, if it has one.
pub async fn one(
    db: &impl ConnectionTrait,
    client_id: &str,
    label_id: &str,
) -> Result<Option<label::Model>, DbError> {
    let key = (client_id.to_string(), label_id.to_string());
    Ok(label::Entity::find_by_id(key).one(db).await?)
}

/// Whether label `label_id` of `client_id` is on `chat`.
pub async fn is_on_chat(
    db: &impl ConnectionTrait,
    client_id: &str,
    label_id: &str,
    chat: &str,
) -> Result<bool, DbError> {
    let key = (
        client_id.to_string(),
        label_id.to_string(),
        chat.to_string(),
    );
    Ok(chat_label::Entity::find_by_id(key).one(db).await?.is_some())
}

/// The chats each label of `client_id` is on.
pub async fn chats(
    db: &impl ConnectionTrait,
    client_id: &str,
) -> Result<Vec<chat_label::Model>, DbError> {
    Ok(chat_label::Entity::find()
        .filter(chat_label::Column::ClientId.eq(client_id))
        .all(db)
        .await?)
}

/// The chats label `label_id` of `client_id` is on.
pub async fn chats_of_label(
    db: &impl ConnectionTrait,
    client_id: &str,
    label_id: &str,
) -> Result<Vec<String>, DbError> {
    Ok(chat_label::Entity::find()
        .filter(chat_label::Column::ClientId.eq(client_id))
        .filter(chat_label::Column::LabelId.eq(label_id))
        .all(db)
        .await?
        .into_iter()
        .map(|row| row.chat)
        .collect())
}

/// Forgets every label of `client_id` (the session is deleted).
pub async fn purge(db: &impl ConnectionTrait, client_id: &str) -> Result<(), DbError> {
    chat_label::Entity::delete_many()
        .filter(chat_label::Column::ClientId.eq(client_id))
        .exec(db)
        .await?;
    label::Entity::delete_many()
        .filter(label::Column::ClientId.eq(client_id))
        .exec(db)
        .await?;
    Ok(())
}
