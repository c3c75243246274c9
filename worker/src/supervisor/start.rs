//! The start queue: `/start` requests shared by all workers (queue group), each
//! answered by claiming the session or naming the worker that owns it.
use std::time::Duration;

use parley_shared::bus::{BusError, Incoming, START_SUBJECT, Subscription, WORKERS_GROUP};
use parley_shared::command::{self, Command, Outcome, Reply};
use parley_shared::error::ApiError;
use parley_shared::ids::ClientId;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::{Claim, ClaimError, Origin, Supervisor};
use crate::session::idempotency::request_key;
use crate::session::{INITIALIZING, NotRun, OpenError, respond};

/// Pause before subscribing again when the bus closed the subscription.
const RESUBSCRIBE_AFTER: Duration = Duration::from_secs(1);

impl Supervisor {
    /// Subscribes to the start queue and serves it until `stop` turns true.
    pub async fn listen_start(
        &self,
        stop: watch::Receiver<bool>,
    ) -> Result<JoinHandle<()>, BusError> {
        let subscription = self.subscribe_start().await?;
        Ok(tokio::spawn(self.clone().serve_start(subscription, stop)))
    }

    async fn subscribe_start(&self) -> Result<Subscription, BusError> {
        self.deps()
            .bus
            .subscribe(START_SUBJECT, Some(WORKERS_GROUP))
            .await
    }

    async fn serve_start(self, mut subscription: Subscription, mut stop: watch::Receiver<bool>) {
        loop {
            let incoming = tokio::select! {
                () = crate::stopped(&mut stop) => return,
                incoming = subscription.next() => incoming,
            };
            match incoming {
                Some(incoming) => {
                    let me = self.clone();
                    tokio::spawn(async move { me.handle_start(incoming).await });
                }
                None => match self.resubscribe_start(&mut stop).await {
                    Some(again) => subscription = again,
                    None => return,
                },
            }
        }
    }

    /// Subscribes to the start queue again after the bus closed it; `None` once stopped.
    async fn resubscribe_start(&self, stop: &mut watch::Receiver<bool>) -> Option<Subscription> {
        tracing::warn!("the bus closed the start subscription; subscribing again");
        loop {
            tokio::select! {
                () = crate::stopped(stop) => return None,
                () = tokio::time::sleep(RESUBSCRIBE_AFTER) => {}
            }
            match self.subscribe_start().await {
                Ok(subscription) => return Some(subscription),
                Err(e) => tracing::warn!(error = %e, "cannot subscribe to the start queue"),
            }
        }
    }

    /// Answers one start request (from memory when it is a repeat).
    pub async fn handle_start(&self, incoming: Incoming) {
        let span = tracing::info_span!("start command", client_id = tracing::field::Empty);
        parley_shared::telemetry::set_parent_from(&span, &incoming.headers);
        async move {
            let key = request_key(&incoming);
            let requests = &self.deps().requests;
            let outcome = match key.as_deref().and_then(|k| requests.get(k)) {
                Some(outcome) => outcome,
                None => {
                    let outcome = self.start(&incoming.payload).await;
                    if let Some(key) = key {
                        requests.put(key, outcome.clone());
                    }
                    outcome
                }
            };
            respond(incoming, &outcome).await;
        }
        .instrument(span)
        .await;
    }

    async fn start(&self, payload: &[u8]) -> Outcome {
        let Command::Start { client_id } = command::decode(payload)? else {
            return Err(ApiError::bad_request(
                "only start is served on the start queue",
            ));
        };
        let id = ClientId::parse(&client_id)?;
        tracing::Span::current().record("client_id", id.as_str());
        match self.claim(id.as_str(), Origin::Start).await {
            Ok(Claim::Ours { status }) => Ok(Reply::Status {
                status,
                pod_name: self.pod_name().to_owned(),
            }),
            Ok(Claim::Elsewhere { holder }) => {
                let status = match self.deps().db.session(id.as_str()).await {
                    Ok(Some(row)) => row.status,
                    Ok(None) => return Err(ApiError::not_found("unknown clientId")),
                    Err(e) => return Err(e.into()),
                };
                Ok(Reply::Status {
                    status: if holder.is_empty() {
                        INITIALIZING.into()
                    } else {
                        status
                    },
                    pod_name: holder,
                })
            }
            Ok(Claim::NotRun(NotRun::Unknown)) => Err(ApiError::not_found("unknown clientId")),
            Ok(Claim::NotRun(_)) => Err(ApiError::unavailable(
                "the session is changing owner; retry",
            )),
            Err(ClaimError::ShuttingDown) => {
                Err(ApiError::unavailable("this worker is shutting down; retry"))
            }
            Err(ClaimError::Open(OpenError::Db(e))) => Err(e.into()),
            Err(e) => Err(ApiError::unavailable(format!(
                "cannot start the session: {e}"
            ))),
        }
    }
}
