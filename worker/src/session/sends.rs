//! Sends and chat actions run as tasks beside the session's loop (a media
//! download must not hold up its events and other commands). Each is keyed by
//! its request id: a repeat that arrives while it runs waits for the same
//! outcome, a later one is answered from the request cache, so a retried bus
//! request never sends twice. Finished sends pass through [`Actor::after_send`].
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use parley_contract::command::{Outcome, Reply};
use parley_contract::error::ApiError;
use parley_shared::bus::Incoming;
use serde_json::Value;
use tokio::task::{Id, JoinError};
use tokio::time::{Instant, timeout_at};
use tracing::Instrument;

use super::actor::Actor;
use super::in_flight::Job;
use super::respond;
use crate::network::SentMessage;
use crate::query::Querier;
use crate::query::book::Book;
use crate::send::{Done, Sender};
use parley_model::outgoing::ChatAction;

impl Actor {
    /// Starts `job` for `incoming` (request key `key`), or holds it while the
    /// session is paired but not online yet.
    pub(super) async fn start_send(&mut self, key: Option<String>, incoming: Incoming, job: Job) {
        if self.must_wait() {
            self.hold(key, incoming, job);
        } else {
            self.launch(key, incoming, job).await;
        }
    }

    /// Starts `job` for `incoming` (request key `key`), unless the session
    /// cannot do it now: then answers at once.
    pub(super) async fn launch(&mut self, key: Option<String>, incoming: Incoming, job: Job) {
        let task = match self.task_for(job) {
            Ok(task) => task,
            Err(e) => {
                let outcome: Outcome = Err(e);
                if let Some(key) = key {
                    self.deps.requests.put(key, outcome.clone());
                }
                respond(incoming, &outcome).await;
                return;
            }
        };
        self.run_task(key, task, vec![incoming]);
    }

    /// Starts `job`, the session's own (no request waits for it); its
    /// failure, or a job the session cannot do now, is logged.
    pub(super) fn launch_own(&mut self, job: Job) {
        let client_id = self.id.clone();
        match self.task_for(job) {
            Ok(task) => {
                let logged = async move {
                    let done = task.await;
                    if let Err(e) = &done.outcome {
                        tracing::warn!(%client_id, error = %e.message, "the session's own operation failed");
                    }
                    done
                };
                self.run_task(None, logged.boxed(), Vec::new());
            }
            Err(e) => {
                tracing::warn!(%client_id, error = %e.message, "the session's own operation was not started");
            }
        }
    }

    /// Runs `task` beside the loop for the requests `waiting` (request key
    /// `key`); what it sent becomes its `fromMe` event.
    fn run_task(
        &mut self,
        key: Option<String>,
        task: BoxFuture<'static, Done>,
        waiting: Vec<Incoming>,
    ) {
        let in_flight = &mut self.in_flight;
        let cacheable = key.is_some();
        let key = key.unwrap_or_else(|| {
            in_flight.anonymous += 1;
            format!("anonymous {}", in_flight.anonymous)
        });
        let (sink, me) = (self.output.sink(), self.me.clone());
        // The hosted inbox looks a new room's picture up on it.
        let connection = self.link.as_ref().map(|l| Arc::clone(&l.connection));
        let task = async move {
            let mut done = task.await;
            // A send needs the session online, and online it knows who it is.
            if let (Some(sent), Some(echo), Some(me)) = (&done.sent, done.echo.take(), &me) {
                let mut activity = echo.into_activity(sent, me, done.meta.clone());
                activity.connection = connection;
                // Boxed: the pipeline's future is large, and this task is
                // spawned (copied) once per send.
                let processed = Box::pin(sink.process(activity)).await;
                if let Some(error) = processed.history_error {
                    warn_history(&mut done.outcome, &error);
                }
                if let Some(error) = processed.log_error {
                    warn_unlogged(&mut done.outcome, &error.to_string());
                }
            }
            done
        };
        let handle = in_flight
            .tasks
            .spawn(task.instrument(tracing::Span::current()));
        in_flight.keys.insert(handle.id(), key.clone());
        in_flight.callers().insert(key, (cacheable, waiting));
    }

    /// The task that carries out `job`, when the session can do it now.
    fn task_for(&mut self, job: Job) -> Result<BoxFuture<'static, Done>, ApiError> {
        // A send's event would find no room in the log: refused before it
        // reaches the network, never sent without its event.
        let sends = matches!(job, Job::Send(_) | Job::Chat(_) | Job::RejectCall { .. });
        if sends && self.output.log_full() {
            return Err(ApiError::unavailable(
                "the session's event log is full (its webhook receiver is behind): retry later",
            ));
        }
        let task = self.unchecked_task_for(job)?;
        if !sends {
            return Ok(task);
        }
        // Nor may it leave while the database's disk is full.
        let db = self.deps.db.clone();
        Ok(async move {
            match db.has_room().await {
                Ok(()) => task.await,
                Err(e) => Done::failed(no_room(e)),
            }
        }
        .boxed())
    }

    /// [`Self::task_for`] without its checks of the log.
    fn unchecked_task_for(&mut self, job: Job) -> Result<BoxFuture<'static, Done>, ApiError> {
        Ok(match job {
            Job::Send(message) => {
                let sender = self.sender()?;
                // Its turn under the session's pacing (now when unpaced).
                let turn = self.pacer.reserve(Instant::now())?;
                async move {
                    tokio::time::sleep_until(turn).await;
                    sender.send(message).await
                }
                .boxed()
            }
            Job::Chat(ChatAction::RejectCall { call_id }) => {
                let sender = self.sender()?;
                let call = self.ringing.get(&call_id, Instant::now()).ok_or_else(|| {
                    ApiError::not_found(format!("no call {call_id} rings the session"))
                })?;
                async move { sender.reject_call(call, String::new()).await }.boxed()
            }
            Job::Chat(action) => {
                let sender = self.sender()?;
                self.own_labels.sending(&action, Instant::now());
                async move { sender.act(action).await }.boxed()
            }
            Job::RejectCall { call, reply } => {
                let sender = self.sender()?;
                async move { sender.reject_call(call, reply).await }.boxed()
            }
            Job::Query(query) => {
                let querier = self.querier()?;
                async move {
                    Done {
                        outcome: querier.run(query).await,
                        sent: None,
                        meta: None,
                        echo: None,
                    }
                }
                .boxed()
            }
        })
    }

    /// What a contact or group query needs, when the session is connected:
    /// 409 otherwise (pairing, or paired and reconnecting).
    fn querier(&self) -> Result<Querier, ApiError> {
        match self.online_link() {
            Some(link) => Ok(Querier {
                connection: Arc::clone(&link.connection),
                book: Book::new(
                    self.deps.db.clone(),
                    &self.id,
                    self.deps.events.contacts.as_ref(),
                ),
                media: Arc::clone(&self.deps.media),
                avatars: self.deps.events.avatars.clone(),
                my_jid: self.row.jid.clone(),
                my_lid: self.row.lid.clone(),
                network_timeout: self.deps.timing.network_timeout,
            }),
            None => Err(ApiError::conflict("session not connected")),
        }
    }

    /// What a send needs, when the session can send: 404 while unpaired, 502
    /// while paired but offline (reconnecting).
    fn sender(&self) -> Result<Sender, ApiError> {
        if !self.paired {
            return Err(ApiError::not_found("unknown or unpaired clientId"));
        }
        match self.online_link() {
            Some(link) => Ok(Sender {
                connection: Arc::clone(&link.connection),
                book: Book::new(
                    self.deps.db.clone(),
                    &self.id,
                    self.deps.events.contacts.as_ref(),
                ),
                media: Arc::clone(&self.deps.media),
                fetcher: self.deps.fetcher.clone(),
                network_timeout: self.deps.timing.network_timeout,
            }),
            None => Err(ApiError::bad_gateway(
                "the session is not connected to the network right now; nothing was sent, retry",
            )),
        }
    }

    /// Answers everyone waiting for a finished send and remembers its outcome.
    pub(super) async fn on_sent(&mut self, finished: Result<(Id, Done), JoinError>) {
        let (id, done) = match finished {
            Ok(finished) => finished,
            Err(e) => {
                let error = if e.is_cancelled() {
                    ApiError::unavailable(
                        "the session moved before the send finished; it may or may not have been delivered",
                    )
                } else {
                    ApiError::internal("send task failed", &e)
                };
                (e.id(), Done::failed(error))
            }
        };
        let Some(key) = self.in_flight.keys.remove(&id) else {
            return;
        };
        if let Some(sent) = &done.sent {
            self.after_send(sent, done.meta.as_ref());
        }
        let Some((cacheable, callers)) = self.in_flight.callers().remove(&key) else {
            return;
        };
        if cacheable {
            self.deps.requests.put(key, done.outcome.clone());
        }
        for incoming in callers {
            respond(incoming, &done.outcome).await;
        }
    }

    /// Lets the sends still running finish (up to the network timeout, then
    /// they are stopped) and answers their callers; the session is ending.
    pub(super) async fn settle_sends(&mut self) {
        let deadline = Instant::now() + self.deps.timing.network_timeout;
        loop {
            let next = match timeout_at(deadline, self.in_flight.tasks.join_next_with_id()).await {
                Ok(next) => next,
                Err(_) => {
                    self.in_flight.tasks.abort_all();
                    self.in_flight.tasks.join_next_with_id().await
                }
            };
            match next {
                Some(finished) => self.on_sent(finished).await,
                None => break,
            }
        }
    }

    /// The one place where what reached the network is followed up. Later work
    /// hooks here: the `fromMe` webhook event (with `meta`) and the hosted-history
    /// write.
    fn after_send(&self, sent: &SentMessage, meta: Option<&Value>) {
        tracing::debug!(
            client_id = %self.id,
            message_id = %sent.message_id,
            kind = sent.kind,
            to = %sent.to,
            at = %sent.at,
            meta = meta.is_some(),
            "sent"
        );
    }
}

/// A send refused before it left: the database has no room to log it.
fn no_room(e: parley_shared::db::DbError) -> ApiError {
    match e {
        parley_shared::db::DbError::Full(why) => {
            tracing::error!(error = %why, "database storage full: a send was refused");
            ApiError::unavailable(
                "database storage full: no space left for writes; nothing was sent, retry later",
            )
        }
        other => ApiError::from(other),
    }
}

/// A send reached the network but its hosted-history row was not written: the
/// caller still gets 200, with a `warning`.
fn warn_history(outcome: &mut Outcome, error: &str) {
    add_warning(
        outcome,
        format!("the message was sent but not stored in the hosted inbox: {error}"),
    );
}

/// A send reached the network but its `fromMe` event could not be logged (a
/// newer owner holds the session, or the log stayed unavailable): 200, since
/// sending again would send twice, with a `warning` that no event follows.
fn warn_unlogged(outcome: &mut Outcome, error: &str) {
    add_warning(
        outcome,
        format!(
            "the message was sent but its webhook event was not logged and will not be delivered: {error}"
        ),
    );
}

/// Adds `warning` to a send's 200, after any warning it has.
fn add_warning(outcome: &mut Outcome, warning: String) {
    if let Ok(Reply::Sent(result)) = outcome {
        result.warning = Some(match result.warning.take() {
            Some(first) => format!("{first}; {warning}"),
            None => warning,
        });
    }
}
