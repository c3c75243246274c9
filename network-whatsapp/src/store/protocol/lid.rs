//! LID-PN mappings (`wa_lid_pn_mappings`): by LID, by phone (the most recently
//! updated LID), all. An update keeps the row's `created_at` (when the mapping
//! was first learned) and takes the rest from the new entry.
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::LidPnMappingEntry;

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::rows::{insert_rows, last_per_key};
use crate::store::tables::protocol::lid_pn_mappings::{ActiveModel, Column, Entity, Model};

fn entry(row: Model) -> LidPnMappingEntry {
    LidPnMappingEntry {
        lid: row.lid,
        phone_number: row.phone_number,
        created_at: row.created_at,
        updated_at: row.updated_at,
        learning_source: row.learning_source,
    }
}

pub(super) async fn by_lid(
    store: &SeaOrmDeviceStore,
    lid: &str,
) -> Result<Option<LidPnMappingEntry>> {
    Ok(Entity::find_by_id((store.id(), lid.to_string()))
        .one(store.conn())
        .await
        .map_err(db_err)?
        .map(entry))
}

pub(super) async fn by_phone(
    store: &SeaOrmDeviceStore,
    phone: &str,
) -> Result<Option<LidPnMappingEntry>> {
    Ok(Entity::find()
        .filter(Column::ClientId.eq(store.client_id.as_str()))
        .filter(Column::PhoneNumber.eq(phone))
        .order_by_desc(Column::UpdatedAt)
        .order_by_desc(Column::Lid)
        .one(store.conn())
        .await
        .map_err(db_err)?
        .map(entry))
}

pub(super) async fn put(store: &SeaOrmDeviceStore, entries: &[LidPnMappingEntry]) -> Result<()> {
    let rows: Vec<_> = last_per_key(entries.iter().collect(), |e| e.lid.clone())
        .into_iter()
        .map(|e| ActiveModel {
            client_id: Set(store.id()),
            lid: Set(e.lid.clone()),
            phone_number: Set(e.phone_number.clone()),
            created_at: Set(e.created_at),
            updated_at: Set(e.updated_at),
            learning_source: Set(e.learning_source.clone()),
        })
        .collect();
    let txn = store.write().await?;
    insert_rows(
        &txn,
        &rows,
        Some(
            &OnConflict::columns([Column::ClientId, Column::Lid])
                .update_columns([
                    Column::PhoneNumber,
                    Column::UpdatedAt,
                    Column::LearningSource,
                ])
                .to_owned(),
        ),
    )
    .await?;
    commit(txn).await
}

pub(super) async fn all(store: &SeaOrmDeviceStore) -> Result<Vec<LidPnMappingEntry>> {
    Ok(Entity::find()
        .filter(Column::ClientId.eq(store.client_id.as_str()))
        .order_by_asc(Column::Lid)
        .all(store.conn())
        .await
        .map_err(db_err)?
        .into_iter()
        .map(entry)
        .collect())
}
