//! CPU time per process during a phase (Linux `/proc`): the gateway's own
//! processes, the services they use and the harness itself, so a benchmark
//! shows where the machine's cores went, per request. For the gateway's
//! processes also their threads' context switches per request: a count of
//! hand-offs between threads that, unlike CPU time on a shared machine,
//! comes out the same from run to run.
use std::collections::BTreeMap;

/// Clock ticks per second of `/proc/<pid>/stat` times (USER_HZ, 100 on Linux).
const TICKS_PER_SEC: f64 = 100.0;

/// Service processes counted by their command name.
const SERVICES: [&str; 4] = ["postgres", "nats-server", "redis-server", "moto_server"];

/// User + system CPU ticks of one process, if it runs.
fn ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// CPU seconds (user + system) one process used so far; 0 once it ended.
pub fn seconds(pid: u32) -> f64 {
    ticks(pid).unwrap_or(0) as f64 / TICKS_PER_SEC
}

/// Context switches (voluntary and not) of every thread of one process.
fn switches(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let mut total = 0;
    for task in tasks.flatten() {
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        total += status
            .lines()
            .filter(|l| {
                l.starts_with("voluntary_ctxt_switches")
                    || l.starts_with("nonvoluntary_ctxt_switches")
            })
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    total
}

fn command_name(pid: u32) -> Option<String> {
    Some(
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .ok()?
            .trim()
            .to_string(),
    )
}

/// CPU ticks per label at one moment: the named gateway processes, every
/// process of each service summed, and this process (as `own`).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    ticks: BTreeMap<String, u64>,
    /// The gateway's processes only.
    switches: BTreeMap<String, u64>,
}

impl Snapshot {
    pub fn take(gateway: &[(String, u32)], own: &str) -> Snapshot {
        let mut by_label = BTreeMap::new();
        let mut switched = BTreeMap::new();
        for (label, pid) in gateway {
            by_label.insert(label.clone(), ticks(*pid).unwrap_or(0));
            switched.insert(label.clone(), switches(*pid));
        }
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                    continue;
                };
                let Some(name) = command_name(pid) else {
                    continue;
                };
                if let Some(service) = SERVICES.iter().find(|s| name.starts_with(*s)) {
                    *by_label.entry(service.to_string()).or_insert(0) += ticks(pid).unwrap_or(0);
                }
            }
        }
        by_label.insert(own.into(), ticks(std::process::id()).unwrap_or(0));
        Snapshot {
            ticks: by_label,
            switches: switched,
        }
    }

    /// Prints CPU milliseconds per request spent by each label between `self` and `later`.
    pub fn print_per_request(&self, later: &Snapshot, requests: u64, seconds: f64) {
        let mut total = 0.0;
        let per_request = |n: f64| n / requests.max(1) as f64;
        println!(
            "  CPU during the phase (ms per request; cores busy; the gateway's context switches per request):"
        );
        for (label, after) in &later.ticks {
            let before = self.ticks.get(label).copied().unwrap_or(0);
            let secs = after.saturating_sub(before) as f64 / TICKS_PER_SEC;
            total += secs;
            let switched = match (self.switches.get(label), later.switches.get(label)) {
                (Some(before), Some(after)) => {
                    format!(
                        "  {:>6.1}",
                        per_request(after.saturating_sub(*before) as f64)
                    )
                }
                _ => String::new(),
            };
            println!(
                "    {label:<14} {:>7.3} ms  {:>5.2}{switched}",
                per_request(secs * 1000.0),
                secs / seconds.max(0.001)
            );
        }
        println!(
            "    {:<14} {:>7.3} ms  {:>5.2}",
            "all",
            total * 1000.0 / requests.max(1) as f64,
            total / seconds.max(0.001)
        );
    }
}
