//! Signal protocol tables: identities, sessions, pre-keys, signed pre-keys, sender keys.

/// `wa_identities`: a remote address's identity key (32 bytes).
pub mod identities {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_identities")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub address: String,
        pub identity_key: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_signal_sessions`: a remote address's serialized session record.
pub mod sessions {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_signal_sessions")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub address: String,
        pub record: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_prekeys`: one-time pre-keys and whether the server has them.
pub mod prekeys {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_prekeys")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: i64,
        pub record: Vec<u8>,
        pub uploaded: bool,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_signed_prekeys`: signed pre-key records.
pub mod signed_prekeys {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_signed_prekeys")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: i64,
        pub record: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_sender_keys`: group sender key records per sender address.
pub mod sender_keys {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_sender_keys")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub address: String,
        pub record: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
