//! Message-bound tables: sent messages kept for retries, the pending inbound
//! buffer, and message secrets.

/// `wa_sent_messages`: encoded sent messages, kept until a retry takes them.
pub mod sent_messages {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_sent_messages")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub chat_jid: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub message_id: String,
        pub payload: Vec<u8>,
        /// Unix seconds.
        pub created_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_pending_inbound`: decrypted inbound messages awaiting their durability commit.
pub mod pending_inbound {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_pending_inbound")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub chat: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub sender: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub message_id: String,
        pub message: Vec<u8>,
        /// Unix seconds.
        pub inserted_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_msg_secrets`: 32-byte message secrets by chat, sender and message id.
pub mod msg_secrets {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_msg_secrets")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub chat: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub sender: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub msg_id: String,
        pub secret: Vec<u8>,
        /// Unix seconds; 0 = never expires.
        pub expires_at: i64,
        /// The parent message's time in unix seconds; 0 = unknown.
        pub message_ts: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_group_authors`: who wrote the group messages a session received.
pub mod group_authors {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_group_authors")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub chat: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub message_id: String,
        pub author: String,
        /// Unix seconds.
        pub noted_at: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
