//! What the fault run saw, fault by fault: the answers requests got, how
//! long a session was unavailable (refused, or held past a second), what became of each accepted message's
//! event, and who ran a session at once; and which answers no document
//! names.
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::load::{Answer, Kind, Outcome};

/// One fault, from its start to the next one's (the last: to the load's end).
pub struct Window {
    pub name: &'static str,
    pub from: Instant,
    pub from_utc: DateTime<Utc>,
    /// How long the fault lasted (from its start to its recovery's end).
    pub down: Duration,
    /// From its start until every pod was ready and every session connected.
    pub healthy_after: Duration,
}

/// Two runners of one session at once, from a source ("workers' logs",
/// "the network's connection log"), beginning at `at`.
pub struct DoubleOwner {
    pub session: String,
    pub at: DateTime<Utc>,
    pub how_long: Duration,
    pub seen_in: &'static str,
}

/// Whether a refusal is one the docs name for a dependency out of reach: 503
/// with `Retry-After`, 504 (the owner did not answer in time), 429 with
/// `Retry-After`, and the spec's 502 for a send the network did not take
/// (nothing was sent: the sandbox keeps its state in the database). Anything
/// else, and no answer at all, is a finding.
pub fn documented(answer: &Answer) -> bool {
    match answer {
        Answer::Ok => true,
        Answer::Refused {
            status: 502, error, ..
        } => error.contains("nothing was sent"),
        Answer::Refused {
            status,
            retry_after,
            ..
        } => matches!((status, retry_after), (503 | 429, true) | (504, _)),
        Answer::None(_) => false,
    }
}

fn describe(answer: &Answer) -> String {
    match answer {
        Answer::Ok => "200".into(),
        Answer::Refused {
            status,
            error,
            retry_after,
        } => {
            let header = if *retry_after { " (Retry-After)" } else { "" };
            format!("{status} {error:?}{header}")
        }
        Answer::None(why) => why.clone(),
    }
}

pub struct Totals {
    pub lost: usize,
    pub undocumented: usize,
    pub double_owners: usize,
}

/// Prints one block per window; returns the run's totals.
pub fn print(
    windows: &[Window],
    outcomes: &[Outcome],
    deliveries: &HashMap<usize, u32>,
    doubles: &[DoubleOwner],
) -> Totals {
    let mut totals = Totals {
        lost: 0,
        undocumented: 0,
        double_owners: doubles.len(),
    };
    let unavailable = unavailability(outcomes);
    for (i, w) in windows.iter().enumerate() {
        let to = windows.get(i + 1).map(|next| next.from);
        let inside = |at: Instant| at >= w.from && to.is_none_or(|to| at < to);
        // A request belongs to the fault it was answered in.
        let mine: Vec<&Outcome> = outcomes
            .iter()
            .filter(|o| inside(o.started + o.took))
            .collect();
        println!(
            "fault {}: lasted {:.1} s; every pod ready and every session connected {:.1} s after it began",
            w.name,
            w.down.as_secs_f64(),
            w.healthy_after.as_secs_f64()
        );
        let mut answers: BTreeMap<(Kind, String), usize> = BTreeMap::new();
        for o in &mine {
            *answers.entry((o.kind, describe(&o.answer))).or_default() += 1;
            if !documented(&o.answer) {
                totals.undocumented += 1;
            }
        }
        for ((kind, answer), count) in &answers {
            println!("  {}: {count}x {answer}", kind.name());
        }
        let longest = mine
            .iter()
            .filter_map(|o| unavailable.get(&o.n))
            .max()
            .copied()
            .unwrap_or_default();
        let slowest = mine.iter().map(|o| o.took).max().unwrap_or_default();
        println!(
            "  the longest a session was unavailable: {:.1} s; the slowest answer: {:.1} s",
            longest.as_secs_f64(),
            slowest.as_secs_f64()
        );
        let accepted: Vec<&&Outcome> = mine
            .iter()
            .filter(|o| matches!(o.answer, Answer::Ok))
            .collect();
        let got = |o: &&&Outcome| deliveries.get(&o.n).copied().unwrap_or(0);
        let delivered = accepted.iter().filter(|o| got(o) > 0).count();
        let duplicates: u32 = accepted.iter().map(|o| got(o).saturating_sub(1)).sum();
        let lost = accepted.len() - delivered;
        totals.lost += lost;
        println!(
            "  events: {} accepted, {delivered} delivered, {lost} lost, {duplicates} duplicated",
            accepted.len()
        );
        let next_utc = windows.get(i + 1).map(|next| next.from_utc);
        let doubled: Vec<&DoubleOwner> = doubles
            .iter()
            .filter(|d| d.at >= w.from_utc && next_utc.is_none_or(|to| d.at < to))
            .collect();
        println!("  sessions run by two at once: {}", doubled.len());
        for d in doubled {
            println!(
                "    {} for {} ms from {} ({})",
                d.session,
                d.how_long.as_millis(),
                d.at,
                d.seen_in
            );
        }
    }
    totals
}

/// Every request as a line (tab-separated): its number, kind, session,
/// start in seconds after `first`, milliseconds to its answer, the answer.
pub fn table(outcomes: &[Outcome], first: Instant) -> String {
    let mut sorted: Vec<&Outcome> = outcomes.iter().collect();
    sorted.sort_by_key(|o| o.n);
    let mut out = String::from("n\tkind\tsession\tstarted_s\ttook_ms\tanswer\n");
    for o in sorted {
        out.push_str(&format!(
            "{}\t{}\t{}\t{:.3}\t{}\t{}\n",
            o.n,
            o.kind.name(),
            o.session,
            o.started.saturating_duration_since(first).as_secs_f64(),
            o.took.as_millis(),
            describe(&o.answer)
        ));
    }
    out
}

/// An answer that took longer than this waited for its session (held while
/// the session reconnected or moved): the session was unavailable meanwhile.
const HELD: Duration = Duration::from_secs(1);

/// For each failed or held request, how long its session stayed unavailable
/// from it: until the session's next promptly answered request began, or a
/// held request's own answer if that came first (or the last request's
/// start, when nothing was answered after it).
fn unavailability(outcomes: &[Outcome]) -> HashMap<usize, Duration> {
    let mut by_session: BTreeMap<usize, Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes {
        by_session.entry(o.session).or_default().push(o);
    }
    let mut spans = HashMap::new();
    for list in by_session.values_mut() {
        list.sort_by_key(|o| o.started);
        let end = list.last().map(|o| o.started);
        let mut next_ok = end;
        for o in list.iter().rev() {
            let answered = matches!(o.answer, Answer::Ok);
            if answered && o.took <= HELD {
                next_ok = Some(o.started);
                continue;
            }
            let own = answered.then(|| o.started + o.took);
            let back = match (next_ok, own) {
                (Some(next), Some(own)) => Some(next.min(own)),
                (next, own) => next.or(own),
            };
            if let Some(back) = back {
                spans.insert(o.n, back.saturating_duration_since(o.started));
            }
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::{Answer, documented, unavailability};
    use crate::faults::load::{Kind, Outcome};
    use std::time::{Duration, Instant};

    #[test]
    fn a_session_is_unavailable_while_refused_or_held() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let at = |n: usize, start: u64, took: u64, answer: Answer| Outcome {
            n,
            kind: Kind::Send,
            session: 0,
            started: t0 + ms(start),
            took: ms(took),
            answer,
        };
        let outcomes = [
            at(0, 0, 10, Answer::Ok),
            // Refused, then answered promptly 2 s later.
            at(1, 1_000, 10, refused(503, "bus unavailable", true)),
            at(2, 3_000, 10, Answer::Ok),
            // Held 4 s, the next request (started meanwhile) held as well.
            at(3, 4_000, 4_000, Answer::Ok),
            at(4, 5_000, 3_500, Answer::Ok),
            at(5, 9_000, 10, Answer::Ok),
        ];
        let spans = unavailability(&outcomes);
        assert_eq!(spans.get(&0), None);
        assert_eq!(spans.get(&1), Some(&ms(2_000)));
        assert_eq!(spans.get(&2), None);
        assert_eq!(spans.get(&3), Some(&ms(4_000)));
        assert_eq!(spans.get(&4), Some(&ms(3_500)));
        assert_eq!(spans.get(&5), None);
    }

    fn refused(status: u16, error: &str, retry_after: bool) -> Answer {
        Answer::Refused {
            status,
            error: error.into(),
            retry_after,
        }
    }

    #[test]
    fn only_the_answers_the_docs_name_pass() {
        assert!(documented(&refused(503, "bus unavailable", true)));
        assert!(!documented(&refused(503, "bus unavailable", false)));
        assert!(documented(&refused(
            504,
            "the session did not answer in time",
            false
        )));
        let unsent = "the network could not be reached (x); nothing was sent, retry";
        assert!(documented(&refused(502, unsent, false)));
        let unknown = "the network did not confirm the message in time; it may or may not have been delivered";
        assert!(!documented(&refused(502, unknown, false)));
        assert!(!documented(&refused(500, "internal error", false)));
        assert!(!documented(&Answer::None("no answer within 45s".into())));
    }
}
