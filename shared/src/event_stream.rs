//! The event log's bodies in NATS JetStream (the cluster): one stream with
//! file storage and a subject per session, `<cluster>.events.<clientId>`,
//! bounded by age and bytes. The database keeps each event's `seq`, its
//! delivery state and the stream sequence of its body.
use std::fmt;
use std::time::Duration;

use async_nats::jetstream::context::PublishErrorKind;
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
    /// replicas to `settings`.
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
        stream
            .js
            .create_or_update_stream(config)
            .await
            .map_err(failed)?;
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
