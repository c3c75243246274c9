//! The device store of the real network adapter: whatsapp-rust's device,
//! Signal, app-state and protocol state, one row set per clientId (every table
//! is keyed by `client_id` first, then by the storage trait's own keys).
//! Binary values are BLOB (SQLite) / BYTEA (PostgreSQL); u32 ids are BIGINT.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// A column's SQL type.
#[derive(Clone, Copy)]
enum Ty {
    Text,
    Blob,
    Big,
    Bool,
}

/// One column: name, type, nullable.
struct Col(&'static str, Ty, bool);

/// One table: its columns after `client_id`, and its key after `client_id`.
struct Def {
    name: &'static str,
    key: &'static [&'static str],
    cols: &'static [Col],
}

const fn req(name: &'static str, ty: Ty) -> Col {
    Col(name, ty, false)
}

const fn opt(name: &'static str, ty: Ty) -> Col {
    Col(name, ty, true)
}

use Ty::{Big, Blob, Bool, Text};

const TABLES: &[Def] = &[
    Def {
        name: "wa_devices",
        key: &[],
        cols: &[
            opt("pn", Text),
            opt("lid", Text),
            req("registration_id", Big),
            req("noise_key", Blob),
            req("identity_key", Blob),
            req("signed_pre_key", Blob),
            req("signed_pre_key_id", Big),
            req("signed_pre_key_signature", Blob),
            req("adv_secret_key", Blob),
            opt("account", Blob),
            req("push_name", Text),
            req("app_version_primary", Big),
            req("app_version_secondary", Big),
            req("app_version_tertiary", Big),
            req("app_version_last_fetched_ms", Big),
            opt("edge_routing_info", Blob),
            opt("props_hash", Text),
            req("next_pre_key_id", Big),
            req("first_unupload_pre_key_id", Big),
            req("server_has_prekeys", Bool),
            opt("nct_salt", Blob),
            opt("cert_intermediate_key", Blob),
            opt("cert_intermediate_not_before", Big),
            opt("cert_intermediate_not_after", Big),
            opt("cert_leaf_key", Blob),
            opt("cert_leaf_not_before", Big),
            opt("cert_leaf_not_after", Big),
            req("login_counter", Big),
            req("lid_migrated", Bool),
            req("last_signed_pre_key_rotation_ms", Big),
            req("read_receipts_disabled", Bool),
        ],
    },
    Def {
        name: "wa_identities",
        key: &["address"],
        cols: &[req("address", Text), req("identity_key", Blob)],
    },
    Def {
        name: "wa_signal_sessions",
        key: &["address"],
        cols: &[req("address", Text), req("record", Blob)],
    },
    Def {
        name: "wa_prekeys",
        key: &["id"],
        cols: &[req("id", Big), req("record", Blob), req("uploaded", Bool)],
    },
    Def {
        name: "wa_signed_prekeys",
        key: &["id"],
        cols: &[req("id", Big), req("record", Blob)],
    },
    Def {
        name: "wa_sender_keys",
        key: &["address"],
        cols: &[req("address", Text), req("record", Blob)],
    },
    Def {
        name: "wa_sync_keys",
        key: &["key_id"],
        cols: &[
            req("key_id", Blob),
            req("key_data", Blob),
            req("fingerprint", Blob),
            req("timestamp", Big),
            req("seq", Big),
        ],
    },
    Def {
        name: "wa_app_state_versions",
        key: &["name"],
        cols: &[
            req("name", Text),
            req("version", Big),
            req("hash", Blob),
            req("mac_mismatch_fatal", Bool),
        ],
    },
    Def {
        name: "wa_app_state_index_values",
        key: &["name", "index_key"],
        cols: &[
            req("name", Text),
            req("index_key", Text),
            req("value", Blob),
        ],
    },
    Def {
        name: "wa_mutation_macs",
        key: &["name", "index_mac"],
        cols: &[
            req("name", Text),
            req("index_mac", Blob),
            req("version", Big),
            req("value_mac", Blob),
        ],
    },
    Def {
        name: "wa_sender_key_devices",
        key: &["group_jid", "device_jid"],
        cols: &[
            req("group_jid", Text),
            req("device_jid", Text),
            req("has_key", Bool),
        ],
    },
    Def {
        name: "wa_lid_pn_mappings",
        key: &["lid"],
        cols: &[
            req("lid", Text),
            req("phone_number", Text),
            req("created_at", Big),
            req("updated_at", Big),
            req("learning_source", Text),
        ],
    },
    Def {
        name: "wa_base_keys",
        key: &["address", "message_id"],
        cols: &[
            req("address", Text),
            req("message_id", Text),
            req("base_key", Blob),
        ],
    },
    Def {
        name: "wa_device_lists",
        key: &["user_id"],
        cols: &[
            req("user_id", Text),
            req("timestamp", Big),
            opt("phash", Text),
            opt("raw_id", Big),
        ],
    },
    Def {
        name: "wa_device_list_entries",
        key: &["user_id", "position"],
        cols: &[
            req("user_id", Text),
            req("position", Big),
            req("device_id", Big),
            opt("key_index", Big),
            req("is_hosted", Bool),
        ],
    },
    Def {
        name: "wa_group_metadata",
        key: &["group_jid"],
        cols: &[req("group_jid", Text), req("info", Blob)],
    },
    Def {
        name: "wa_tc_tokens",
        key: &["jid"],
        cols: &[
            req("jid", Text),
            req("token", Blob),
            req("token_timestamp", Big),
            opt("sender_timestamp", Big),
        ],
    },
    Def {
        name: "wa_sent_messages",
        key: &["chat_jid", "message_id"],
        cols: &[
            req("chat_jid", Text),
            req("message_id", Text),
            req("payload", Blob),
            req("created_at", Big),
        ],
    },
    Def {
        name: "wa_pending_inbound",
        key: &["chat", "sender", "message_id"],
        cols: &[
            req("chat", Text),
            req("sender", Text),
            req("message_id", Text),
            req("message", Blob),
            req("inserted_at", Big),
        ],
    },
    Def {
        name: "wa_msg_secrets",
        key: &["chat", "sender", "msg_id"],
        cols: &[
            req("chat", Text),
            req("sender", Text),
            req("msg_id", Text),
            req("secret", Blob),
            req("expires_at", Big),
            req("message_ts", Big),
        ],
    },
];

/// Secondary indexes: name, table, columns.
const INDEXES: &[(&str, &str, &[&str])] = &[(
    "idx_wa_lid_pn_mappings_phone",
    "wa_lid_pn_mappings",
    &["client_id", "phone_number"],
)];

fn column(col: &Col) -> ColumnDef {
    let Col(name, ty, nullable) = *col;
    let mut def = ColumnDef::new(Alias::new(name));
    match ty {
        Ty::Text => def.text(),
        Ty::Blob => def.blob(),
        Ty::Big => def.big_integer(),
        Ty::Bool => def.boolean(),
    };
    if nullable {
        def.null();
    } else {
        def.not_null();
    }
    def
}

fn create(def: &Def) -> TableCreateStatement {
    let mut table = Table::create();
    table
        .table(Alias::new(def.name))
        .if_not_exists()
        .col(ColumnDef::new(Alias::new("client_id")).text().not_null());
    for col in def.cols {
        table.col(column(col));
    }
    let mut key = Index::create();
    key.col(Alias::new("client_id"));
    for name in def.key {
        key.col(Alias::new(*name));
    }
    table.primary_key(&mut key);
    table
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for def in TABLES {
            manager.create_table(create(def)).await?;
        }
        for (name, table, cols) in INDEXES {
            let mut index = Index::create();
            index.name(*name).table(Alias::new(*table)).if_not_exists();
            for col in *cols {
                index.col(Alias::new(*col));
            }
            manager.create_index(index).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, _, _) in INDEXES {
            manager
                .drop_index(Index::drop().name(*name).if_exists().to_owned())
                .await?;
        }
        for def in TABLES.iter().rev() {
            manager
                .drop_table(
                    Table::drop()
                        .table(Alias::new(def.name))
                        .if_exists()
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
