//! App-state sync tables: sync keys, collection versions (with their index
//! values), mutation MACs.

/// `wa_sync_keys`: app-state sync keys by key id; `seq` orders them by storage time.
pub mod sync_keys {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_sync_keys")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub key_id: Vec<u8>,
        pub key_data: Vec<u8>,
        pub fingerprint: Vec<u8>,
        pub timestamp: i64,
        pub seq: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_app_state_versions`: a collection's version and its 128-byte ltHash.
pub mod versions {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_app_state_versions")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub name: String,
        pub version: i64,
        pub hash: Vec<u8>,
        pub mac_mismatch_fatal: bool,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_app_state_index_values`: the `index_value_map` of a collection's version.
pub mod index_values {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_app_state_index_values")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub name: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub index_key: String,
        pub value: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// `wa_mutation_macs`: value MACs by collection and index MAC.
pub mod mutation_macs {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "wa_mutation_macs")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub client_id: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub name: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub index_mac: Vec<u8>,
        pub version: i64,
        pub value_mac: Vec<u8>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
