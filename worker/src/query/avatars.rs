//! `/refresh-avatars`: walks the session's hosted-inbox rooms and looks their
//! pictures up on the network at about 7 rooms per second, storing each new
//! picture version once as the room's `avatarUrl`.
use std::time::Duration;

use parley_contract::error::ApiError;
use parley_contract::wire::inbox::RefreshedAvatars;
use tokio::time::MissedTickBehavior;

use super::Querier;
use super::room_avatars::{Checked, RoomRef};

/// Time between two network lookups: about 7 per second.
pub const PACE: Duration = Duration::from_millis(1000 / 7);

impl Querier {
    /// Every room of the session: without `force` rooms that have a picture
    /// are skipped; with it they are looked up again (an unchanged picture is
    /// not copied again and counts as skipped).
    pub(super) async fn refresh_avatars(&self, force: bool) -> Result<RefreshedAvatars, ApiError> {
        let mut counts = RefreshedAvatars::default();
        let Some(avatars) = &self.avatars else {
            return Ok(counts);
        };
        let rooms = self
            .book
            .db
            .chat_rooms(self.book.client_id.as_str())
            .await?;
        let mut pace = tokio::time::interval(PACE);
        pace.set_missed_tick_behavior(MissedTickBehavior::Delay);
        for room in rooms {
            counts.rooms += 1;
            if !force && !room.avatar_url.is_empty() {
                counts.skipped += 1;
                continue;
            }
            pace.tick().await;
            let target = RoomRef {
                client_id: self.book.client_id.clone(),
                chat_room_id: room.chat_room_id.clone(),
                jid: room.remote_jid.clone(),
            };
            match avatars.check(self, &target, &room.avatar_url, true).await {
                Checked::Updated => counts.updated += 1,
                Checked::Unchanged => counts.skipped += 1,
                Checked::NoPhoto => counts.no_photo += 1,
                Checked::Failed => counts.failed += 1,
            }
        }
        Ok(counts)
    }
}
