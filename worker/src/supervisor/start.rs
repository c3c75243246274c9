//! Start requests: `/start` on the queue shared by all workers (queue group),
//! and on each worker's own subject (a session handed over to it). Each is
//! answered by claiming the session or naming the worker that owns it.
use std::time::Duration;

use parley_contract::command::{self, Command, Outcome, REQUEST_ID, Reply};
use parley_contract::error::ApiError;
use parley_model::ids::ClientId;
use parley_shared::bus::{
    BusError, Incoming, START_SUBJECT, Subscription, WORKERS_GROUP, worker_start_subject,
};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::{Claim, ClaimError, Origin, Supervisor};
use crate::session::idempotency::request_key;
use crate::session::{INITIALIZING, NotRun, OpenError, respond};

/// Pause before subscribing again when the bus closed the subscription.
const RESUBSCRIBE_AFTER: Duration = Duration::from_secs(1);

/// Where a start request came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The queue shared by all workers: `/start`, and the API's claim before it
    /// asks a session that has no owner again.
    Queue,
    /// This worker's own subject: never passed on again.
    Direct,
}

impl Supervisor {
    /// Subscribes to the start queue and to this worker's own start subject,
    /// and serves both until `stop` turns true.
    pub async fn listen_start(
        &self,
        stop: watch::Receiver<bool>,
    ) -> Result<JoinHandle<()>, BusError> {
        let queue = self.listen(Route::Queue, stop.clone()).await?;
        let direct = self.listen(Route::Direct, stop).await?;
        Ok(tokio::spawn(async move {
            let _ = tokio::join!(queue, direct);
        }))
    }

    /// Serves start requests from one route until `stop` turns true.
    pub(super) async fn listen(
        &self,
        route: Route,
        stop: watch::Receiver<bool>,
    ) -> Result<JoinHandle<()>, BusError> {
        let subscription = self.subscribe_start(route).await?;
        Ok(tokio::spawn(self.clone().serve_start(
            route,
            subscription,
            stop,
        )))
    }

    async fn subscribe_start(&self, route: Route) -> Result<Subscription, BusError> {
        let bus = &self.deps().bus;
        match route {
            Route::Queue => bus.subscribe(START_SUBJECT, Some(WORKERS_GROUP)).await,
            Route::Direct => {
                let subject = worker_start_subject(self.pod_name());
                bus.subscribe(&subject, None).await
            }
        }
    }

    async fn serve_start(
        self,
        route: Route,
        mut subscription: Subscription,
        mut stop: watch::Receiver<bool>,
    ) {
        loop {
            let incoming = tokio::select! {
                () = crate::stopped(&mut stop) => return,
                incoming = subscription.next() => incoming,
            };
            match incoming {
                Some(incoming) => {
                    let me = self.clone();
                    tokio::spawn(async move { me.handle_start(incoming, route).await });
                }
                None => match self.resubscribe_start(route, &mut stop).await {
                    Some(again) => subscription = again,
                    None => return,
                },
            }
        }
    }

    /// Subscribes again after the bus closed a start subscription; `None` once stopped.
    async fn resubscribe_start(
        &self,
        route: Route,
        stop: &mut watch::Receiver<bool>,
    ) -> Option<Subscription> {
        tracing::warn!(
            ?route,
            "the bus closed a start subscription; subscribing again"
        );
        subscribe_again(stop, || self.subscribe_start(route)).await
    }

    /// Answers one start request (from memory when it is a repeat).
    async fn handle_start(&self, incoming: Incoming, route: Route) {
        let span = tracing::info_span!("start command", client_id = tracing::field::Empty);
        parley_shared::telemetry::set_parent_from(&span, &incoming.headers);
        async move {
            let key = request_key(&incoming);
            let requests = &self.deps().requests;
            let outcome = match key.as_deref().and_then(|k| requests.get(k)) {
                Some(outcome) => outcome,
                None => {
                    let request_id = incoming.headers.get(REQUEST_ID).cloned();
                    let outcome = self.start(&incoming.payload, request_id, route).await;
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

    async fn start(&self, payload: &[u8], request_id: Option<String>, route: Route) -> Outcome {
        let (client_id, origin) = match (command::decode(payload)?, route) {
            (Command::Start { client_id }, _) => (client_id, Origin::Start),
            (Command::TakeOver { client_id }, Route::Direct) => (client_id, Origin::Sweep),
            _ => {
                return Err(ApiError::bad_request(
                    "only start (and take-over on a worker's own subject) is served here",
                ));
            }
        };
        let id = ClientId::parse(&client_id)?;
        tracing::Span::current().record("client_id", id.as_str());
        if route == Route::Queue
            && let Some(outcome) = self.pass_on(&id, request_id).await
        {
            return outcome;
        }
        match self.claim(&id, origin).await {
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
            Err(ClaimError::NotAMember) => Err(ApiError::unavailable(
                "this worker cannot reach the lease store; retry",
            )),
            Err(ClaimError::Open(OpenError::Db(e))) => Err(e.into()),
            Err(e) => {
                tracing::error!(client_id = %id, error = %e, "cannot start the session");
                Err(ApiError::unavailable("cannot start the session; retry"))
            }
        }
    }
}

/// Calls `subscribe` every [`RESUBSCRIBE_AFTER`] until it gives a
/// subscription (after the bus closed one); `None` once `stop` turned true.
pub(super) async fn subscribe_again<F, Fut>(
    stop: &mut watch::Receiver<bool>,
    mut subscribe: F,
) -> Option<Subscription>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Subscription, BusError>>,
{
    loop {
        tokio::select! {
            () = crate::stopped(stop) => return None,
            () = tokio::time::sleep(RESUBSCRIBE_AFTER) => {}
        }
        match subscribe().await {
            Ok(subscription) => return Some(subscription),
            Err(e) => tracing::warn!(error = %e, "cannot subscribe again"),
        }
    }
}
