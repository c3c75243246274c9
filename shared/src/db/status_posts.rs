//! The status updates a session posted in the last day and who saw them:
//! deleting one is encrypted to that same audience, by any owner.
use super::entities::status_posts;
use super::{Db, DbError};

pub use status_posts::STATUS_LIFETIME_HOURS;

impl Db {
    /// Remembers the status `message_id` the session posted to `audience`.
    pub async fn remember_status(
        &self,
        client_id: &str,
        message_id: &str,
        audience: &[String],
    ) -> Result<(), DbError> {
        status_posts::put(self, client_id, message_id, audience).await
    }

    /// Who the session's status `message_id` was shown to; `None` when it
    /// posted no such status in the last [`STATUS_LIFETIME_HOURS`] hours.
    pub async fn status_audience(
        &self,
        client_id: &str,
        message_id: &str,
    ) -> Result<Option<Vec<String>>, DbError> {
        status_posts::audience(self, client_id, message_id).await
    }

    /// Forgets the session's status `message_id` (deleted).
    pub async fn forget_status(&self, client_id: &str, message_id: &str) -> Result<(), DbError> {
        status_posts::forget(self, client_id, message_id).await
    }
}
