//! Commands over the bus: the API's call to a session's owner, and the
//! owner's encoded answer (the types are `parley_contract::command`).
use std::time::Duration;

use bytes::Bytes;
use parley_contract::command::{CallError, Command, MOVED, Outcome, REQUEST_ID};
use parley_contract::error::ApiError;

use super::{Bus, BusError, Headers, Message};

/// Sends `command` to `subject` and decodes the owner's outcome.
#[tracing::instrument(name = "bus.request", skip_all, fields(subject = %subject))]
pub async fn call(
    bus: &dyn Bus,
    subject: &str,
    command: &Command,
    request_id: &str,
    timeout: Duration,
) -> Result<Outcome, CallError> {
    let mut headers = Headers::new();
    headers.insert(REQUEST_ID.into(), request_id.into());
    crate::telemetry::inject_context(&mut headers);
    let payload = serde_json::to_vec(command).map_err(|e| CallError::Bus(e.to_string()))?;
    let started = std::time::Instant::now();
    let request = Message {
        headers,
        payload: Bytes::from(payload),
    };
    let sent = bus.request(subject, request, timeout).await;
    let m = crate::metrics::metrics();
    let outcome = match &sent {
        Ok(_) => "ok",
        Err(BusError::NoResponders(_)) => {
            m.bus_no_responders.inc();
            "no_responders"
        }
        Err(BusError::Timeout(_)) => {
            m.bus_timeouts.inc();
            "timeout"
        }
        Err(BusError::Unavailable(_)) => "unavailable",
    };
    let kind = match subject.split_once('.') {
        Some(("session", _)) => "session",
        Some(("start", _)) => "start",
        _ => subject,
    };
    m.bus_duration
        .with_label_values(&[kind, outcome])
        .observe(started.elapsed().as_secs_f64());
    let reply = sent.map_err(|e| match e {
        BusError::NoResponders(_) => CallError::NoOwner,
        BusError::Timeout(_) => CallError::Timeout,
        BusError::Unavailable(e) => CallError::Bus(e),
    })?;
    if reply.headers.contains_key(MOVED) {
        return Err(CallError::NoOwner);
    }
    serde_json::from_slice::<Outcome>(&reply.payload)
        .map_err(|e| CallError::Bus(format!("undecodable reply: {e}")))
}

/// Encodes an outcome as a reply message.
pub fn encode(outcome: &Outcome) -> Message {
    let payload = serde_json::to_vec(outcome)
        .unwrap_or_else(|_| b"{\"Err\":{\"status\":500,\"message\":\"internal error\"}}".to_vec());
    Message {
        headers: Headers::new(),
        payload: Bytes::from(payload),
    }
}

/// The reply of a session that is going away without acting on the request.
pub fn moved() -> Message {
    let mut msg = encode(&Err(ApiError::unavailable(
        "the session is changing owner; retry",
    )));
    msg.headers.insert(MOVED.into(), "1".into());
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_contract::command::{Reply, SendResult};

    #[test]
    fn outcomes_round_trip_as_reply_messages() {
        let sent: Outcome = Ok(Reply::Sent(SendResult::message("3EB0AA".into())));
        assert_eq!(
            serde_json::from_slice::<Outcome>(&encode(&sent).payload).unwrap(),
            sent
        );
        let err: Outcome = Err(ApiError::conflict("already paired"));
        let msg = encode(&err);
        assert_eq!(
            serde_json::from_slice::<Outcome>(&msg.payload).unwrap(),
            err
        );
        assert!(moved().headers.contains_key(MOVED));
    }
}
