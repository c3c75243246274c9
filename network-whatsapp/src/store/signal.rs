//! `SignalStore`: identity keys, sessions, pre-keys, signed pre-keys and sender
//! keys. Every write but a login's pre-key upload (hundreds of keys, which a
//! batched write would hold until its batch commits, with every other
//! session's logging in at the same time) is a batched fenced write
//! (with the received messages held before it): on SQLite it rides in the
//! event log's next transaction, so a received message's identity, its
//! consumed pre-key and its session cost no commit of their own.
use std::sync::Arc;

use bytes::Bytes;
use sea_orm::sea_query::{Expr, ExprTrait, Func, OnConflict};
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::SignalStore;

use super::SeaOrmDeviceStore;
use super::error::db_err;
use super::fence::commit;
use super::rows::{CHUNK, insert_rows, last_per_key};
use super::sealed::{PREKEYS, SENDER_KEYS, SESSIONS, SIGNED_PREKEYS};
use super::tables::signal::{identities, prekeys, sender_keys, sessions, signed_prekeys};
use super::values::{array, big, u32_of};

#[async_trait::async_trait]
impl SignalStore for SeaOrmDeviceStore {
    async fn put_identity(&self, address: &str, key: [u8; 32]) -> Result<()> {
        self.put_identities_batch(&[(Arc::from(address), key)])
            .await
    }

    async fn put_identities_batch(&self, identities: &[(Arc<str>, [u8; 32])]) -> Result<()> {
        let rows: Vec<_> = last_per_key(identities.to_vec(), |(address, _)| address.clone())
            .iter()
            .map(|(address, key)| identities::ActiveModel {
                client_id: Set(self.id()),
                address: Set(address.to_string()),
                identity_key: Set(key.to_vec()),
            })
            .collect();
        self.fenced_upsert(
            rows,
            [identities::Column::ClientId, identities::Column::Address],
            [identities::Column::IdentityKey],
        )
        .await
    }

    async fn load_identity(&self, address: &str) -> Result<Option<[u8; 32]>> {
        identities::Entity::find_by_id((self.id(), address.to_string()))
            .one(self.conn())
            .await
            .map_err(db_err)?
            .map(|row| array("identity key", &row.identity_key))
            .transpose()
    }

    async fn delete_identity(&self, address: &str) -> Result<()> {
        self.fenced_query(identities::Entity::delete_by_id((
            self.id(),
            address.to_string(),
        )))
        .await
    }

    async fn get_session(&self, address: &str) -> Result<Option<Bytes>> {
        Ok(
            sessions::Entity::find_by_id((self.id(), address.to_string()))
                .one(self.conn())
                .await
                .map_err(db_err)?
                .map(|row| self.open(SESSIONS, address, &row.record).map(Bytes::from))
                .transpose()?,
        )
    }

    async fn put_session(&self, address: &str, session: &[u8]) -> Result<()> {
        self.put_sessions_batch(&[(Arc::from(address), Bytes::copy_from_slice(session))])
            .await
    }

    async fn put_sessions_batch(&self, sessions: &[(Arc<str>, Bytes)]) -> Result<()> {
        let rows: Vec<_> = last_per_key(sessions.to_vec(), |(address, _)| address.clone())
            .iter()
            .map(|(address, record)| sessions::ActiveModel {
                client_id: Set(self.id()),
                address: Set(address.to_string()),
                record: Set(self.seal(SESSIONS, address, record)),
            })
            .collect();
        self.fenced_upsert(
            rows,
            [sessions::Column::ClientId, sessions::Column::Address],
            [sessions::Column::Record],
        )
        .await
    }

    async fn delete_session(&self, address: &str) -> Result<()> {
        self.fenced_query(sessions::Entity::delete_by_id((
            self.id(),
            address.to_string(),
        )))
        .await
    }

    async fn has_session(&self, address: &str) -> Result<bool> {
        let found: Option<String> = sessions::Entity::find_by_id((self.id(), address.to_string()))
            .select_only()
            .column(sessions::Column::Address)
            .into_tuple()
            .one(self.conn())
            .await
            .map_err(db_err)?;
        Ok(found.is_some())
    }

    /// Any session or identity at `user@…` or `user:<device>@…`.
    async fn has_signal_state_for_user(&self, user: &str) -> Result<bool> {
        let session: Option<String> = sessions::Entity::find()
            .select_only()
            .column(sessions::Column::Address)
            .filter(sessions::Column::ClientId.eq(self.client_id.as_str()))
            .filter(of_user(sessions::Column::Address, user))
            .into_tuple()
            .one(self.conn())
            .await
            .map_err(db_err)?;
        if session.is_some() {
            return Ok(true);
        }
        let identity: Option<String> = identities::Entity::find()
            .select_only()
            .column(identities::Column::Address)
            .filter(identities::Column::ClientId.eq(self.client_id.as_str()))
            .filter(of_user(identities::Column::Address, user))
            .into_tuple()
            .one(self.conn())
            .await
            .map_err(db_err)?;
        Ok(identity.is_some())
    }

    async fn store_prekey(&self, id: u32, record: &[u8], uploaded: bool) -> Result<()> {
        self.store_prekeys_batch(&[(id, Bytes::copy_from_slice(record))], uploaded)
            .await
    }

    async fn store_prekeys_batch(&self, keys: &[(u32, Bytes)], uploaded: bool) -> Result<()> {
        let rows: Vec<_> = last_per_key(keys.to_vec(), |(id, _)| *id)
            .iter()
            .map(|(id, record)| prekeys::ActiveModel {
                client_id: Set(self.id()),
                id: Set(big(*id)),
                record: Set(self.seal(PREKEYS, &id.to_string(), record)),
                uploaded: Set(uploaded),
            })
            .collect();
        // A login's hundreds of sealed keys: a transaction of their own.
        let txn = self.write().await?;
        let on_conflict = OnConflict::columns([prekeys::Column::ClientId, prekeys::Column::Id])
            .update_columns([prekeys::Column::Record, prekeys::Column::Uploaded])
            .to_owned();
        insert_rows(&txn, &rows, Some(&on_conflict)).await?;
        commit(txn).await
    }

    async fn load_prekey(&self, id: u32) -> Result<Option<Bytes>> {
        prekeys::Entity::find_by_id((self.id(), big(id)))
            .one(self.conn())
            .await
            .map_err(db_err)?
            .map(|row| {
                self.open(PREKEYS, &id.to_string(), &row.record)
                    .map(Bytes::from)
            })
            .transpose()
    }

    /// One query over the range the ids span (a device keeps a window of
    /// some hundred pre-keys, and the server's key digest at every login
    /// asks for all of them); only the keys asked for are opened.
    async fn load_prekeys_batch(&self, ids: &[u32]) -> Result<Vec<(u32, Bytes)>> {
        let (Some(low), Some(high)) = (ids.iter().min(), ids.iter().max()) else {
            return Ok(Vec::new());
        };
        // In the order asked for, as the default implementation answers.
        let mut order = std::collections::HashMap::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            order.entry(*id).or_insert(i);
        }
        let rows = prekeys::Entity::find()
            .filter(prekeys::Column::ClientId.eq(self.client_id.as_str()))
            .filter(prekeys::Column::Id.between(big(*low), big(*high)))
            .all(self.conn())
            .await
            .map_err(db_err)?;
        let mut found = Vec::with_capacity(ids.len());
        for row in rows {
            let id = u32_of("pre-key id", row.id)?;
            if order.contains_key(&id) {
                let record = self.open(PREKEYS, &id.to_string(), &row.record)?;
                found.push((id, Bytes::from(record)));
            }
        }
        found.sort_by_key(|(id, _)| order.get(id).copied());
        Ok(found)
    }

    /// UPDATE only: a key consumed since the upload snapshot stays deleted.
    async fn mark_prekeys_uploaded(&self, ids: &[u32]) -> Result<()> {
        // A login's hundreds of ids: a transaction of their own (as
        // `store_prekeys_batch`).
        let txn = self.write().await?;
        for chunk in ids.chunks(CHUNK) {
            prekeys::Entity::update_many()
                .col_expr(prekeys::Column::Uploaded, Expr::value(true))
                .filter(prekeys::Column::ClientId.eq(self.client_id.as_str()))
                .filter(prekeys::Column::Id.is_in(chunk.iter().map(|id| big(*id))))
                .exec(&txn)
                .await
                .map_err(db_err)?;
        }
        commit(txn).await
    }

    async fn remove_prekey(&self, id: u32) -> Result<()> {
        self.fenced_query(prekeys::Entity::delete_by_id((self.id(), big(id))))
            .await
    }

    async fn get_max_prekey_id(&self) -> Result<u32> {
        let max: Option<i64> = prekeys::Entity::find()
            .select_only()
            .column(prekeys::Column::Id)
            .filter(prekeys::Column::ClientId.eq(self.client_id.as_str()))
            .order_by_desc(prekeys::Column::Id)
            .into_tuple()
            .one(self.conn())
            .await
            .map_err(db_err)?;
        max.map_or(Ok(0), |id| u32_of("pre-key id", id))
    }

    async fn store_signed_prekey(&self, id: u32, record: &[u8]) -> Result<()> {
        let row = signed_prekeys::ActiveModel {
            client_id: Set(self.id()),
            id: Set(big(id)),
            record: Set(self.seal(SIGNED_PREKEYS, &id.to_string(), record)),
        };
        self.fenced_upsert(
            vec![row],
            [signed_prekeys::Column::ClientId, signed_prekeys::Column::Id],
            [signed_prekeys::Column::Record],
        )
        .await
    }

    async fn load_signed_prekey(&self, id: u32) -> Result<Option<Vec<u8>>> {
        signed_prekeys::Entity::find_by_id((self.id(), big(id)))
            .one(self.conn())
            .await
            .map_err(db_err)?
            .map(|row| self.open(SIGNED_PREKEYS, &id.to_string(), &row.record))
            .transpose()
    }

    async fn load_all_signed_prekeys(&self) -> Result<Vec<(u32, Vec<u8>)>> {
        signed_prekeys::Entity::find()
            .filter(signed_prekeys::Column::ClientId.eq(self.client_id.as_str()))
            .order_by_asc(signed_prekeys::Column::Id)
            .all(self.conn())
            .await
            .map_err(db_err)?
            .into_iter()
            .map(|row| {
                let id = u32_of("signed pre-key id", row.id)?;
                Ok((id, self.open(SIGNED_PREKEYS, &id.to_string(), &row.record)?))
            })
            .collect()
    }

    async fn remove_signed_prekey(&self, id: u32) -> Result<()> {
        self.fenced_query(signed_prekeys::Entity::delete_by_id((self.id(), big(id))))
            .await
    }

    async fn put_sender_key(&self, address: &str, record: &[u8]) -> Result<()> {
        self.put_sender_keys_batch(&[(Arc::from(address), Bytes::copy_from_slice(record))])
            .await
    }

    async fn put_sender_keys_batch(&self, sender_keys: &[(Arc<str>, Bytes)]) -> Result<()> {
        let rows: Vec<_> = last_per_key(sender_keys.to_vec(), |(address, _)| address.clone())
            .iter()
            .map(|(address, record)| sender_keys::ActiveModel {
                client_id: Set(self.id()),
                address: Set(address.to_string()),
                record: Set(self.seal(SENDER_KEYS, address, record)),
            })
            .collect();
        self.fenced_upsert(
            rows,
            [sender_keys::Column::ClientId, sender_keys::Column::Address],
            [sender_keys::Column::Record],
        )
        .await
    }

    async fn get_sender_key(&self, address: &str) -> Result<Option<Vec<u8>>> {
        Ok(
            sender_keys::Entity::find_by_id((self.id(), address.to_string()))
                .one(self.conn())
                .await
                .map_err(db_err)?
                .map(|row| self.open(SENDER_KEYS, address, &row.record))
                .transpose()?,
        )
    }

    async fn delete_sender_key(&self, address: &str) -> Result<()> {
        self.fenced_query(sender_keys::Entity::delete_by_id((
            self.id(),
            address.to_string(),
        )))
        .await
    }
}

/// `address` starts with `user@` or `user:` (a prefix test without LIKE, so no
/// character of `user` acts as a wildcard).
fn of_user(address: impl ColumnTrait, user: &str) -> Expr {
    // INTEGER arguments: PostgreSQL has no substr(text, integer, bigint).
    let len = i32::try_from(user.chars().count() + 1).unwrap_or(i32::MAX);
    Expr::expr(
        Func::cust("substr")
            .arg(Expr::col(address))
            .arg(1_i32)
            .arg(len),
    )
    .is_in([format!("{user}@"), format!("{user}:")])
}
