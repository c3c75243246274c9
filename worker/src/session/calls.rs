//! Calls that ring the session: remembered while they ring, so that
//! `/reject-call` can name one by its id alone, and rejected as they come
//! when the session says so (`/set-call-rejection`), followed by its reply
//! to the caller. A session's next owner (after a move) knows only the
//! calls that ring from then on.
use std::collections::HashMap;

use tokio::time::{Duration, Instant};

use super::actor::Actor;
use super::in_flight::Job;
use parley_model::inbound::{CallNotice, CallPhase, CallRef};

/// How long a call is remembered after its offer when no end comes (the
/// network stops ringing after about a minute).
const RINGING_FOR: Duration = Duration::from_secs(180);

/// Most calls remembered at once: past it the oldest are forgotten.
const RINGING_MAX: usize = 256;

/// The calls that ring the session now, by id.
#[derive(Default)]
pub(super) struct Ringing {
    calls: HashMap<String, (CallRef, Instant)>,
}

impl Ringing {
    fn rings(&mut self, call: CallRef, now: Instant) {
        self.forget_old(now);
        if self.calls.len() >= RINGING_MAX
            && let Some(oldest) = self
                .calls
                .iter()
                .min_by_key(|(_, (_, at))| *at)
                .map(|(id, _)| id.clone())
        {
            self.calls.remove(&oldest);
        }
        self.calls.insert(call.id.clone(), (call, now));
    }

    fn ended(&mut self, id: &str) {
        self.calls.remove(id);
    }

    /// The call `id`, while it rings.
    pub fn get(&mut self, id: &str, now: Instant) -> Option<CallRef> {
        self.forget_old(now);
        self.calls.get(id).map(|(call, _)| call.clone())
    }

    fn forget_old(&mut self, now: Instant) {
        self.calls
            .retain(|_, (_, at)| now.saturating_duration_since(*at) < RINGING_FOR);
    }
}

impl Actor {
    /// A call's offer or end, before its event is written: an offer is
    /// remembered, and rejected at once when the session rejects calls
    /// (its event then says `rejected`; a rejection the network refuses is
    /// logged); an end forgets it.
    pub(super) fn on_call(&mut self, call: &mut CallNotice) {
        match &call.phase {
            CallPhase::Ended { .. } => self.ringing.ended(&call.call.id),
            CallPhase::Offer => {
                self.ringing.rings(call.call.clone(), Instant::now());
                if let Some(reply) = self.row.call_rejection() {
                    call.rejected = true;
                    let job = Job::RejectCall {
                        call: call.call.clone(),
                        reply: reply.to_string(),
                    };
                    self.launch_own(job);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_model::address::Jid;

    fn call(id: &str) -> CallRef {
        let caller = Jid::parse("100000000000001@lid").unwrap();
        CallRef {
            id: id.into(),
            peer: caller.clone(),
            creator: caller,
        }
    }

    #[test]
    fn a_call_is_remembered_while_it_rings() {
        let mut ringing = Ringing::default();
        let start = Instant::now();
        ringing.rings(call("A"), start);
        ringing.rings(call("B"), start);
        assert_eq!(ringing.get("A", start), Some(call("A")));
        ringing.ended("A");
        assert_eq!(ringing.get("A", start), None);
        assert_eq!(ringing.get("B", start + RINGING_FOR / 2), Some(call("B")));
        assert_eq!(ringing.get("B", start + RINGING_FOR), None);
    }

    #[test]
    fn the_oldest_call_goes_first_past_the_limit() {
        let mut ringing = Ringing::default();
        let start = Instant::now();
        for n in 0..=RINGING_MAX {
            let at = start + Duration::from_millis(n as u64);
            ringing.rings(call(&format!("C{n}")), at);
        }
        let now = start + Duration::from_secs(1);
        assert_eq!(ringing.get("C0", now), None);
        assert!(ringing.get("C1", now).is_some());
        assert!(ringing.get(&format!("C{RINGING_MAX}"), now).is_some());
    }
}
