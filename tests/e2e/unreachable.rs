//! The real network adapter (`PARLEY_NETWORK=whatsapp`) with the network out
//! of reach: the egress proxy is a local one that refuses every CONNECT and
//! records when each came, so nothing ever reaches the real network. The
//! session reports the unreachable state, retries with growing gaps, the
//! process stays healthy and does not spin.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::{Parley, TOKEN, bin, eventually, get, post, vars};

/// One CONNECT the proxy refused: when, and whether it was the websocket
/// (the HTTP client's CONNECTs carry `Proxy-Connection`).
#[derive(Debug, Clone)]
struct Attempt {
    at: Instant,
    websocket: bool,
    target: String,
}

/// A proxy that answers every CONNECT with 403 and closes.
async fn refusing_proxy() -> (u16, Arc<Mutex<Vec<Attempt>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let at = Instant::now();
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
                    match s.read(&mut byte).await {
                        Ok(1) => head.push(byte[0]),
                        _ => break,
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                log.lock().expect("lock").push(Attempt {
                    at,
                    websocket: !head.contains("Proxy-Connection"),
                    target: head.split_whitespace().nth(1).unwrap_or_default().into(),
                });
                let _ = s.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\n").await;
            });
        }
    });
    (port, seen)
}

fn websocket_attempts(seen: &Mutex<Vec<Attempt>>) -> Vec<Attempt> {
    let mut all: Vec<Attempt> = seen
        .lock()
        .expect("lock")
        .iter()
        .filter(|a| a.websocket)
        .cloned()
        .collect();
    all.sort_by_key(|a| a.at);
    all
}

/// CPU time (user + system) the process used so far, from `/proc` (Linux).
fn cpu_time(p: &Parley) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", p.pid().expect("running")))
        .expect("proc stat");
    // Fields after the command name (which is in parentheses).
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // USER_HZ is 100 on Linux.
    Duration::from_millis(ticks * 10)
}

#[tokio::test]
async fn an_unreachable_network_is_reported_and_retried_with_growing_gaps() {
    let (proxy_port, seen) = refusing_proxy().await;
    let dir = tempfile::tempdir().unwrap();
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    let all = vars(&[
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "whatsapp"),
        ("PARLEY_NETWORK_PROXY", &proxy),
    ]);
    let p = Parley::start(bin(), &["serve"], dir.path(), &all).await;

    let (_, config) = get(&p, "/config").await;
    assert_eq!(config["proxy"], true);
    assert_eq!(config["environment"], "production");
    let (_, ready) = get(&p, "/health/ready").await;
    assert_eq!(ready["proxy"], true);

    let (status, started) = post(&p, "/start?clientId=wa1", json!({})).await;
    assert_eq!(status, 200, "{started}");

    let state = eventually(20, "the unreachable state", || async {
        let (_, health) = get(&p, "/health/clients").await;
        let wa1 = health["clients"]
            .as_array()?
            .iter()
            .find(|c| c["clientId"] == "wa1")?
            .clone();
        (wa1["lastDisconnect"] == "network-unreachable").then_some(wa1)
    })
    .await;
    assert_eq!(state["status"], "initializing");
    assert_eq!(state["connected"], false);
    let (status, qr) = get(&p, "/qr?clientId=wa1").await;
    assert_eq!(status, 200);
    assert_eq!(qr["qr"], "", "no QR without a network");

    // Six websocket attempts: the waits before them double from 200 ms (each
    // cut by up to half at random), so gap k is at least 100 ms · 2^k.
    let cpu_before = cpu_time(&p);
    let window = Instant::now();
    let attempts = eventually(40, "six connection attempts", || async {
        let a = websocket_attempts(&seen);
        (a.len() >= 6).then_some(a)
    })
    .await;
    let cpu_used = cpu_time(&p).saturating_sub(cpu_before);
    let elapsed = window.elapsed();
    for a in &attempts {
        assert_eq!(
            a.target, "web.whatsapp.com:443",
            "only the network is dialled, through the proxy"
        );
    }
    let gaps: Vec<Duration> = attempts
        .windows(2)
        .map(|w| w[1].at.duration_since(w[0].at))
        .collect();
    for (k, gap) in gaps.iter().take(5).enumerate() {
        let floor = Duration::from_millis(100 << k).saturating_sub(Duration::from_millis(20));
        assert!(
            *gap >= floor,
            "gap {k} is {gap:?}, under {floor:?}: {gaps:?}"
        );
    }
    assert!(gaps[4] > gaps[0], "gaps grow: {gaps:?}");
    // The HTTP client (version check, media) goes through the proxy too.
    assert!(
        seen.lock().expect("lock").iter().any(|a| !a.websocket),
        "the HTTP client used the proxy"
    );

    // Healthy and idle between attempts: far from a core spinning.
    let (status, _) = get(&p, "/health/live").await;
    assert_eq!(status, 200);
    assert!(
        cpu_used < elapsed / 2,
        "{cpu_used:?} of CPU in {elapsed:?} while retrying"
    );
    let (_, health) = get(&p, "/health/clients").await;
    let wa1 = health["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["clientId"] == "wa1")
        .unwrap()
        .clone();
    assert_eq!(wa1["lastDisconnect"], "network-unreachable");
    assert_eq!(wa1["status"], "initializing");
}
