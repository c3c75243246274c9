//! Room avatars of the hosted inbox: each room's picture is looked up when the
//! room is first seen by this worker and again once the 24 h picture cache has
//! expired, in the background (an event never waits for the network), and its
//! permanent copy (mirrored once per picture version) becomes the room's
//! `avatarUrl`. Events carry the avatar known when they are processed.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use parley_model::ids::ClientId;
use parley_shared::db::Db;
use parley_shared::media::MediaStore;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::Querier;
use super::book::Book;
use crate::network::Connection;

/// How long a room's picture is trusted before it is looked up again (the
/// profile-picture cache's lifetime).
const RECHECK: Duration = Duration::from_secs(24 * 3600);
/// How long after a failed lookup the room is tried again.
const RETRY: Duration = Duration::from_secs(300);
/// Background lookups running at once in one worker.
const CONCURRENT: usize = 4;
/// Rooms remembered before the memory starts over.
const REMEMBERED: usize = 100_000;
/// Deadline of one network call of a background lookup.
const NETWORK_TIMEOUT: Duration = Duration::from_secs(20);

/// A room whose picture is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomRef {
    pub client_id: ClientId,
    pub chat_room_id: String,
    /// The contact's or the group's JID.
    pub jid: String,
}

/// What a look at a room's picture did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// The room got a new permanent link.
    Updated,
    /// The room's picture is the one it had.
    Unchanged,
    /// No picture, or hidden by privacy: the room's `avatarUrl` is empty.
    NoPhoto,
    /// The lookup or the copy failed; the room keeps what it had.
    Failed,
}

struct Known {
    url: String,
    next_check: Instant,
    checking: bool,
}

/// The rooms' avatars as this worker knows them.
pub struct Avatars {
    db: Db,
    media: Arc<dyn MediaStore>,
    known: Mutex<HashMap<(String, String), Known>>,
    lookups: Semaphore,
}

impl Avatars {
    pub fn new(db: Db, media: Arc<dyn MediaStore>) -> Arc<Avatars> {
        Arc::new(Avatars {
            db,
            media,
            known: Mutex::new(HashMap::new()),
            lookups: Semaphore::new(CONCURRENT),
        })
    }

    /// The room's avatar as last looked up by this worker; empty when unknown.
    pub fn url(&self, client_id: &ClientId, chat_room_id: &str) -> String {
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known
            .get(&(client_id.to_string(), chat_room_id.to_string()))
            .map(|k| k.url.clone())
            .unwrap_or_default()
    }

    /// Looks the room's picture up in the background when it is due (first
    /// sight, or the last look is older than the cache), one look per room at a time.
    pub fn watch(self: &Arc<Self>, room: RoomRef, my_lid: &str, connection: Arc<dyn Connection>) {
        if !self.claim(&room) {
            return;
        }
        let querier = self.querier(&room.client_id, my_lid, connection);
        let avatars = Arc::clone(self);
        tokio::spawn(async move {
            let _permit = avatars.lookups.acquire().await;
            let current = match avatars
                .db
                .chat_room(room.client_id.as_str(), &room.chat_room_id)
                .await
            {
                Ok(row) => row.map(|r| r.avatar_url).unwrap_or_default(),
                Err(e) => {
                    tracing::warn!(error = %e, "room not read for its avatar");
                    avatars.settle(&room, None, RETRY);
                    return;
                }
            };
            avatars.check(&querier, &room, &current, false).await;
        });
    }

    /// Looks the room's picture up (`refresh`: asking the network, else the
    /// 24 h cache first) and stores its permanent link as the room's `avatarUrl`.
    pub async fn check(
        &self,
        querier: &Querier,
        room: &RoomRef,
        current: &str,
        refresh: bool,
    ) -> Checked {
        let url = match querier.room_picture(&room.jid, refresh).await {
            Ok(url) => url.unwrap_or_default(),
            Err(e) => {
                tracing::warn!(client_id = %room.client_id, error = %e.message, "room avatar not looked up");
                self.settle(room, None, RETRY);
                return Checked::Failed;
            }
        };
        if url != current
            && let Err(e) = self
                .db
                .set_room_avatar(room.client_id.as_str(), &room.chat_room_id, &url)
                .await
        {
            tracing::warn!(client_id = %room.client_id, error = %e, "room avatar not stored");
            self.settle(room, None, RETRY);
            return Checked::Failed;
        }
        self.settle(room, Some(url.clone()), RECHECK);
        if url.is_empty() {
            Checked::NoPhoto
        } else if url != current {
            Checked::Updated
        } else {
            Checked::Unchanged
        }
    }

    /// A querier for background lookups on `connection`.
    fn querier(
        &self,
        client_id: &ClientId,
        my_lid: &str,
        connection: Arc<dyn Connection>,
    ) -> Querier {
        Querier {
            connection,
            book: Book::new(self.db.clone(), client_id, None),
            media: Arc::clone(&self.media),
            avatars: None,
            my_jid: String::new(),
            my_lid: my_lid.to_string(),
            network_timeout: NETWORK_TIMEOUT,
        }
    }

    /// Marks the room as being looked up; `false` when it is not due or already is.
    fn claim(&self, room: &RoomRef) -> bool {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (room.client_id.to_string(), room.chat_room_id.clone());
        if let Some(k) = known.get_mut(&key) {
            if k.checking || k.next_check > Instant::now() {
                return false;
            }
            k.checking = true;
            return true;
        }
        if known.len() >= REMEMBERED {
            known.retain(|_, k| k.checking);
        }
        known.insert(
            key,
            Known {
                url: String::new(),
                next_check: Instant::now(),
                checking: true,
            },
        );
        true
    }

    /// Records a look's result (`url`: `None` keeps the known one) and when the
    /// room is due again.
    fn settle(&self, room: &RoomRef, url: Option<String>, again_in: Duration) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        let k = known
            .entry((room.client_id.to_string(), room.chat_room_id.clone()))
            .or_insert_with(|| Known {
                url: String::new(),
                next_check: Instant::now(),
                checking: false,
            });
        if let Some(url) = url {
            k.url = url;
        }
        k.next_check = Instant::now() + again_in;
        k.checking = false;
    }
}

#[cfg(test)]
mod tests {
    use parley_shared::media::fs::FsMediaStore;

    use super::*;

    #[tokio::test]
    async fn a_room_is_looked_up_once_until_it_is_due_again() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&format!("sqlite://{}", dir.path().join("a.db").display()))
            .await
            .unwrap();
        let store = Arc::new(FsMediaStore::new(dir.path().join("m"), "http://x"));
        let avatars = Avatars::new(db, store);
        let room = RoomRef {
            client_id: ClientId::parse("shop").unwrap(),
            chat_room_id: "shop-1-2".into(),
            jid: "2@lid".into(),
        };
        let shop = room.client_id.clone();
        assert!(avatars.claim(&room), "first sight");
        assert!(!avatars.claim(&room), "one look at a time");
        assert_eq!(avatars.url(&shop, "shop-1-2"), "");
        avatars.settle(&room, Some("https://m/a.png".into()), RECHECK);
        assert!(!avatars.claim(&room), "fresh for a day");
        assert_eq!(avatars.url(&shop, "shop-1-2"), "https://m/a.png");
        assert_eq!(avatars.url(&shop, "shop-1-3"), "");
        // A failed look keeps the known link and is due again later.
        avatars.settle(&room, None, Duration::ZERO);
        assert_eq!(avatars.url(&shop, "shop-1-2"), "https://m/a.png");
        assert!(avatars.claim(&room), "due again");
    }
}
