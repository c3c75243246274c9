//! A `parley` process started for real, with its output kept for failure reports,
//! killed when dropped.
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

/// A free loopback port (the OS picks one; it is released before use).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free port on loopback")
}

/// Starts tried before a port conflict is reported as a failure.
const BIND_ATTEMPTS: u32 = 5;

/// Whether a process's output says one of its listeners found its port taken.
fn bind_conflict(output: &str) -> bool {
    output.contains("cannot listen on") && output.contains("in use")
}

pub struct Parley {
    child: Option<Child>,
    pub port: u16,
    /// The operations listener's port (`/metrics`).
    pub ops_port: u16,
    pub base: String,
    pub log: PathBuf,
    pub dir: PathBuf,
}

impl Parley {
    /// Starts `bin <args>` in `dir` with exactly `vars` (plus PATH and HOME), on
    /// free ports, and waits until `/health/live` answers (deadline 60 s).
    /// Ports are picked by binding and releasing them, so another process may
    /// take one before `parley` binds it: a start that fails on a port in use
    /// is retried on new ports.
    pub async fn start(bin: &Path, args: &[&str], dir: &Path, vars: &[(String, String)]) -> Parley {
        Parley::start_on(bin, args, dir, vars, &mut free_port).await
    }

    /// [`Parley::start`] with the ports `pick` hands out.
    pub async fn start_on(
        bin: &Path,
        args: &[&str],
        dir: &Path,
        vars: &[(String, String)],
        pick: &mut dyn FnMut() -> u16,
    ) -> Parley {
        let mut attempt = 1;
        loop {
            let mut p = Parley::spawn(bin, args, dir, vars, pick(), pick());
            match p.wait_live(Duration::from_secs(60)).await {
                Ok(()) => return p,
                Err(output) if attempt < BIND_ATTEMPTS && bind_conflict(&output) => attempt += 1,
                Err(output) => panic!("parley exited early:\n{output}"),
            }
        }
    }

    fn spawn(
        bin: &Path,
        args: &[&str],
        dir: &Path,
        vars: &[(String, String)],
        port: u16,
        ops_port: u16,
    ) -> Parley {
        let log = dir.join(format!("parley-{port}.log"));
        let out = std::fs::File::create(&log).expect("create log");
        let err = out.try_clone().expect("clone log");
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", std::env::var("HOME").unwrap_or_default())
            .env("RUST_LOG", "info")
            .env("PARLEY_BIND", format!("127.0.0.1:{port}"))
            .env("PARLEY_OPS_BIND", format!("127.0.0.1:{ops_port}"))
            .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .kill_on_drop(true);
        let child = cmd.spawn().expect("spawn parley");
        Parley {
            child: Some(child),
            port,
            ops_port,
            base: format!("http://127.0.0.1:{port}"),
            log,
            dir: dir.to_path_buf(),
        }
    }

    /// Waits until `/health/live` answers; `Err` with the process's output
    /// when it exits first. The port is asked only once the process holds
    /// it: another test may have bound it first (the process then exits on
    /// the conflict), and its server must get no probe, nor this one its
    /// answer.
    async fn wait_live(&mut self, deadline: Duration) -> Result<(), String> {
        let until = Instant::now() + deadline;
        let client = reqwest::Client::new();
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(format!("({status})\n{}", self.output()));
            }
            let url = format!("{}/health/live", self.base);
            let ours = self
                .pid()
                .and_then(|pid| crate::listeners::listens_on(pid, self.port));
            if ours != Some(false)
                && let Ok(r) = client
                    .get(&url)
                    .timeout(Duration::from_secs(2))
                    .send()
                    .await
                && r.status().is_success()
            {
                return Ok(());
            }
            if Instant::now() > until {
                panic!(
                    "parley did not become live within {deadline:?}:\n{}",
                    self.output()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    /// Resident memory of the process in KiB (Linux), if it runs.
    pub fn rss_kib(&self) -> Option<u64> {
        rss_kib(self.pid()?)
    }

    /// Everything the process printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `path` on the operations listener (`/metrics`).
    pub fn ops_url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.ops_port)
    }

    /// Sends SIGKILL and waits for the process to end.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// Sends SIGTERM and waits (deadline 30 s) for a clean exit; returns the exit code.
    pub async fn terminate(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        let pid = child.id()?;
        if let Ok(pid) = i32::try_from(pid) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        match tokio::time::timeout(Duration::from_secs(30), child.wait()).await {
            Ok(Ok(status)) => status.code(),
            _ => {
                let _ = child.kill().await;
                None
            }
        }
    }
}

/// Runs `bin <args>` to completion with exactly `vars`; returns (success, output).
pub async fn run_once(
    bin: &Path,
    args: &[&str],
    dir: &Path,
    vars: &[(String, String)],
) -> (bool, String) {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run parley");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Resident memory of process `pid` in KiB (Linux), if it runs.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
