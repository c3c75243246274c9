//! The sweep: claims sessions that should run but have no live lease (or
//! whose holder is gone: no live member, or a silent one the bus no longer
//! reaches; its leases are taken over at once), up to this worker's fair
//! share, then sheds one session when it carries too many.
use std::collections::{HashMap, HashSet};

use futures::StreamExt;
use parley_model::ids::ClientId;
use parley_shared::db::DbError;
use parley_shared::lease::{self, Gone, LeaseError, Member};
use rand::seq::SliceRandom;
use tokio::sync::watch;
use tokio::time::Instant;

use super::balance::{fair_share, pick_target, pick_to_shed, should_shed};
use super::{Claim, ClaimError, Origin, Supervisor};

/// Sessions one sweep claims at once (a dead worker's, when it took many).
const CLAIMS_AT_ONCE: usize = 16;

/// What one sweep saw and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Sessions that should run.
    pub desired: usize,
    /// Live workers, this one included.
    pub live_workers: usize,
    pub fair_share: u64,
    /// Sessions claimed by this sweep.
    pub claimed: Vec<ClientId>,
    /// The session handed over to rebalance, if any.
    pub handed_over: Option<ClientId>,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Lease(#[from] LeaseError),
}

impl Supervisor {
    /// One sweep: claim unowned sessions while under the fair share, shed one
    /// when well over it, and announce the resulting load.
    #[tracing::instrument(skip_all, fields(pod_name = %self.pod_name()))]
    pub async fn sweep_once(&self) -> Result<SweepReport, SweepError> {
        if self.inner.registry.is_closed() {
            return Ok(SweepReport::default());
        }
        if self.is_lapsed() {
            // Claims wait until this worker is a member again.
            self.announce().await?;
        }
        let deps = self.deps();
        let desired: Vec<ClientId> = deps
            .db
            .desired_sessions()
            .await?
            .into_iter()
            .map(ClientId::from_stored)
            .collect();
        let keys: Vec<String> = desired
            .iter()
            .map(|id| lease::session_key(id.as_str()))
            .collect();
        let holders = deps.leases.holders(&keys).await?;
        let members: Vec<Member> = deps
            .leases
            .members()
            .await?
            .into_iter()
            .filter(|member| member.name != self.pod_name())
            .collect();
        // A member that fell silent and that the bus no longer reaches is
        // gone: its sessions are taken over as a lapsed member's are.
        let gone = self.gone_silent(&members).await;
        let others: Vec<(String, u64)> = members
            .into_iter()
            .filter(|member| !gone.contains_key(&member.name))
            .map(|member| (member.name, member.load))
            .collect();
        let live_workers = others.len() + 1;
        let fair = fair_share(desired.len(), live_workers);
        let mut report = SweepReport {
            desired: desired.len(),
            live_workers,
            fair_share: fair,
            ..SweepReport::default()
        };

        // Unowned: nobody holds the lease, or a worker that is gone does (no
        // member: dead, or cut off from the store, when it closed its
        // sessions; or silent and not reached by the bus).
        let live: HashSet<&str> = others.iter().map(|(name, _)| name.as_str()).collect();
        let unowned =
            desired
                .iter()
                .zip(&holders)
                .filter_map(|(id, holder)| match holder.as_deref() {
                    None => Some((id, None)),
                    Some(h) if h != self.pod_name() && !live.contains(h) => {
                        let how = gone.get(h).copied().unwrap_or(Gone::Lapsed);
                        Some((id, Some((h, how))))
                    }
                    Some(_) => None,
                });
        let left_waiting = self.claim_unowned(unowned, fair, &mut report.claimed).await;

        // Shed only once every session has an owner: one at a time, each taken up first.
        if !left_waiting {
            report.handed_over = self.rebalance(&others, fair).await;
        }
        if let Err(e) = self.announce().await {
            tracing::warn!(error = %e, "cannot announce worker presence");
        }
        Ok(report)
    }

    /// Claims unowned sessions while under the fair share, and any that waited
    /// past `orphan_grace` regardless. Returns whether some were left unowned.
    /// (`from`: the holder that is gone, whose lease is taken over.)
    async fn claim_unowned<'a>(
        &self,
        unowned: impl Iterator<Item = (&'a ClientId, Option<(&'a str, Gone)>)>,
        fair: u64,
        claimed: &mut Vec<ClientId>,
    ) -> bool {
        let mut unowned = self.overdue(unowned);
        // Workers sweeping together should not all race for the same sessions first.
        unowned.shuffle(&mut rand::thread_rng());
        // Up to the fair share, and any that waited too long (each noted as
        // claimed above the share); then claimed a few at once.
        let mut room = fair.saturating_sub(self.load());
        let mut left_waiting = false;
        let mut chosen = Vec::new();
        for ((id, from), overdue) in unowned {
            let above_share = room == 0;
            if above_share && !overdue {
                left_waiting = true;
                continue;
            }
            room = room.saturating_sub(1);
            let from = from.map(|(holder, gone)| (holder.to_owned(), gone));
            chosen.push(self.claim_swept(id.clone(), from, above_share));
        }
        let outcomes: Vec<_> = futures::stream::iter(chosen)
            .buffer_unordered(CLAIMS_AT_ONCE)
            .collect()
            .await;
        for (id, above_share, outcome) in outcomes {
            match outcome {
                Ok(Claim::Ours { .. }) => {
                    if above_share {
                        tracing::warn!(client_id = %id, "claimed a session no other worker took up");
                        let hold = self.deps().timing.orphan_grace * 10;
                        self.hysteresis().hold(hold);
                    }
                    claimed.push(id);
                }
                Ok(_) => {}
                Err(e) => {
                    left_waiting = true;
                    tracing::warn!(client_id = %id, error = %e, "cannot claim a session");
                }
            }
        }
        left_waiting
    }

    /// One claim of a sweep, with what the sweep needs to know of it.
    async fn claim_swept(
        &self,
        id: ClientId,
        from: Option<(String, Gone)>,
        above_share: bool,
    ) -> (ClientId, bool, Result<Claim, ClaimError>) {
        let from = from.as_ref().map(|(holder, gone)| (holder.as_str(), *gone));
        let outcome = self.claim_from(&id, Origin::Sweep, from).await;
        (id, above_share, outcome)
    }

    /// Pairs each unowned session with whether it waited past `orphan_grace`,
    /// and forgets the sessions no longer unowned.
    fn overdue<'a, T>(
        &self,
        unowned: impl Iterator<Item = (&'a ClientId, T)>,
    ) -> Vec<((&'a ClientId, T), bool)> {
        let grace = self.deps().timing.orphan_grace;
        let now = Instant::now();
        let mut since = self.unowned_since();
        let mut seen = HashMap::new();
        let list = unowned
            .map(|(id, with)| {
                let first = since.get(id).copied().unwrap_or(now);
                seen.insert(id.clone(), first);
                ((id, with), now.duration_since(first) >= grace)
            })
            .collect();
        *since = seen;
        list
    }

    /// Hands one session over to the least loaded member when this worker
    /// carries more than its fair share and that member clearly less, once
    /// membership has settled, and not while the lease store settles after
    /// losing its data (no claim would be granted: the session would have
    /// no owner until then).
    async fn rebalance(&self, others: &[(String, u64)], fair: u64) -> Option<ClientId> {
        let timing = &self.deps().timing;
        let reset = self.deps().leases.reset_seen();
        if reset.is_some_and(|at| at.elapsed() < timing.lease_ttl) {
            return None;
        }
        let target = pick_target(others);
        let ready = {
            let mut hysteresis = self.hysteresis();
            hysteresis.observe(others.iter().map(|(name, _)| name.clone()).collect());
            hysteresis.ready(timing.rebalance_settle, timing.rebalance_gap)
        };
        let least_other = target.map(|(_, load)| load);
        if !ready || !should_shed(self.load(), fair, least_other) {
            return None;
        }
        let (to, _) = target?;
        let id = pick_to_shed(&self.inner.registry.snapshot())?;
        tracing::info!(client_id = %id, load = self.load(), fair, to, "handing a session over to spread load");
        self.hysteresis().shed();
        self.hand_over_to(&id, to).await.then_some(id)
    }

    /// Sweeps at once and then every `timing.sweep_every` until `stop` turns true.
    pub async fn run_sweeps(self, mut stop: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(self.deps().timing.sweep_every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = crate::stopped(&mut stop) => break,
                _ = tick.tick() => {
                    if let Err(e) = self.sweep_once().await {
                        tracing::warn!(error = %e, "sweep failed; retrying");
                    }
                }
            }
        }
    }
}
