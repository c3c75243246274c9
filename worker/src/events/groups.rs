//! Group subjects for events: kept per session in the database, so every
//! worker names a group alike (also after a session moved). Learned from the
//! network's group metadata the first time a group is seen, and replaced when
//! the network says the subject changed.
use std::sync::Arc;

use parley_model::address::Jid;
use parley_model::ids::ClientId;
use parley_shared::db::Db;

use crate::network::Connection;

pub struct GroupBook {
    db: Db,
}

impl GroupBook {
    pub fn new(db: Db) -> GroupBook {
        GroupBook { db }
    }

    /// The subject of `group` for `client_id`: stored, else asked of the
    /// network (then stored). Empty when neither knows it; failures are only
    /// logged, the event goes on.
    pub async fn subject(
        &self,
        client_id: &ClientId,
        group: &str,
        connection: Option<&Arc<dyn Connection>>,
    ) -> String {
        match self.db.group_subject(client_id.as_str(), group).await {
            Ok(Some(subject)) => return subject,
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(client_id = %client_id, group, error = %e, "group subject not read");
                return String::new();
            }
        }
        let (Some(connection), Some(jid)) = (connection, Jid::parse(group)) else {
            return String::new();
        };
        match connection.group_metadata(&jid).await {
            Ok(meta) => {
                self.learn(client_id, group, &meta.subject).await;
                meta.subject
            }
            Err(e) => {
                tracing::debug!(client_id = %client_id, group, error = %e, "no group metadata");
                String::new()
            }
        }
    }

    /// Records the subject of `group` (a change the network announced, or a
    /// message that carried it).
    pub async fn learn(&self, client_id: &ClientId, group: &str, subject: &str) {
        if let Err(e) = self
            .db
            .set_group_subject(client_id.as_str(), group, subject)
            .await
        {
            tracing::warn!(client_id = %client_id, group, error = %e, "group subject not stored");
        }
    }
}
