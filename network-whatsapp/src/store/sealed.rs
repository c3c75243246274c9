//! Which stored values of the device state are secrets, and sealing them all
//! again under the active store key (`parley rekey`). The device's own key
//! pairs live in `device_row`; the Signal sessions, pre-keys, signed pre-keys,
//! sender keys and app-state sync keys are sealed here, each bound to its
//! table, clientId and row key.
use parley_shared::db::Db;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use whatsapp_rust::wacore::store::error::Result;

use super::error::{db_err, invalid};
use super::tables::app_sync::sync_keys;
use super::tables::signal::{prekeys, sender_keys, sessions, signed_prekeys};

pub(super) const SESSIONS: &str = "wa_signal_sessions";
pub(super) const PREKEYS: &str = "wa_prekeys";
pub(super) const SIGNED_PREKEYS: &str = "wa_signed_prekeys";
pub(super) const SENDER_KEYS: &str = "wa_sender_keys";
pub(super) const SYNC_KEYS: &str = "wa_sync_keys";

/// Where a sealed value belongs (its associated data).
pub(super) fn place(table: &str, client_id: &str, key: &str) -> String {
    format!("{table}:{client_id}:{key}")
}

/// What `rekey` sealed again, per kind of value.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Rekeyed {
    pub devices: usize,
    pub records: usize,
}

/// Seals every secret of every session's device state under the active key.
/// A value rewritten meanwhile (its session's owner seals under the active
/// key too) is left as that write made it.
pub async fn rekey(db: &Db) -> Result<Rekeyed> {
    let devices = super::device::rekey(db).await?;
    let mut records = 0;
    macro_rules! table {
        ($module:ident, $table:expr, $key:ident, $key_col:ident, $value:ident, $value_col:ident, $show:expr) => {{
            let rows = $module::Entity::find()
                .all(db.conn())
                .await
                .map_err(db_err)?;
            for row in rows {
                if db.keys().is_current(&row.$value) {
                    continue;
                }
                let show: fn(&_) -> String = $show;
                let at = place($table, &row.client_id, &show(&row.$key));
                let plain = db
                    .keys()
                    .open(&at, &row.$value)
                    .map_err(|e| invalid($table, e))?;
                let res = $module::Entity::update_many()
                    .col_expr(
                        $module::Column::$value_col,
                        Expr::value(db.keys().seal(&at, &plain)),
                    )
                    .filter($module::Column::ClientId.eq(row.client_id.as_str()))
                    .filter($module::Column::$key_col.eq(row.$key.clone()))
                    .filter($module::Column::$value_col.eq(row.$value.clone()))
                    .exec(db.conn())
                    .await
                    .map_err(db_err)?;
                records += usize::try_from(res.rows_affected).unwrap_or(0);
            }
        }};
    }
    table!(
        sessions,
        SESSIONS,
        address,
        Address,
        record,
        Record,
        |a: &String| a.clone()
    );
    table!(prekeys, PREKEYS, id, Id, record, Record, |id: &i64| id
        .to_string());
    table!(
        signed_prekeys,
        SIGNED_PREKEYS,
        id,
        Id,
        record,
        Record,
        |id: &i64| id.to_string()
    );
    table!(
        sender_keys,
        SENDER_KEYS,
        address,
        Address,
        record,
        Record,
        |a: &String| a.clone()
    );
    table!(
        sync_keys,
        SYNC_KEYS,
        key_id,
        KeyId,
        key_data,
        KeyData,
        |k: &Vec<u8>| hex::encode(k)
    );
    Ok(Rekeyed { devices, records })
}
