//! Protocol tables: sender-key distribution status, LID-PN mappings, base keys,
//! device lists, group metadata, trusted-contact tokens.

/// `wa_sender_key_devices`: whether a device of a group holds our sender key.
pub mod sender_key_devices {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_sender_key_devices")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub group_jid: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub device_jid: String,
        pub has_key: bool,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_lid_pn_mappings`: LID user-part to phone number, by LID.
pub mod lid_pn_mappings {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_lid_pn_mappings")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub lid: String,
        #[sea_orm(column_type = "Text")]
        pub phone_number: String,
        pub created_at: i64,
        pub updated_at: i64,
        #[sea_orm(column_type = "Text")]
        pub learning_source: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_base_keys`: base keys saved for retry collision detection.
pub mod base_keys {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_base_keys")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub address: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub message_id: String,
        pub base_key: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_device_lists`: a user's device list record (its devices in `device_list_entries`).
pub mod device_lists {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_device_lists")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub user_id: String,
        pub timestamp: i64,
        #[sea_orm(column_type = "Text", nullable)]
        pub phash: Option<String>,
        pub raw_id: Option<i64>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_device_list_entries`: the devices of a device list, in list order.
pub mod device_list_entries {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_device_list_entries")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub user_id: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub position: i64,
        pub device_id: i64,
        pub key_index: Option<i64>,
        pub is_hosted: bool,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_group_metadata`: the library's opaque serialized group info.
pub mod group_metadata {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_group_metadata")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub group_jid: String,
        pub info: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_tc_tokens`: trusted-contact privacy tokens by JID.
pub mod tc_tokens {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_tc_tokens")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub jid: String,
        /// Empty for a placeholder row that only carries `sender_timestamp`.
        pub token: Vec<u8>,
        pub token_timestamp: i64,
        pub sender_timestamp: Option<i64>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
