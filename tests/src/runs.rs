//! Who ran a session when, read from the workers' logs (`session running`
//! to `session stopped`, or to the fence's closing of its connection on a
//! lost lease: from then on it is connected nowhere, and what its task
//! still writes is fenced), and how long two workers ran one session at
//! once.
use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// Per session, the times a worker ran it: from `session running` to
/// `session stopped` or [`FENCED`], whichever comes first (open while it
/// still runs), read from its log.
pub type Runs = BTreeMap<String, Vec<(DateTime<Utc>, Option<DateTime<Utc>>)>>;

/// What a worker logs when it closed a session's connection on a lost lease.
pub const FENCED: &str = "the session's connection closed at once: its lease is lost";

pub fn runs(log: &str) -> Runs {
    let mut runs = Runs::new();
    // Cluster roles log JSON lines.
    for line in log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        let message = line["message"].as_str().unwrap_or_default();
        let started = message == "session running";
        if !started && message != "session stopped" && message != FENCED {
            continue;
        }
        let at = line["timestamp"]
            .as_str()
            .and_then(|t| t.parse::<DateTime<Utc>>().ok());
        let (Some(at), Some(id)) = (at, line["client_id"].as_str()) else {
            continue;
        };
        let spans = runs.entry(id.to_owned()).or_default();
        if started {
            spans.push((at, None));
        } else if let Some(open) = spans.iter_mut().rev().find(|(_, end)| end.is_none()) {
            open.1 = Some(at);
        }
    }
    runs
}

/// How long `a` and `b` both ran `id`.
pub fn overlap(a: &Runs, b: &Runs, id: &str) -> Duration {
    overlaps(a, b, id).iter().map(|(_, d)| *d).sum()
}

/// Each span in which `a` and `b` both ran `id`: when it began, how long.
pub fn overlaps(a: &Runs, b: &Runs, id: &str) -> Vec<(DateTime<Utc>, Duration)> {
    let now = Utc::now();
    let mut all = Vec::new();
    for (a_from, a_to) in a.get(id).into_iter().flatten() {
        for (b_from, b_to) in b.get(id).into_iter().flatten() {
            let from = (*a_from).max(*b_from);
            let to = a_to.unwrap_or(now).min(b_to.unwrap_or(now));
            if to > from {
                all.push((from, (to - from).to_std().unwrap_or_default()));
            }
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(at: &str, message: &str) -> String {
        serde_json::json!({"timestamp": at, "message": message, "client_id": "s1"}).to_string()
    }

    #[test]
    fn a_run_ends_when_its_connection_is_fenced_or_it_stops() {
        let log = [
            line("2026-12-07T10:00:00Z", "session running"),
            line("2026-12-07T10:00:01Z", FENCED),
            line("2026-12-07T10:00:04Z", "session stopped"),
            line("2026-12-07T10:00:05Z", "session running"),
            line("2026-12-07T10:00:06Z", "session stopped"),
            line("2026-12-07T10:00:07Z", "session running"),
        ]
        .join("\n");
        let at = |t: &str| t.parse::<DateTime<Utc>>().unwrap();
        let spans = &runs(&log)["s1"];
        assert_eq!(
            spans,
            &[
                (at("2026-12-07T10:00:00Z"), Some(at("2026-12-07T10:00:01Z"))),
                (at("2026-12-07T10:00:05Z"), Some(at("2026-12-07T10:00:06Z"))),
                (at("2026-12-07T10:00:07Z"), None),
            ]
        );
    }
}
