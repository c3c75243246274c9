//! Talking to the worker that owns a session: commands on the session's subject,
//! and when nobody owns a session that should run, a claim on the start queue
//! group first (so a handover in progress does not lose the command).
use std::time::{Duration, Instant};

use parley_contract::command::{CallError, Command, Reply};
use parley_contract::error::ApiError;
use parley_model::ids::ClientId;
use parley_shared::bus::commands;
use parley_shared::bus::{START_SUBJECT, session_subject};

use crate::AppState;

/// How long one attempt may wait for the owner's answer.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);
/// How long to keep finding an owner for a session that should run (handover,
/// failover), and to retry an attempt that got no answer (same request id: the
/// owner does not act twice).
const OWNER_BUDGET: Duration = Duration::from_secs(25);

/// How long to wait for an owner: per attempt, and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patience {
    pub attempt: Duration,
    pub budget: Duration,
}

/// Most commands.
pub const COMMANDS: Patience = Patience {
    attempt: COMMAND_TIMEOUT,
    budget: OWNER_BUDGET,
};

/// Media sends: the owner may spend 60 s fetching the file and 60 s handing it
/// to the network.
pub const MEDIA: Patience = Patience {
    attempt: Duration::from_secs(130),
    budget: Duration::from_secs(150),
};

/// Asks the workers' queue group to make sure `client_id` runs.
pub async fn start(
    state: &AppState,
    client_id: &ClientId,
    request_id: &str,
) -> Result<Reply, ApiError> {
    let cmd = Command::Start {
        client_id: client_id.to_string(),
    };
    match commands::call(
        state.ports.bus.as_ref(),
        START_SUBJECT,
        &cmd,
        request_id,
        COMMAND_TIMEOUT,
    )
    .await
    {
        Ok(outcome) => outcome,
        Err(CallError::NoOwner) => Err(ApiError::unavailable("no worker is running")),
        Err(e) => Err(e.into()),
    }
}

/// Sends `cmd` to the owner of `client_id`. When no worker owns it but the
/// session exists and should run, claims it and retries within a budget;
/// otherwise 404. An attempt without an answer is retried within the budget.
pub async fn send(state: &AppState, client_id: &ClientId, cmd: Command) -> Result<Reply, ApiError> {
    send_with(state, client_id, cmd, COMMANDS).await
}

/// [`send`] with other timeouts.
pub async fn send_with(
    state: &AppState,
    client_id: &ClientId,
    cmd: Command,
    patience: Patience,
) -> Result<Reply, ApiError> {
    let request_id = uuid::Uuid::new_v4().to_string();
    let subject = session_subject(client_id.as_str());
    let deadline = Instant::now() + patience.budget;
    let mut pause = Duration::from_millis(50);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let attempt = patience.attempt.min(left.max(Duration::from_secs(1)));
        let bus = state.ports.bus.as_ref();
        match commands::call(bus, &subject, &cmd, &request_id, attempt).await {
            Ok(outcome) => return outcome,
            Err(CallError::NoOwner) => {}
            Err(CallError::Timeout) if Instant::now() < deadline => {
                tracing::warn!(client_id = %client_id, "no answer from the session owner; asking again");
                continue;
            }
            Err(e) => return Err(e.into()),
        }
        let row = state.ports.db.session(client_id.as_str()).await?;
        match row {
            Some(row) if row.desired => {}
            _ => return Err(CallError::NoOwner.into()),
        }
        if Instant::now() >= deadline {
            return Err(ApiError::unavailable(
                "no worker could take the session; retry",
            ));
        }
        // Nobody owns it now (handover, failover): ask for a claim, then retry.
        let _ = start(state, client_id, &uuid::Uuid::new_v4().to_string()).await;
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}
