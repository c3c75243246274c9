//! Members that fell silent. A worker that stopped announcing itself for
//! [`Timing::silent_takeover`] and that the bus no longer reaches (nobody
//! answers on its alive subject, where it answered before: the bus server
//! saw its connection close, as when the process died) is gone: the others
//! take its sessions over without waiting for its membership to lapse. A live worker that has lost
//! both its bus connection and the lease store closes every session sooner
//! ([`Timing::silent_fence`], checked by [`Supervisor::watch_bus`]), so its
//! sessions never run on two workers at once.
//!
//! [`Timing::silent_takeover`]: crate::session::Timing::silent_takeover
//! [`Timing::silent_fence`]: crate::session::Timing::silent_fence
use std::collections::{HashMap, HashSet};
use std::sync::{MutexGuard, PoisonError};
use std::time::Duration;

use parley_shared::bus::{BusError, Message, worker_alive_subject};
use parley_shared::lease::{Gone, Member};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::Supervisor;
use super::start::subscribe_again;

/// How long a probe of a silent member waits for its answer. "No
/// responders" comes at once; a timeout counts as alive.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);
/// How often a worker checks its own bus connection and silence.
const WATCH_EVERY: Duration = Duration::from_millis(100);

impl Supervisor {
    /// The other members that answered on their alive subject.
    fn answering(&self) -> MutexGuard<'_, HashSet<String>> {
        self.inner
            .answering
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers probes on this worker's alive subject until `stop` turns true.
    pub async fn listen_alive(
        &self,
        mut stop: watch::Receiver<bool>,
    ) -> Result<JoinHandle<()>, BusError> {
        let bus = std::sync::Arc::clone(&self.deps().bus);
        let subject = worker_alive_subject(self.pod_name());
        let mut subscription = bus.subscribe(&subject, None).await?;
        Ok(tokio::spawn(async move {
            loop {
                let incoming = tokio::select! {
                    () = crate::stopped(&mut stop) => return,
                    incoming = subscription.next() => incoming,
                };
                if let Some(incoming) = incoming {
                    let _ = incoming.respond(Message::default()).await;
                    continue;
                }
                tracing::warn!("the bus closed the alive subscription; subscribing again");
                match subscribe_again(&mut stop, || bus.subscribe(&subject, None)).await {
                    Some(again) => subscription = again,
                    None => return,
                }
            }
        }))
    }

    /// The members among `others` that are gone though still members: silent
    /// for [`Timing::silent_takeover`] at least, and no longer reached by the
    /// bus, where they answered before. Each with how silent a take-over must
    /// find it. A member that never answered (a worker of an older version,
    /// during a rolling upgrade) is asked while it announces itself, and is
    /// taken over only once its membership lapsed until it answers.
    ///
    /// [`Timing::silent_takeover`]: crate::session::Timing::silent_takeover
    pub(super) async fn gone_silent(&self, others: &[Member]) -> HashMap<String, Gone> {
        let timing = &self.deps().timing;
        let Some(silent) = timing.silent_takeover() else {
            return HashMap::new();
        };
        let left_at_most = timing.member_ttl.saturating_sub(silent);
        let answering = {
            let mut answering = self.answering();
            answering.retain(|name| others.iter().any(|m| &m.name == name));
            answering.clone()
        };
        // Silent ones that answered before, and those never heard yet.
        let asked = others.iter().filter(|m| {
            let silent = m.left <= left_at_most;
            silent == answering.contains(&m.name)
        });
        let probes = asked.map(|member| async move {
            let subject = worker_alive_subject(&member.name);
            let answer = self
                .deps()
                .bus
                .request(&subject, Message::default(), PROBE_TIMEOUT)
                .await;
            (member, answer)
        });
        let mut gone = HashMap::new();
        for (member, answer) in futures::future::join_all(probes).await {
            match answer {
                Ok(_) => {
                    self.answering().insert(member.name.clone());
                }
                Err(BusError::NoResponders(_)) if answering.contains(&member.name) => {
                    tracing::info!(member = %member.name, "a silent worker no longer answers on the bus: taking its sessions over");
                    gone.insert(member.name.clone(), Gone::Silent { left_at_most });
                }
                Err(_) => {}
            }
        }
        gone
    }

    /// Closes every session when this worker has lost its bus connection and
    /// no announcement went through for [`Timing::silent_fence`], until
    /// `stop` turns true: others take a silent member that the bus does not
    /// reach over a little later ([`Timing::silent_takeover`]).
    ///
    /// [`Timing::silent_fence`]: crate::session::Timing::silent_fence
    /// [`Timing::silent_takeover`]: crate::session::Timing::silent_takeover
    pub async fn watch_bus(self, mut stop: watch::Receiver<bool>) {
        let Some(fence_after) = self.deps().timing.silent_fence() else {
            return crate::stopped(&mut stop).await;
        };
        let mut tick = tokio::time::interval(WATCH_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = crate::stopped(&mut stop) => return,
                _ = tick.tick() => {}
            }
            let silent = self.silent_for().is_some_and(|s| s >= fence_after);
            if silent && !self.deps().bus.healthy().await {
                self.lapse(
                    "worker cut off from the lease store and the bus: closing every session",
                );
            }
        }
    }
}
