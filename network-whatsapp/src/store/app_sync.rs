//! `AppSyncStore`: app-state sync keys (the latest by storage order), collection
//! versions with their ltHash and index values, and mutation MACs.
use std::collections::HashMap;

use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, QueryTrait,
};
use whatsapp_rust::wacore::appstate::hash::HashState;
use whatsapp_rust::wacore::appstate::processor::AppStateMutationMAC;
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::{AppStateSyncKey, AppSyncStore};

use super::SeaOrmDeviceStore;
use super::error::db_err;
use super::fence::commit;
use super::rows::{CHUNK, insert_rows, last_per_key};
use super::sealed::SYNC_KEYS;
use super::tables::app_sync::{index_values, mutation_macs, sync_keys, versions};
use super::values::{array, big_u64, u64_of};

#[async_trait::async_trait]
impl AppSyncStore for SeaOrmDeviceStore {
    async fn get_sync_key(&self, key_id: &[u8]) -> Result<Option<AppStateSyncKey>> {
        let Some(row) = sync_keys::Entity::find_by_id((self.id(), key_id.to_vec()))
            .one(self.conn())
            .await
            .map_err(db_err)?
        else {
            return Ok(None);
        };
        Ok(Some(AppStateSyncKey {
            key_data: self.open(SYNC_KEYS, &hex::encode(key_id), &row.key_data)?,
            fingerprint: row.fingerprint,
            timestamp: row.timestamp,
        }))
    }

    /// Upserts the key and makes it the latest (`seq` = highest so far + 1; the
    /// fenced transaction serializes writers, so the sequence has no races).
    async fn set_sync_key(&self, key_id: &[u8], key: AppStateSyncKey) -> Result<()> {
        let txn = self.write().await?;
        let last: Option<i64> = sync_keys::Entity::find()
            .select_only()
            .column(sync_keys::Column::Seq)
            .filter(sync_keys::Column::ClientId.eq(self.client_id.as_str()))
            .order_by_desc(sync_keys::Column::Seq)
            .into_tuple()
            .one(&txn)
            .await
            .map_err(db_err)?;
        let row = sync_keys::ActiveModel {
            client_id: Set(self.id()),
            key_id: Set(key_id.to_vec()),
            key_data: Set(self.seal(SYNC_KEYS, &hex::encode(key_id), &key.key_data)),
            fingerprint: Set(key.fingerprint),
            timestamp: Set(key.timestamp),
            seq: Set(last.unwrap_or(0).saturating_add(1)),
        };
        sync_keys::Entity::insert(row)
            .on_conflict(
                OnConflict::columns([sync_keys::Column::ClientId, sync_keys::Column::KeyId])
                    .update_columns([
                        sync_keys::Column::KeyData,
                        sync_keys::Column::Fingerprint,
                        sync_keys::Column::Timestamp,
                        sync_keys::Column::Seq,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&txn)
            .await
            .map_err(db_err)?;
        commit(txn).await
    }

    async fn get_version(&self, name: &str) -> Result<HashState> {
        let Some(row) = versions::Entity::find_by_id((self.id(), name.to_string()))
            .one(self.conn())
            .await
            .map_err(db_err)?
        else {
            return Ok(HashState::default());
        };
        let index_value_map = index_values::Entity::find()
            .filter(index_values::Column::ClientId.eq(self.client_id.as_str()))
            .filter(index_values::Column::Name.eq(name))
            .all(self.conn())
            .await
            .map_err(db_err)?
            .into_iter()
            .map(|v| (v.index_key, v.value))
            .collect();
        Ok(HashState {
            version: u64_of("app state version", row.version)?,
            hash: array("app state hash", &row.hash)?,
            index_value_map,
            mac_mismatch_fatal: row.mac_mismatch_fatal,
        })
    }

    /// Makes the collection's version, hash and index values `state`, in
    /// one transaction, writing only what differs from what is stored: a
    /// sync that changed nothing (every login syncs every collection) writes
    /// nothing, and a patch writes the index values it set or removed, not
    /// the whole collection again. The stored version row is compared
    /// first: the same version and ltHash (a hash over every index value)
    /// is the same collection.
    async fn set_version(&self, name: &str, state: HashState) -> Result<()> {
        let version = big_u64("app state version", state.version)?;
        let stored = versions::Entity::find_by_id((self.id(), name.to_string()))
            .one(self.conn())
            .await
            .map_err(db_err)?;
        if stored.as_ref().is_some_and(|row| {
            row.version == version
                && row.hash == state.hash
                && row.mac_mismatch_fatal == state.mac_mismatch_fatal
        }) {
            return Ok(());
        }
        let row = versions::ActiveModel {
            client_id: Set(self.id()),
            name: Set(name.to_string()),
            version: Set(version),
            hash: Set(state.hash.to_vec()),
            mac_mismatch_fatal: Set(state.mac_mismatch_fatal),
        };
        let txn = self.write().await?;
        versions::Entity::insert(row)
            .on_conflict(
                OnConflict::columns([versions::Column::ClientId, versions::Column::Name])
                    .update_columns([
                        versions::Column::Version,
                        versions::Column::Hash,
                        versions::Column::MacMismatchFatal,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&txn)
            .await
            .map_err(db_err)?;
        let held: HashMap<String, Vec<u8>> = index_values::Entity::find()
            .filter(index_values::Column::ClientId.eq(self.client_id.as_str()))
            .filter(index_values::Column::Name.eq(name))
            .all(&txn)
            .await
            .map_err(db_err)?
            .into_iter()
            .map(|v| (v.index_key, v.value))
            .collect();
        let (gone, set) = index_changes(held, state.index_value_map);
        for chunk in gone.chunks(CHUNK) {
            index_values::Entity::delete_many()
                .filter(index_values::Column::ClientId.eq(self.client_id.as_str()))
                .filter(index_values::Column::Name.eq(name))
                .filter(index_values::Column::IndexKey.is_in(chunk.iter().cloned()))
                .exec(&txn)
                .await
                .map_err(db_err)?;
        }
        let values: Vec<_> = set
            .into_iter()
            .map(|(index_key, value)| index_values::ActiveModel {
                client_id: Set(self.id()),
                name: Set(name.to_string()),
                index_key: Set(index_key),
                value: Set(value),
            })
            .collect();
        let upsert = OnConflict::columns([
            index_values::Column::ClientId,
            index_values::Column::Name,
            index_values::Column::IndexKey,
        ])
        .update_column(index_values::Column::Value)
        .to_owned();
        insert_rows(&txn, &values, Some(&upsert)).await?;
        commit(txn).await
    }

    async fn put_mutation_macs(
        &self,
        name: &str,
        version: u64,
        mutations: &[AppStateMutationMAC],
    ) -> Result<()> {
        let version = big_u64("app state version", version)?;
        let rows: Vec<_> = last_per_key(mutations.to_vec(), |m| m.index_mac.clone())
            .iter()
            .map(|m| mutation_macs::ActiveModel {
                client_id: Set(self.id()),
                name: Set(name.to_string()),
                index_mac: Set(m.index_mac.clone()),
                version: Set(version),
                value_mac: Set(m.value_mac.clone()),
            })
            .collect();
        let txn = self.write().await?;
        insert_rows(
            &txn,
            &rows,
            Some(
                &OnConflict::columns([
                    mutation_macs::Column::ClientId,
                    mutation_macs::Column::Name,
                    mutation_macs::Column::IndexMac,
                ])
                .update_columns([
                    mutation_macs::Column::Version,
                    mutation_macs::Column::ValueMac,
                ])
                .to_owned(),
            ),
        )
        .await?;
        commit(txn).await
    }

    async fn get_mutation_mac(&self, name: &str, index_mac: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(
            mutation_macs::Entity::find_by_id((self.id(), name.to_string(), index_mac.to_vec()))
                .one(self.conn())
                .await
                .map_err(db_err)?
                .map(|row| row.value_mac),
        )
    }

    /// One `IN (...)` query per chunk instead of a query per MAC.
    async fn get_mutation_macs(
        &self,
        name: &str,
        index_macs: &[[u8; 32]],
    ) -> Result<HashMap<[u8; 32], Vec<u8>>> {
        let mut found = HashMap::with_capacity(index_macs.len());
        for chunk in index_macs.chunks(CHUNK) {
            let rows = mutation_macs::Entity::find()
                .filter(mutation_macs::Column::ClientId.eq(self.client_id.as_str()))
                .filter(mutation_macs::Column::Name.eq(name))
                .filter(mutation_macs::Column::IndexMac.is_in(chunk.iter().map(|m| m.to_vec())))
                .all(self.conn())
                .await
                .map_err(db_err)?;
            for row in rows {
                found.insert(array("index MAC", &row.index_mac)?, row.value_mac);
            }
        }
        Ok(found)
    }

    async fn delete_mutation_macs(&self, name: &str, index_macs: &[Vec<u8>]) -> Result<()> {
        let (client_id, name, index_macs) = (self.id(), name.to_string(), index_macs.to_vec());
        self.batched(move |backend| {
            index_macs
                .chunks(CHUNK)
                .map(|chunk| {
                    mutation_macs::Entity::delete_many()
                        .filter(mutation_macs::Column::ClientId.eq(client_id.as_str()))
                        .filter(mutation_macs::Column::Name.eq(name.as_str()))
                        .filter(mutation_macs::Column::IndexMac.is_in(chunk.iter().cloned()))
                        .build(backend)
                })
                .collect()
        })
        .await
    }

    async fn clear_mutation_macs(&self, name: &str) -> Result<()> {
        let clear = mutation_macs::Entity::delete_many()
            .filter(mutation_macs::Column::ClientId.eq(self.client_id.as_str()))
            .filter(mutation_macs::Column::Name.eq(name));
        self.batched(move |backend| vec![clear.build(backend)])
            .await
    }

    async fn get_latest_sync_key_id(&self) -> Result<Option<Vec<u8>>> {
        sync_keys::Entity::find()
            .select_only()
            .column(sync_keys::Column::KeyId)
            .filter(sync_keys::Column::ClientId.eq(self.client_id.as_str()))
            .order_by_desc(sync_keys::Column::Seq)
            .into_tuple()
            .one(self.conn())
            .await
            .map_err(db_err)
    }
}

/// What turns the index values `held` into `wanted`: the keys to remove,
/// and the keys to set with their values (new ones and changed ones).
fn index_changes(
    mut held: HashMap<String, Vec<u8>>,
    wanted: HashMap<String, Vec<u8>>,
) -> (Vec<String>, Vec<(String, Vec<u8>)>) {
    let mut set = Vec::new();
    for (key, value) in wanted {
        match held.remove(&key) {
            Some(was) if was == value => {}
            _ => set.push((key, value)),
        }
    }
    (held.into_keys().collect(), set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_index_values_that_changed_are_written() {
        let held = HashMap::from([
            ("same".to_string(), vec![1]),
            ("changed".to_string(), vec![2]),
            ("gone".to_string(), vec![3]),
        ]);
        let wanted = HashMap::from([
            ("same".to_string(), vec![1]),
            ("changed".to_string(), vec![9]),
            ("new".to_string(), vec![4]),
        ]);
        let (gone, mut set) = index_changes(held, wanted);
        set.sort();
        assert_eq!(gone, ["gone"]);
        assert_eq!(
            set,
            [
                ("changed".to_string(), vec![9]),
                ("new".to_string(), vec![4])
            ]
        );
    }
}
