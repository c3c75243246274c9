//! The fault run: a cluster on PostgreSQL, Redis, NATS and S3 servers of its
//! own, under a steady load of customers' sends and contacts' messages whose
//! webhooks go to a receiver that counts every event, through a schedule of
//! faults, each with its recovery: Redis emptied, NATS restarted, PostgreSQL
//! restarted, the S3 server unreachable, every worker restarted in turn, then
//! every API pod. Reports per fault what requests got, the longest a session
//! was unavailable, the events accepted, delivered, lost and duplicated, the
//! sessions run by two workers at once and the time until all was healthy;
//! then checks every event log for gaps. Fails on a lost event, a gap, a
//! double owner or an answer the docs do not name.
mod load;
mod pods;
mod report;
mod services;

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Utc;
use parley_tests::process::run_once;
use parley_tests::runs::{Runs, overlaps, runs};
use parley_tests::services::ClusterEnv;

use super::{Args, events, pair_all, wait_connected};
use load::Load;
use pods::{Pod, Rotation};
use report::{DoubleOwner, Window};
use services::Private;

/// The faults, in the order they are done.
pub const ALL: [&str; 6] = [
    "redis-empty",
    "nats-restart",
    "postgres-restart",
    "s3-unreachable",
    "rolling-workers",
    "rolling-apis",
];

/// How long a restarted server stays down.
const DOWN: Duration = Duration::from_secs(2);

/// How long everything may take to be healthy again after a fault.
const HEALTHY_WITHIN: Duration = Duration::from_secs(120);

/// How long the run waits, after the load, for accepted messages' events.
const DRAIN: Duration = Duration::from_secs(120);

struct Cluster {
    apis: Vec<Pod>,
    workers: Vec<Pod>,
    rotation: Rotation,
    database_url: String,
}

pub async fn run(args: &Args) -> anyhow::Result<()> {
    let only = chosen(args.only.as_deref())?;
    let dir = tempfile::tempdir()?;
    let mut private = Private::start(dir.path()).await;
    let mut cluster = start(args, dir.path(), &private).await?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()?;
    let ids: Vec<String> = (0..args.sessions).map(|i| format!("f{i}")).collect();
    let bases: Vec<String> = cluster
        .apis
        .iter()
        .map(|a| a.process.base.clone())
        .collect();
    pair_all(&http, &bases, &ids, args.pair_rate).await?;
    wait_connected(&http, &bases[0], ids.len(), Duration::from_secs(120)).await?;
    let rx = events::hook_all(&http, &bases[0], &ids).await?;
    let rate = args.send_rate + args.event_rate;
    anyhow::ensure!(
        rate > 0.0,
        "the fault run needs --send-rate or --event-rate"
    );
    println!(
        "fault run: {} API pods, {} workers, {} sessions, {rate:.0} requests/s (customers' sends and contacts' messages in turn), {} s between faults",
        cluster.apis.len(),
        cluster.workers.len(),
        ids.len(),
        args.settle
    );

    let mut load = Load::start(&http, cluster.rotation.clone(), ids.clone(), rate, rx);
    let settle = Duration::from_secs(args.settle);
    let mut windows = vec![window("none (steady load)", Instant::now(), Duration::ZERO)];
    tokio::time::sleep(settle).await;
    for fault in only {
        let began = Instant::now();
        let from_utc = Utc::now();
        match fault {
            "redis-empty" => private.empty_redis(DOWN).await,
            "nats-restart" => private.restart_nats(DOWN).await,
            "postgres-restart" => private.restart_postgres(DOWN).await,
            "s3-unreachable" => private.pause_s3(Duration::from_secs(args.s3_pause)).await,
            "rolling-workers" => roll_workers(&http, args.bin(), &mut cluster, ids.len()).await?,
            "rolling-apis" => roll_apis(&http, args.bin(), &mut cluster).await?,
            _ => unreachable!("checked above"),
        }
        let down = began.elapsed();
        healthy(&http, &cluster, ids.len()).await?;
        windows.push(Window {
            name: fault,
            from: began,
            from_utc,
            down,
            healthy_after: began.elapsed(),
        });
        tokio::time::sleep(settle).await;
    }
    load.stop().await?;
    let missing = load.drain(DRAIN).await;
    let base = cluster.rotation.pick(0);
    let (gaps, _) = super::takeover::logs(&http, &base, &ids).await?;
    let doubles = double_owners(&cluster, &ids).await?;
    let outcomes = load::lock(&load.outcomes).clone();
    let deliveries = load::lock(&load.deliveries).clone();
    let totals = report::print(&windows, &outcomes, &deliveries, &doubles);
    println!(
        "fault run: {} requests, {} events lost, {gaps} gaps in seq, {} sessions run by two at once, {} answers no document names",
        outcomes.len(),
        totals.lost,
        totals.double_owners,
        totals.undocumented
    );
    if let Some(keep) = &args.keep_logs {
        keep_logs(&cluster, keep)?;
        let first = windows[0].from;
        std::fs::write(keep.join("requests.tsv"), report::table(&outcomes, first))?;
    }
    anyhow::ensure!(
        totals.lost == 0
            && missing == 0
            && gaps == 0
            && totals.double_owners == 0
            && totals.undocumented == 0,
        "the fault run failed: {} lost, {gaps} gaps, {} double owners, {} undocumented answers",
        totals.lost,
        totals.double_owners,
        totals.undocumented
    );
    Ok(())
}

/// The faults `--only` names (all when it is absent), as `ALL` spells them.
fn chosen(only: Option<&str>) -> anyhow::Result<Vec<&'static str>> {
    let Some(list) = only else {
        return Ok(ALL.to_vec());
    };
    list.split(',')
        .map(str::trim)
        .map(|name| {
            ALL.iter()
                .copied()
                .find(|f| *f == name)
                .ok_or_else(|| anyhow::anyhow!("no fault {name:?}; the faults: {}", ALL.join(", ")))
        })
        .collect()
}

fn window(name: &'static str, from: Instant, down: Duration) -> Window {
    Window {
        name,
        from,
        from_utc: Utc::now(),
        down,
        healthy_after: Duration::ZERO,
    }
}

async fn start(args: &Args, dir: &Path, private: &Private) -> anyhow::Result<Cluster> {
    let env = ClusterEnv::on(private.endpoints()).await;
    let mut vars = super::base_vars(args);
    vars.extend(env.vars());
    // The workers log each session's start and stop: who ran what, when.
    vars.retain(|(k, _)| k != "RUST_LOG");
    vars.push((
        "RUST_LOG".into(),
        format!("{},parley_worker=info", args.log),
    ));
    let (ok, out) = run_once(args.bin(), &["migrate"], dir, &vars).await;
    anyhow::ensure!(ok, "migrate failed: {out}");
    let mut cluster = Cluster {
        apis: Vec::new(),
        workers: Vec::new(),
        rotation: Rotation::default(),
        database_url: env.database_url.clone(),
    };
    for i in 0..args.apis {
        let pod = Pod::start(args.bin(), dir, "api", format!("api-{i}"), vars.clone()).await;
        cluster.rotation.join(&pod.process.base);
        cluster.apis.push(pod);
    }
    for i in 0..args.workers {
        let pod = Pod::start(
            args.bin(),
            dir,
            "worker",
            format!("worker-{i}"),
            vars.clone(),
        );
        cluster.workers.push(pod.await);
    }
    Ok(cluster)
}

/// Waits until every pod is ready with every dependency and every session
/// is connected.
async fn healthy(http: &reqwest::Client, cluster: &Cluster, sessions: usize) -> anyhow::Result<()> {
    for pod in cluster.apis.iter().chain(&cluster.workers) {
        pod.ready(http, HEALTHY_WITHIN).await?;
    }
    let base = cluster.rotation.pick(0);
    wait_connected(http, &base, sessions, HEALTHY_WITHIN).await
}

/// Each worker in turn: SIGTERM, started again, ready and every session
/// connected before the next.
async fn roll_workers(
    http: &reqwest::Client,
    bin: &Path,
    cluster: &mut Cluster,
    sessions: usize,
) -> anyhow::Result<()> {
    for i in 0..cluster.workers.len() {
        cluster.workers[i].restart(bin).await?;
        healthy(http, cluster, sessions).await?;
    }
    Ok(())
}

/// Each API pod in turn: out of the rotation, SIGTERM, started again, back
/// in the rotation once ready.
async fn roll_apis(
    http: &reqwest::Client,
    bin: &Path,
    cluster: &mut Cluster,
) -> anyhow::Result<()> {
    for pod in &mut cluster.apis {
        cluster.rotation.leave(&pod.process.base);
        pod.restart(bin).await?;
        pod.ready(http, HEALTHY_WITHIN).await?;
        cluster.rotation.join(&pod.process.base);
    }
    Ok(())
}

/// Sessions two workers ran at once: from the workers' logs (every process
/// of each worker pod), and from the network's log of connections.
async fn double_owners(cluster: &Cluster, ids: &[String]) -> anyhow::Result<Vec<DoubleOwner>> {
    let ran: Vec<Runs> = cluster.workers.iter().map(|w| runs(&w.logs())).collect();
    let mut found = Vec::new();
    for (a, b) in pairs(ran.len()) {
        for id in ids {
            for (at, how_long) in overlaps(&ran[a], &ran[b], id) {
                found.push(DoubleOwner {
                    session: id.clone(),
                    at,
                    how_long,
                    seen_in: "workers' logs",
                });
            }
        }
    }
    for (session, at, how_long) in super::network_overlaps(&cluster.database_url, ids).await? {
        found.push(DoubleOwner {
            session,
            at,
            how_long,
            seen_in: "the network's connection log",
        });
    }
    Ok(found)
}

fn pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |a| (a + 1..n).map(move |b| (a, b)))
}

fn keep_logs(cluster: &Cluster, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    for pod in cluster.apis.iter().chain(&cluster.workers) {
        std::fs::write(dir.join(format!("{}.log", pod.label)), pod.logs())?;
    }
    println!("logs kept in {}", dir.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_pair_of_workers_is_compared_once() {
        let all: Vec<_> = super::pairs(3).collect();
        assert_eq!(all, vec![(0, 1), (0, 2), (1, 2)]);
    }
}
