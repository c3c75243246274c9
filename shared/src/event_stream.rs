//! The event log's bodies in NATS JetStream (the cluster): one stream with
//! file storage and a subject per session, `<cluster>.events.<clientId>`,
//! bounded by age and bytes. The database keeps each event's `seq`, its
//! delivery state and the stream sequence of its body.
use std::fmt;
use std::time::Duration;

use async_nats::jetstream::context::{CreateStreamErrorKind, PublishErrorKind};
use async_nats::jetstream::stream::{
    Config, DiscardPolicy, LastRawMessageErrorKind, RetentionPolicy, StorageType, Stream,
};
use async_nats::jetstream::{self, Context};
use async_nats::{Client, HeaderMap};

/// A stream operation that failed (NATS unreachable, the stream full, refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError(String);

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event stream: {}", self.0)
    }
}

impl std::error::Error for StreamError {}

fn failed(e: impl fmt::Display) -> StreamError {
    StreamError(e.to_string())
}

/// How the stream is bounded and replicated (from the configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamSettings {
    /// Bodies older than this go (the event log's retention).
    pub max_age: Duration,
    /// Past this many bytes new events are refused (backpressure), never
    /// older ones dropped.
    pub max_bytes: u64,
    /// Copies of each body: 1 on a single server, 3 on a NATS cluster.
    pub replicas: usize,
}

/// Headers of every stream message: a consumer needs no body parsing to route.
pub const EVENT_ID_HEADER: &str = "Parley-Event-Id";
pub const SEQ_HEADER: &str = "Parley-Seq";
pub const KIND_HEADER: &str = "Parley-Event";

/// Waits for the server's answer (a publish acknowledgement included).
const TIMEOUT: Duration = Duration::from_secs(3);

/// How many times the stream is asked for at startup when it does not
/// answer, and the first wait between two asks (doubling).
const OPEN_TRIES: u32 = 5;
const OPEN_RETRY: Duration = Duration::from_millis(500);

/// One event's body to publish.
pub struct StreamedEvent<'a> {
    pub client_id: &'a str,
    pub seq: u64,
    pub event_id: &'a str,
    pub kind: &'a str,
    pub body: &'a [u8],
}

/// The stream of one cluster.
#[derive(Clone)]
pub struct EventStream {
    js: Context,
    name: String,
    prefix: String,
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventStream")
            .field("name", &self.name)
            .finish()
    }
}

impl EventStream {
    /// The stream's name for cluster `cluster` (letters, digits, `-`, `_`).
    pub fn name_for(cluster: &str) -> String {
        format!("{cluster}-events")
    }

    /// Creates the cluster's stream, or brings an existing one's limits and
    /// replicas to `settings`. A server that does not answer in time (busy,
    /// or its JetStream restarting) is asked again, up to [`OPEN_TRIES`]
    /// times with doubling waits (about 20 s in all with the answers'
    /// timeouts), before the process gives up; any other refusal fails at
    /// once.
    pub async fn open(
        client: Client,
        cluster: &str,
        settings: &StreamSettings,
    ) -> Result<EventStream, StreamError> {
        let js = jetstream::ContextBuilder::new()
            .timeout(TIMEOUT)
            .ack_timeout(TIMEOUT)
            .build(client);
        let stream = EventStream {
            js,
            name: EventStream::name_for(cluster),
            prefix: format!("{cluster}.events"),
        };
        let config = stream.config(settings)?;
        let mut wait = OPEN_RETRY;
        for attempt in 1.. {
            match stream.js.create_or_update_stream(config.clone()).await {
                Ok(_) => break,
                Err(e)
                    if attempt < OPEN_TRIES
                        && matches!(
                            e.kind(),
                            CreateStreamErrorKind::TimedOut
                                | CreateStreamErrorKind::JetStreamUnavailable
                        ) =>
                {
                    tracing::warn!(stream = %stream.name, attempt, error = %e,
                        "the event stream did not answer; asking again");
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                }
                Err(e) => return Err(failed(e)),
            }
        }
        Ok(stream)
    }

    fn config(&self, settings: &StreamSettings) -> Result<Config, StreamError> {
        let max_bytes = i64::try_from(settings.max_bytes)
            .map_err(|_| StreamError(format!("max bytes {} too large", settings.max_bytes)))?;
        Ok(Config {
            name: self.name.clone(),
            description: Some("Parley webhook events, one subject per session".into()),
            subjects: vec![format!("{}.*", self.prefix)],
            storage: StorageType::File,
            retention: RetentionPolicy::Limits,
            discard: DiscardPolicy::New,
            max_age: settings.max_age,
            max_bytes,
            num_replicas: settings.replicas,
            duplicate_window: Duration::from_secs(120),
            allow_direct: true,
            ..Config::default()
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The subject of session `client_id`'s events.
    pub fn subject(&self, client_id: &str) -> String {
        format!("{}.{client_id}", self.prefix)
    }

    /// Publishes one event's body once the server has stored it; answers
    /// its stream sequence.
    pub async fn publish(&self, event: StreamedEvent<'_>) -> Result<u64, StreamError> {
        let mut sequences = self.publish_all(std::slice::from_ref(&event)).await?;
        sequences
            .pop()
            .ok_or_else(|| StreamError("no acknowledgement".into()))
    }

    /// Publishes the bodies in order, then waits for every acknowledgement
    /// (one round trip for all); answers their stream sequences, in order.
    /// Fails when any of them was not stored.
    pub async fn publish_all(&self, events: &[StreamedEvent<'_>]) -> Result<Vec<u64>, StreamError> {
        let mut acks = Vec::with_capacity(events.len());
        for event in events {
            let mut headers = HeaderMap::new();
            // The same event published again (a retried append) is stored once.
            let msg_id = format!("{}/{}", event.event_id, event.seq);
            headers.insert("Nats-Msg-Id", msg_id.as_str());
            headers.insert(EVENT_ID_HEADER, event.event_id);
            headers.insert(SEQ_HEADER, event.seq.to_string().as_str());
            headers.insert(KIND_HEADER, event.kind);
            let ack = self
                .js
                .publish_with_headers(
                    self.subject(event.client_id),
                    headers,
                    event.body.to_vec().into(),
                )
                .await
                .map_err(failed)?;
            acks.push(ack);
        }
        let mut sequences = Vec::with_capacity(acks.len());
        let acks = acks.into_iter().map(std::future::IntoFuture::into_future);
        for ack in futures::future::join_all(acks).await {
            let ack = ack.map_err(|e| match e.kind() {
                PublishErrorKind::TimedOut => StreamError("no acknowledgement in time".into()),
                _ => failed(e),
            })?;
            sequences.push(ack.sequence);
        }
        Ok(sequences)
    }

    /// The body of event `event_id` stored at `sequence`: none once it was
    /// purged or aged out (or the stream was made anew and the sequence now
    /// holds another event).
    pub async fn body(
        &self,
        sequence: u64,
        event_id: &str,
    ) -> Result<Option<Vec<u8>>, StreamError> {
        let stream = self.stream().await?;
        match stream.get_raw_message(sequence).await {
            Ok(msg) => {
                let named = msg.headers.get(EVENT_ID_HEADER).map(|v| v.as_str());
                Ok((named == Some(event_id)).then(|| msg.payload.to_vec()))
            }
            Err(e) if e.kind() == LastRawMessageErrorKind::NoMessageFound => Ok(None),
            Err(e) => Err(failed(e)),
        }
    }

    /// The stream's handle (made locally: no request to the server).
    async fn stream(&self) -> Result<Stream<()>, StreamError> {
        self.js.get_stream_no_info(&self.name).await.map_err(failed)
    }

    /// Deletes every body of session `client_id`.
    pub async fn purge(&self, client_id: &str) -> Result<u64, StreamError> {
        let stream = self.stream().await?;
        let purged = stream
            .purge()
            .filter(self.subject(client_id))
            .await
            .map_err(failed)?;
        Ok(purged.purged)
    }

    /// Deletes session `client_id`'s bodies but its last `keep` (the events
    /// the log's cap trimmed from the database).
    pub async fn trim(&self, client_id: &str, keep: u64) -> Result<u64, StreamError> {
        let stream = self.stream().await?;
        let purged = stream
            .purge()
            .filter(self.subject(client_id))
            .keep(keep)
            .await
            .map_err(failed)?;
        Ok(purged.purged)
    }

    /// Whether the stream answers (readiness).
    pub async fn check(&self) -> Result<(), StreamError> {
        self.js.get_stream(&self.name).await.map_err(failed)?;
        Ok(())
    }

    /// Deletes the stream (tests, and operators tearing a cluster down).
    pub async fn delete(&self) -> Result<(), StreamError> {
        self.js.delete_stream(&self.name).await.map_err(failed)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::net::TcpListener;

    use super::*;

    /// A NATS server that lets clients in and answers their pings, and
    /// never answers a JetStream request (as one whose JetStream is stuck);
    /// its port and how many stream requests it got.
    async fn silent_jetstream() -> (u16, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let asked = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&asked);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let count = Arc::clone(&count);
                tokio::spawn(async move {
                    let (read, mut write) = socket.into_split();
                    let info = format!(
                        "INFO {{\"server_id\":\"silent\",\"version\":\"2.10.0\",\"proto\":1,\"headers\":true,\"max_payload\":1048576,\"host\":\"127.0.0.1\",\"port\":{port}}}\r\n"
                    );
                    if write.write_all(info.as_bytes()).await.is_err() {
                        return;
                    }
                    let mut lines = BufReader::new(read).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if line.starts_with("PING") {
                            let _ = write.write_all(b"PONG\r\n").await;
                        } else if line.contains("$JS.API.STREAM.") {
                            count.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                });
            }
        });
        (port, asked)
    }

    #[tokio::test]
    async fn a_stream_that_does_not_answer_is_asked_again_then_given_up() {
        let (port, asked) = silent_jetstream().await;
        let client = async_nats::connect(format!("nats://127.0.0.1:{port}"))
            .await
            .expect("connected");
        let settings = StreamSettings {
            max_age: Duration::from_secs(60),
            max_bytes: 1 << 20,
            replicas: 1,
        };
        let opened = EventStream::open(client, "silent", &settings).await;
        assert!(opened.is_err(), "a stream that never answered");
        assert_eq!(asked.load(Ordering::SeqCst), OPEN_TRIES as usize);
    }
}
