//! The resident memory of the processes that move files (the workers, or
//! `serve`) while a phase runs: their level before, and the peak sampled
//! every 20 ms; and the phase's one-line report.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parley_tests::process;

use super::Processes;

/// The summed resident memory of `pids`, in KiB.
fn rss_kib(pids: &[u32]) -> u64 {
    pids.iter().filter_map(|pid| process::rss_kib(*pid)).sum()
}

/// A running sampler of the file-moving processes' memory.
pub struct PeakRss {
    before: u64,
    peak: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl PeakRss {
    /// Starts sampling the workers of `p`, or its `serve` processes.
    pub fn start(p: &Processes) -> PeakRss {
        let pids: Vec<u32> = if p.workers.is_empty() {
            p.apis.iter().filter_map(|a| a.pid()).collect()
        } else {
            p.workers.iter().filter_map(|w| w.pid()).collect()
        };
        let before = rss_kib(&pids);
        let peak = Arc::new(AtomicU64::new(before));
        let done = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn({
            let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
            async move {
                while !done.load(Ordering::Relaxed) {
                    peak.fetch_max(rss_kib(&pids), Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        });
        PeakRss {
            before,
            peak,
            done,
            task,
        }
    }

    /// Stops sampling and prints `what` (e.g. "mirrored") for `files` files of
    /// `bytes` each that took `took`, with the memory before and at peak.
    pub async fn report(
        self,
        what: &str,
        files: usize,
        bytes: u64,
        took: Duration,
    ) -> anyhow::Result<()> {
        self.done.store(true, Ordering::Relaxed);
        self.task.await?;
        let (before, peak) = (self.before, self.peak.load(Ordering::Relaxed));
        let total = bytes as f64 * files as f64;
        println!(
            "{what} {files} file(s) of {:.0} MiB in {:.1}s ({:.0} MiB/s); resident memory of the processes moving them: {} KiB before, {} KiB at peak: +{:.1} MiB",
            bytes as f64 / 1048576.0,
            took.as_secs_f64(),
            total / 1048576.0 / took.as_secs_f64(),
            before,
            peak,
            peak.saturating_sub(before) as f64 / 1024.0
        );
        Ok(())
    }
}
