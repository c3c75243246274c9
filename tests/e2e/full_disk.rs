//! `parley serve` on a full disk, on either network. Its data directory is a
//! small file system of its own (a tmpfs in a private mount namespace, made
//! by `unshare`, reached from here through `/proc/<pid>/cwd`), which the test
//! fills while contacts write and the customer sends: writes are refused
//! with a clear answer, a send before it leaves (nothing sent), and the
//! process stays up; once space returns they go through again without a
//! restart, and a contact's message the network took meanwhile is logged;
//! nothing stored before is lost (every event is in the log, `seq` without a
//! gap) or damaged (SQLite's integrity check).
use std::io::Write;
use std::path::{Path, PathBuf};

use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use crate::events::ownership::logged;
use crate::events::support::{EVENT_VARS, contact, hooked};
use crate::support::*;

const ID: &str = "disk";

/// `parley serve` whose `parley-data` is a tmpfs of `size` (e.g. `24m`).
async fn serve_on_small_disk(dir: &Path, size: &str) -> Parley {
    let script = format!(
        "mkdir -p parley-data && mount -t tmpfs -o size={size} tmpfs parley-data && exec \"$0\" serve"
    );
    let mut all = vars(&[("PARLEY_ACCOUNT_TOKEN", TOKEN)]);
    all.extend(network_vars(dir));
    all.extend(vars(EVENT_VARS));
    let unshare = parley_tests::packaged::binary("unshare", "/usr/bin/unshare");
    let parley = gateway_bin().display().to_string();
    let args = [
        "--user",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        &script,
        &parley,
    ];
    Parley::start(&unshare, &args, dir, &all).await
}

/// The data directory as the process sees it.
fn data_dir(p: &Parley) -> PathBuf {
    let pid = p.pid().expect("serve runs");
    PathBuf::from(format!("/proc/{pid}/cwd/parley-data"))
}

/// Writes `path` until the file system is full; returns the bytes written.
fn fill(path: &Path) -> u64 {
    let mut file = std::fs::File::create(path).expect("create the filler");
    let chunk = vec![0u8; 256 * 1024];
    let mut written = 0;
    loop {
        match file.write_all(&chunk).and_then(|()| file.sync_all()) {
            Ok(()) => written += chunk.len() as u64,
            Err(e) if e.kind() == std::io::ErrorKind::StorageFull => return written,
            Err(e) => panic!("filling the disk: {e}"),
        }
    }
}

async fn write_message(p: &Parley, body: &str) -> (u16, Value) {
    let message = json!({"clientId": ID, "from": crate::events::support::CONTACT, "type": "text", "body": body});
    post(p, "/sandbox/messages", message).await
}

async fn send(p: &Parley, body: &str) -> (u16, Value) {
    let to = crate::events::support::CONTACT;
    post(
        p,
        "/send-message",
        json!({"clientId": ID, "to": to, "body": body}),
    )
    .await
}

#[tokio::test]
async fn a_full_disk_refuses_writes_clearly_loses_nothing_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_on_small_disk(dir.path(), "24m").await;
    let rx = Receiver::start().await;
    hooked(&p, ID, &rx.url, json!({})).await;
    contact(&p).await;
    for i in 0..5 {
        assert_eq!(write_message(&p, &format!("before {i}")).await.0, 200);
        assert_eq!(send(&p, &format!("sent before {i}")).await.0, 200);
    }
    let before = eventually(15, "ten events logged", || async {
        let events = logged(&p, ID).await;
        (events.len() >= 10).then_some(events)
    })
    .await;

    let filler = data_dir(&p).join("filler");
    let filled = fill(&filler);
    assert!(filled > 0, "the disk had room before");
    let written_while_full = refused_while_full(&p).await;
    // A send is refused before it leaves, with nothing sent: on the real
    // network the gateway asks the database for room first once a write
    // was refused (503); the sandbox network keeps its state in the same
    // database, so to the session it is out of reach (the spec's 502).
    let (status, answer) = send(&p, "sent while full").await;
    let error = answer["error"].as_str().unwrap_or_default();
    match network() {
        Net::Wire => assert_eq!(status, 503, "{answer}"),
        Net::Sandbox => assert!(status == 502 || status == 503, "{answer}"),
    }
    assert!(error.contains("nothing was sent"), "{answer}");
    let outbox = crate::sends::support::outbox(&p, ID, "").await;
    let left = outbox
        .iter()
        .any(|m| m.to_string().contains("sent while full"));
    assert!(!left, "nothing left for the network: {outbox:?}");
    let (status, _) = get(&p, "/health/live").await;
    assert_eq!(status, 200, "the process stays up");

    // Space returns: writes go through again, without a restart.
    std::fs::remove_file(&filler).unwrap();
    eventually(20, "a write accepted again", || async {
        (write_message(&p, "after").await.0 == 200).then_some(())
    })
    .await;
    assert_eq!(send(&p, "sent after").await.0, 200);

    // Nothing stored before is lost, and the log has no gap.
    // A contact's message the network took while the disk was full is
    // logged once there is room (the real network: not acknowledged, and
    // handed to the session again until its event is written).
    let expected = before.len() + 2 + written_while_full.len();
    let after = eventually(40, "the later events logged", || async {
        let events = logged(&p, ID).await;
        (events.len() >= expected).then_some(events)
    })
    .await;
    assert_eq!(after.len(), expected, "each once: {after:?}");
    for body in &written_while_full {
        assert!(
            after.iter().any(|e| e["event"]["body"] == body.as_str()),
            "{body} logged once there was room: {after:?}"
        );
    }
    for (i, event) in after.iter().enumerate() {
        assert_eq!(event["seq"], i as u64 + 1, "no gap: {event}");
    }
    // Each as it was (its delivery state goes on changing).
    let stored = |e: &Value| (e["seq"].clone(), e["eventId"].clone(), e["event"].clone());
    let kept: Vec<_> = after.iter().map(stored).collect();
    for event in &before {
        assert!(kept.contains(&stored(event)), "kept: {event}");
    }
    assert_eq!(integrity(&data_dir(&p)).await, "ok");
}

/// Contacts write while the disk is full; returns the messages the network
/// took (to be logged once there is room). The sandbox network keeps its
/// state in the database: a contact's message is refused there at once, with
/// a clear 503, once the database has no room. The real network takes it;
/// the gateway cannot log it, so it is not acknowledged, and the control
/// route answers 503 when no event came.
async fn refused_while_full(p: &Parley) -> Vec<String> {
    let mut taken = Vec::new();
    for i in 0..200 {
        let body = format!("while full {i}");
        let (status, answer) = write_message(p, &body).await;
        if status == 200 {
            // Room the database had already taken (the sandbox network).
            assert_eq!(network(), Net::Sandbox, "{answer}");
            continue;
        }
        assert_eq!(status, 503, "{answer}");
        let error = answer["error"].as_str().unwrap_or_default();
        match network() {
            Net::Sandbox => assert!(error.contains("full"), "names the cause: {answer}"),
            Net::Wire => {
                assert!(error.contains("logged no event"), "{answer}");
                taken.push(body);
            }
        }
        return taken;
    }
    panic!("no write on the full disk was refused");
}

/// SQLite's integrity check of a copy of the database (with its WAL).
async fn integrity(data: &Path) -> String {
    use parley_shared::db::ConnectionTrait;
    let copy = tempfile::tempdir().unwrap();
    for name in ["parley.sqlite", "parley.sqlite-wal"] {
        let from = data.join(name);
        if from.exists() {
            std::fs::copy(&from, copy.path().join(name)).unwrap();
        }
    }
    let url = format!("sqlite://{}", copy.path().join("parley.sqlite").display());
    let db = parley_shared::db::Db::connect(&url).await.unwrap();
    let row = db
        .conn()
        .query_one_raw(sea_orm::Statement::from_string(
            db.conn().get_database_backend(),
            "PRAGMA integrity_check",
        ))
        .await
        .unwrap()
        .expect("a row");
    row.try_get_by_index::<String>(0).unwrap()
}
