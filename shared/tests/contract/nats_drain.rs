//! The NATS client's drain against a scripted server, so the race the bus
//! contract's drain case can only hit by chance is played out every time: the
//! server sends a request after the client wrote its UNSUB and before it
//! answers the PING that follows it. A drained subscription must still hand
//! that request back (the worker answers it "moved"); only the PONG ends it.
use std::time::Duration;

use parley_shared::bus::Bus;
use parley_shared::bus::nats::NatsBus;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

const DEADLINE: Duration = Duration::from_secs(5);

/// Serves one client: answers its PINGs, and answers the PING after an UNSUB
/// with a PING of its own (so the client reads something and polls again),
/// then, once the client's PONG shows it did, a message for the unsubscribed
/// sid, then the PONG.
async fn scripted_server(listener: TcpListener) -> std::io::Result<()> {
    let (socket, _) = listener.accept().await?;
    let (read, mut write) = socket.into_split();
    let mut lines = BufReader::new(read).lines();
    let info = r#"{"server_id":"scripted","server_name":"scripted","version":"2.10.0","go":"go","host":"127.0.0.1","port":4222,"headers":true,"max_payload":1048576,"proto":1}"#;
    write
        .write_all(format!("INFO {info}\r\n").as_bytes())
        .await?;
    let mut unsubscribed = None;
    while let Some(line) = lines.next_line().await? {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["UNSUB", sid, ..] => unsubscribed = Some((*sid).to_owned()),
            ["PING"] => match unsubscribed.take() {
                Some(sid) => {
                    write.write_all(b"PING\r\n").await?;
                    while lines.next_line().await?.is_some_and(|l| l != "PONG") {}
                    let late = format!("MSG p.session.x {sid} _INBOX.late 4\r\nlate\r\n");
                    write.write_all(late.as_bytes()).await?;
                    write.write_all(b"PONG\r\n").await?;
                }
                None => write.write_all(b"PONG\r\n").await?,
            },
            _ => {}
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_drain_hands_back_what_the_server_sent_before_it_took_the_unsub() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("nats://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(scripted_server(listener));
    let bus = NatsBus::connect(&url, "p").await.unwrap();
    let mut subscription = bus.subscribe("session.x", None).await.unwrap();
    subscription.drain();
    let late = tokio::time::timeout(DEADLINE, subscription.next())
        .await
        .expect("the drain ends in time")
        .expect("the request sent before the server took the UNSUB is handed back");
    assert_eq!(&late.payload[..], b"late");
    let end = tokio::time::timeout(DEADLINE, subscription.next()).await;
    assert!(
        matches!(end, Ok(None)),
        "the PONG ends the drained subscription"
    );
    drop(bus);
    server.abort();
}
