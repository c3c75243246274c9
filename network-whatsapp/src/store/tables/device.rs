//! `wa_devices`: the session's own device (keys, account, counters), one row per clientId.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "wa_devices")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub pn: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub lid: Option<String>,
    pub registration_id: i64,
    /// Private key (32 bytes) followed by the public key (32 bytes).
    pub noise_key: Vec<u8>,
    /// Private key followed by the public key, as `noise_key`.
    pub identity_key: Vec<u8>,
    /// Private key followed by the public key, as `noise_key`.
    pub signed_pre_key: Vec<u8>,
    pub signed_pre_key_id: i64,
    pub signed_pre_key_signature: Vec<u8>,
    pub adv_secret_key: Vec<u8>,
    /// The protobuf-encoded `ADVSignedDeviceIdentity`.
    #[sea_orm(nullable)]
    pub account: Option<Vec<u8>>,
    #[sea_orm(column_type = "Text")]
    pub push_name: String,
    pub app_version_primary: i64,
    pub app_version_secondary: i64,
    pub app_version_tertiary: i64,
    pub app_version_last_fetched_ms: i64,
    #[sea_orm(nullable)]
    pub edge_routing_info: Option<Vec<u8>>,
    #[sea_orm(column_type = "Text", nullable)]
    pub props_hash: Option<String>,
    pub next_pre_key_id: i64,
    pub first_unupload_pre_key_id: i64,
    pub server_has_prekeys: bool,
    #[sea_orm(nullable)]
    pub nct_salt: Option<Vec<u8>>,
    #[sea_orm(nullable)]
    pub cert_intermediate_key: Option<Vec<u8>>,
    pub cert_intermediate_not_before: Option<i64>,
    pub cert_intermediate_not_after: Option<i64>,
    #[sea_orm(nullable)]
    pub cert_leaf_key: Option<Vec<u8>>,
    pub cert_leaf_not_before: Option<i64>,
    pub cert_leaf_not_after: Option<i64>,
    pub login_counter: i64,
    pub lid_migrated: bool,
    pub last_signed_pre_key_rotation_ms: i64,
    pub read_receipts_disabled: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
