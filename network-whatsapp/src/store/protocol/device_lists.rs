//! Device lists (`wa_device_lists` + `wa_device_list_entries`, devices in list
//! order): a record is replaced as a whole, many records in one transaction.
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter, QueryOrder,
};
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::{DeviceInfo, DeviceListRecord};

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::rows::insert_rows;
use crate::store::tables::protocol::{device_list_entries, device_lists};
use crate::store::values::{big, u32_of};

pub(super) async fn put(store: &SeaOrmDeviceStore, records: Vec<DeviceListRecord>) -> Result<()> {
    let txn = store.write().await?;
    for record in records {
        put_one(store, &txn, record).await?;
    }
    commit(txn).await
}

async fn put_one(
    store: &SeaOrmDeviceStore,
    txn: &DatabaseTransaction,
    record: DeviceListRecord,
) -> Result<()> {
    let head = device_lists::ActiveModel {
        client_id: Set(store.id()),
        user_id: Set(record.user.clone()),
        timestamp: Set(record.timestamp),
        phash: Set(record.phash),
        raw_id: Set(record.raw_id.map(big)),
    };
    device_lists::Entity::insert(head)
        .on_conflict(
            OnConflict::columns([device_lists::Column::ClientId, device_lists::Column::UserId])
                .update_columns([
                    device_lists::Column::Timestamp,
                    device_lists::Column::Phash,
                    device_lists::Column::RawId,
                ])
                .to_owned(),
        )
        .exec_without_returning(txn)
        .await
        .map_err(db_err)?;
    delete_entries(store, txn, &record.user).await?;
    let entries: Vec<_> = record
        .devices
        .iter()
        .zip(0_i64..)
        .map(|(device, position)| device_list_entries::ActiveModel {
            client_id: Set(store.id()),
            user_id: Set(record.user.clone()),
            position: Set(position),
            device_id: Set(big(device.device_id)),
            key_index: Set(device.key_index.map(big)),
            is_hosted: Set(device.is_hosted),
        })
        .collect();
    insert_rows(txn, &entries, None).await?;
    Ok(())
}

async fn delete_entries(
    store: &SeaOrmDeviceStore,
    txn: &DatabaseTransaction,
    user: &str,
) -> Result<()> {
    device_list_entries::Entity::delete_many()
        .filter(device_list_entries::Column::ClientId.eq(store.client_id.as_str()))
        .filter(device_list_entries::Column::UserId.eq(user))
        .exec(txn)
        .await
        .map_err(db_err)?;
    Ok(())
}

pub(super) async fn get(store: &SeaOrmDeviceStore, user: &str) -> Result<Option<DeviceListRecord>> {
    let Some(head) = device_lists::Entity::find_by_id((store.id(), user.to_string()))
        .one(store.conn())
        .await
        .map_err(db_err)?
    else {
        return Ok(None);
    };
    let devices = device_list_entries::Entity::find()
        .filter(device_list_entries::Column::ClientId.eq(store.client_id.as_str()))
        .filter(device_list_entries::Column::UserId.eq(user))
        .order_by_asc(device_list_entries::Column::Position)
        .all(store.conn())
        .await
        .map_err(db_err)?
        .into_iter()
        .map(|row| {
            let key_index = row
                .key_index
                .map(|k| u32_of("device key index", k))
                .transpose()?;
            Ok(
                DeviceInfo::new(u32_of("device id", row.device_id)?, key_index)
                    .with_hosting(row.is_hosted),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(DeviceListRecord {
        user: head.user_id,
        devices,
        timestamp: head.timestamp,
        phash: head.phash,
        raw_id: head
            .raw_id
            .map(|r| u32_of("device list raw id", r))
            .transpose()?,
    }))
}

pub(super) async fn delete(store: &SeaOrmDeviceStore, user: &str) -> Result<()> {
    let txn = store.write().await?;
    delete_entries(store, &txn, user).await?;
    device_lists::Entity::delete_by_id((store.id(), user.to_string()))
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}
