//! Privacy tokens on the live connection. whatsapp-rust 0.7 carries their
//! lifecycle (a contact's trusted-contact token on each 1:1 message, else
//! the salted token made with the account's salt, issuing tokens after a
//! send), and the device store keeps the tokens and the salt, so they
//! survive a restart and follow the session to another worker.
//!
//! Two gaps are closed here. The props that turn tokens on come with each
//! login, fetched by the library in the background: a 1:1 message sent
//! right after a login (a session that moved to another worker, say) can go
//! before them, without a token, and be refused with 463. The first 1:1
//! send of a connection fetches them itself, once ([`props_loaded`]).
//!
//! And a companion gets its account's salt by app state
//! a few seconds after it is linked, and a first message to a contact who
//! never wrote, sent before the salt arrived, is refused with error 463. A
//! send refused so, from a device that had no salt, asks for the app-state
//! collection that carries the salt (the library fetches it only in its
//! first sync after linking, which a restart or a dropped socket can cut
//! short, and when the server says it changed), waits for the salt (at most
//! [`SALT_WAIT`]) and goes once more; the refused stanza reached no one, so
//! nothing is delivered twice. A 463 that remains is the customer's error,
//! naming its cause (`server_acks`). A device that logs in without its salt
//! asks for it in the background too, again every two seconds for a while:
//! a sync that ran beside another of the same collection, or before the
//! app-state key came, ends without it.
//!
//! A device can also hold the salt's collection without the salt: the
//! library stores a collection's new version as it applies a patch, and the
//! salt the patch carried only with the device's next save (a second at
//! most here, or the connection's close), so a worker that stopped, or a
//! close that raced the sync, in between left the version ahead of the
//! device. Syncing from that version brings nothing, so such a device
//! syncs the collection anew from a snapshot at login ([`salt_recovered`]).
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;
use whatsapp_rust::Client;
use whatsapp_rust::sync_task::MajorSyncTask;
use whatsapp_rust::wacore::appstate::hash::HashState;
use whatsapp_rust::wacore::appstate::patch_decode::WAPatchName;

/// How long a send refused for want of the salt waits for it.
pub const SALT_WAIT: Duration = Duration::from_secs(8);

/// How long a device that logs in without its account's salt keeps asking
/// for it in the background.
pub const LOGIN_SALT_WAIT: Duration = Duration::from_secs(30);

/// How often the wait looks at the device's salt.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// How often a wait asks for the salt's collection again: a sync that ran
/// beside another of the same collection, or before the app-state key
/// came, ends without it.
const ASK_EVERY: Duration = Duration::from_secs(2);

/// How many times a device that logs in without its salt syncs the salt's
/// collection anew from a snapshot: a sync the library ran beside the first
/// one (its own at login) may store its version over the reset.
const SNAPSHOTS: u32 = 2;

/// The app-state collection that carries the salt (`nct_salt_sync`).
const SALT_COLLECTION: WAPatchName = WAPatchName::RegularHigh;

/// The network's code for a 1:1 message without a valid privacy token.
const NO_TOKEN: &str = "463";

/// Fetches the network's props once per connection (`loaded`), before its
/// first 1:1 send; a failed fetch is tried again by the next send.
pub async fn props_loaded(client: &Client, loaded: &OnceCell<()>) {
    let fetched = loaded
        .get_or_try_init(|| async { client.fetch_props().await })
        .await;
    if let Err(e) = fetched {
        tracing::warn!(error = %e, "the network's props could not be fetched before a send");
    }
}

/// Whether the device holds its account's salt.
pub fn has_salt(client: &Client) -> bool {
    client
        .persistence_manager()
        .get_device_snapshot()
        .nct_salt
        .is_some()
}

/// Whether a send answered `error` may go again once the salt is here: a
/// 1:1 message refused for want of a token by a device that had no salt.
pub fn wants_salt(error: Option<&str>, to_group: bool, had_salt: bool) -> bool {
    error == Some(NO_TOKEN) && !to_group && !had_salt
}

/// At a login without the salt: syncs the salt's collection anew from a
/// snapshot when the device already holds a version of it (at most
/// [`SNAPSHOTS`] times, [`ASK_EVERY`] apart), then asks for it as
/// [`salt_arrives`] does, `wait` in all; whether it came.
pub async fn salt_recovered(client: &Arc<Client>, wait: Duration) -> bool {
    let until = tokio::time::Instant::now() + wait;
    for _ in 0..SNAPSHOTS {
        if has_salt(client) {
            return true;
        }
        match synced_anew(client).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                tracing::warn!(error = %e, "the salt's app-state collection could not be synced anew");
                break;
            }
        }
        if has_salt(client) {
            return true;
        }
        tokio::time::sleep(ASK_EVERY).await;
    }
    let left = until.saturating_duration_since(tokio::time::Instant::now());
    salt_arrives(client, left).await
}

/// When the device holds a version of the salt's collection, forgets it
/// (the library then asks for a snapshot, which takes the collection's
/// stale mutation MACs away too) and syncs the collection; whether it did.
async fn synced_anew(client: &Arc<Client>) -> anyhow::Result<bool> {
    let backend = client.persistence_manager().backend();
    let held = backend.get_version(SALT_COLLECTION.as_str()).await?;
    if held.version == 0 {
        return Ok(false);
    }
    tracing::info!(
        version = held.version,
        "the device holds the salt's app-state collection but not the salt: syncing it anew from a snapshot"
    );
    backend
        .set_version(SALT_COLLECTION.as_str(), HashState::default())
        .await?;
    client
        .process_sync_task(MajorSyncTask::AppStateSync {
            name: SALT_COLLECTION,
            full_sync: true,
        })
        .await;
    Ok(true)
}

/// Asks for the salt's app-state collection (again every [`ASK_EVERY`]),
/// and waits up to `wait` for the salt; whether it came.
pub async fn salt_arrives(client: &Arc<Client>, wait: Duration) -> bool {
    let until = tokio::time::Instant::now() + wait;
    let mut ask_at = tokio::time::Instant::now();
    loop {
        if has_salt(client) {
            return true;
        }
        let now = tokio::time::Instant::now();
        if now >= until {
            return false;
        }
        if now >= ask_at {
            let syncing = Arc::clone(client);
            tokio::spawn(async move {
                syncing
                    .process_sync_task(MajorSyncTask::AppStateSync {
                        name: SALT_COLLECTION,
                        full_sync: false,
                    })
                    .await;
            });
            ask_at = now + ASK_EVERY;
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_first_refusal_for_want_of_the_salt_goes_again() {
        assert!(wants_salt(Some("463"), false, false));
        // The device had its salt: the refusal stands.
        assert!(!wants_salt(Some("463"), false, true));
        // Groups need no token; other refusals stand.
        assert!(!wants_salt(Some("463"), true, false));
        assert!(!wants_salt(Some("403"), false, false));
        assert!(!wants_salt(None, false, false));
    }
}
