//! Media sends running at once on one worker: each holds its file on disk
//! (and, with the real network, its encrypted copy) until the network took
//! it, so their number bounds the worker's scratch space. A send waits for a
//! slot briefly; when none frees up it is refused with nothing sent.
use std::sync::Arc;
use std::time::Duration;

use parley_contract::error::ApiError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a media send waits for a slot (well within the API's retry budget).
pub const SLOT_WAIT: Duration = Duration::from_secs(15);

/// The worker's media-send slots. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct Transfers {
    slots: Arc<Semaphore>,
    wait: Duration,
}

impl Transfers {
    /// `slots` sends at once (at least one).
    pub fn new(slots: usize) -> Transfers {
        Transfers {
            slots: Arc::new(Semaphore::new(slots.max(1))),
            wait: SLOT_WAIT,
        }
    }

    /// A slot, held until dropped; 503 after [`SLOT_WAIT`] without one.
    pub async fn slot(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        let acquire = Arc::clone(&self.slots).acquire_owned();
        match tokio::time::timeout(self.wait, acquire).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => {
                parley_shared::metrics::metrics().media_sends_refused.inc();
                Err(ApiError::unavailable(
                    "too many media sends in progress on this worker; nothing was sent, retry",
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_send_waits_for_a_slot_and_is_refused_when_none_frees_up() {
        let transfers = Transfers {
            wait: Duration::from_millis(200),
            ..Transfers::new(1)
        };
        let first = transfers.slot().await.expect("a free slot");
        let started = tokio::time::Instant::now();
        let refused = transfers.slot().await.unwrap_err();
        assert_eq!(refused.status, 503);
        assert!(
            started.elapsed() >= transfers.wait,
            "it waited the whole time"
        );
        let waiting = tokio::spawn({
            let transfers = transfers.clone();
            async move { transfers.slot().await.map(|_| ()) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(first);
        waiting
            .await
            .unwrap()
            .expect("a slot freed while it waited");
    }
}
