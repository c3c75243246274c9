//! Commands from the bus to the session that owns them: idempotency by request
//! id, a span joined to the caller's trace, and one handler per command.
use parley_contract::command::{self, Command, Outcome, Reply};
use parley_contract::error::ApiError;
use parley_model::address::PhoneNumber;
use parley_shared::bus::Incoming;
use tokio::time::{Instant, timeout};
use tracing::Instrument;

use super::actor::{Actor, CONNECTED, End, Flow, QR};
use super::idempotency::request_key;
use super::in_flight::Route;
use super::output::Persisted;
use super::respond;

impl Actor {
    /// Answers one request (from memory when it is a repeat).
    pub(super) async fn on_command(&mut self, incoming: Incoming) -> Flow {
        let span = tracing::info_span!(
            "session command",
            client_id = %self.id,
            op = tracing::field::Empty
        );
        parley_shared::telemetry::set_parent_from(&span, &incoming.headers);
        self.answer(incoming).instrument(span).await
    }

    async fn answer(&mut self, incoming: Incoming) -> Flow {
        let key = request_key(&incoming);
        if let Some(outcome) = key.as_deref().and_then(|k| self.deps.requests.get(k)) {
            tracing::debug!("repeated request answered from memory");
            respond(incoming, &outcome).await;
            return Ok(());
        }
        let incoming = match key.as_deref() {
            Some(k) => match self
                .in_flight
                .join(k, incoming)
                .or_else(|incoming| self.held.join(k, incoming))
            {
                Ok(()) => {
                    tracing::debug!("repeated request waits for the send in flight");
                    return Ok(());
                }
                Err(incoming) => incoming,
            },
            None => incoming,
        };
        let (outcome, flow) = match command::decode(&incoming.payload) {
            Ok(command) => {
                tracing::Span::current().record("op", op_name(&command));
                match Route::of(command) {
                    Route::Task(job) => {
                        self.start_send(key, incoming, job).await;
                        return Ok(());
                    }
                    Route::Inline(command) => self.execute(command).await,
                }
            }
            Err(e) => (Err(e), Ok(())),
        };
        if let Some(key) = key {
            self.deps.requests.put(key, outcome.clone());
        }
        respond(incoming, &outcome).await;
        flow
    }

    async fn execute(&mut self, command: Command) -> (Outcome, Flow) {
        match command {
            Command::Start { .. } | Command::TakeOver { .. } | Command::State => {
                (Ok(self.status_reply()), Ok(()))
            }
            Command::Qr => (Ok(self.qr_reply()), Ok(())),
            Command::PairPhone { phone } => self.pair_phone(&phone).await,
            Command::Reload => self.reload().await,
            Command::DeliverPending { after } => {
                self.output.deliver_pending(after);
                (Ok(Reply::Done), Ok(()))
            }
            Command::Disconnect => self.disconnect().await,
            Command::Control { request } => self.control(request).await,
            // Sends run as tasks (`answer` hands them to `start_send`).
            Command::Send(_) | Command::Chat(_) | Command::Query(_) => (
                Err(ApiError::internal(
                    "command routing",
                    "a send reached the synchronous command path",
                )),
                Ok(()),
            ),
        }
    }

    fn status_reply(&self) -> Reply {
        Reply::Status {
            status: self.current_status(),
            pod_name: self.deps.pod_name.clone(),
        }
    }

    fn qr_reply(&self) -> Reply {
        let status = self.current_status();
        let qr = if status == QR {
            self.qr.clone()
        } else {
            String::new()
        };
        Reply::Qr { status, qr }
    }

    #[tracing::instrument(skip_all, fields(client_id = %self.id))]
    async fn pair_phone(&mut self, phone: &PhoneNumber) -> (Outcome, Flow) {
        if self.paired || self.current_status() == CONNECTED {
            return (Err(ApiError::conflict("already paired")), Ok(()));
        }
        // A code asked for right after `/start` may arrive before the first
        // connection attempt: make that attempt now rather than refuse.
        if self.link.is_none()
            && self.retry_at.is_some_and(|at| at <= Instant::now())
            && let Err(end) = self.connect().await
        {
            let e = ApiError::bad_gateway("the session stopped while connecting; retry");
            return (Err(e), Err(end));
        }
        (self.request_pair_code(phone).await, Ok(()))
    }

    async fn request_pair_code(&self, phone: &PhoneNumber) -> Outcome {
        let Some(link) = self.link.as_ref() else {
            return Err(ApiError::bad_gateway(
                "the session is not connected to the network yet; retry",
            ));
        };
        match timeout(
            self.deps.timing.network_timeout,
            link.connection.pair_phone(phone),
        )
        .await
        {
            Ok(Ok(code)) => Ok(Reply::PairCode { code }),
            Ok(Err(e)) => Err(ApiError::bad_gateway(format!(
                "the network did not issue a code: {e}"
            ))),
            Err(_) => Err(ApiError::bad_gateway(
                "the network did not issue a code in time",
            )),
        }
    }

    /// Re-reads the session's settings.
    #[tracing::instrument(skip_all, fields(client_id = %self.id))]
    async fn reload(&mut self) -> (Outcome, Flow) {
        match self.deps.db.session(self.id.as_str()).await {
            Ok(Some(row)) => {
                let before = std::mem::replace(&mut self.row, row).proxy_url;
                self.output.apply(&self.id, &self.row);
                self.pacer.set(self.row.pacing);
                tracing::debug!(
                    webhook = !self.row.webhook_url.is_empty(),
                    "settings reloaded"
                );
                let flow = self.on_route(&before).await;
                (Ok(Reply::Done), flow)
            }
            Ok(None) => (Err(ApiError::not_found("unknown clientId")), Err(End::Gone)),
            Err(e) => (Err(e.into()), Ok(())),
        }
    }

    /// Logs out on the network side (a failure becomes a warning), forgets the
    /// device and deletes the session; the task then ends.
    #[tracing::instrument(skip_all, fields(client_id = %self.id))]
    async fn disconnect(&mut self) -> (Outcome, Flow) {
        let network_timeout = self.deps.timing.network_timeout;
        self.retry_at = None;
        let warning = match self.link.take() {
            Some(link) => {
                let warning = match timeout(network_timeout, link.connection.logout()).await {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(format!("network-side logout not confirmed: {e}")),
                    Err(_) => Some(
                        "network-side logout not confirmed: the network did not answer in time"
                            .to_string(),
                    ),
                };
                self.close(link).await;
                warning
            }
            None => Some(
                "network-side logout not confirmed: the session is not connected to the network"
                    .to_string(),
            ),
        };
        match timeout(network_timeout, self.deps.network.forget(&self.id)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "cannot forget the device state"),
            Err(_) => tracing::warn!("forgetting the device state timed out"),
        }
        match self.deps.db.delete_session(self.id.as_str()).await {
            Ok(_) => (Ok(Reply::Disconnected { warning }), Err(End::Deleted)),
            // Logged out but still stored: hand it over, a new owner pairs it afresh.
            Err(e) => (Err(e.into()), Err(End::HandOver)),
        }
    }

    /// Forwards a test control to the network adapter (the sandbox's
    /// operations), then applies the events it caused before answering.
    #[tracing::instrument(skip_all, fields(client_id = %self.id))]
    async fn control(&mut self, request: serde_json::Value) -> (Outcome, Flow) {
        let Some(control) = self.deps.control.clone() else {
            return (
                Err(ApiError::not_found("the sandbox network is not enabled")),
                Ok(()),
            );
        };
        let outcome = match timeout(
            self.deps.timing.network_timeout,
            control.control(&self.id, request),
        )
        .await
        {
            Ok(outcome) => outcome,
            Err(_) => Err(ApiError::gateway_timeout(
                "the sandbox network did not answer in time",
            )),
        };
        tokio::task::yield_now().await;
        self.persisting = Some(Vec::new());
        let flow = self.drain_events().await;
        let persisting = self.persisting.take().unwrap_or_default();
        // The network's acknowledgement: a message it delivered is answered
        // only once its event is in the log, so a failure can be sent again.
        let outcome = match (outcome, self.persisted(persisting).await) {
            (Ok(_), Err(e)) => Err(e),
            (outcome, _) => outcome,
        };
        (outcome, flow)
    }

    /// Waits until each message's event is in the log.
    async fn persisted(&self, persisting: Vec<Persisted>) -> Result<(), ApiError> {
        let wait = async {
            for persisted in persisting {
                match persisted.await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => return Err(e),
                    Err(_) => return Err("the session's event task has ended".to_string()),
                }
            }
            Ok(())
        };
        match timeout(self.deps.timing.network_timeout, wait).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(ApiError::unavailable(format!(
                "the message's event could not be logged, send it again: {e}"
            ))),
            Err(_) => Err(ApiError::gateway_timeout(
                "the message's event was not logged in time, send it again",
            )),
        }
    }
}

fn op_name(command: &Command) -> &'static str {
    match command {
        Command::Start { .. } => "start",
        Command::TakeOver { .. } => "take-over",
        Command::Qr => "qr",
        Command::State => "state",
        Command::PairPhone { .. } => "pair-phone",
        Command::Reload => "reload",
        Command::DeliverPending { .. } => "deliver-pending",
        Command::Disconnect => "disconnect",
        Command::Control { .. } => "control",
        Command::Send(message) => message.content.name(),
        Command::Chat(action) => action.name(),
        Command::Query(query) => query.name(),
    }
}
