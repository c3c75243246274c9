//! The subject of each group a session is in, kept with the group so every
//! worker names it alike in events (learned from group metadata, replaced when
//! the network says it changed).
use super::entities::group_subjects;
use super::{Db, DbError};

impl Db {
    /// The stored subject of the group `jid` for `client_id`.
    pub async fn group_subject(
        &self,
        client_id: &str,
        jid: &str,
    ) -> Result<Option<String>, DbError> {
        group_subjects::find(self, client_id, jid).await
    }

    /// Stores (replacing) the subject of the group `jid` for `client_id`.
    pub async fn set_group_subject(
        &self,
        client_id: &str,
        jid: &str,
        subject: &str,
    ) -> Result<(), DbError> {
        group_subjects::put(self, client_id, jid, subject).await
    }
}
