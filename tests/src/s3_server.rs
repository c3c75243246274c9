//! An S3-compatible server of a run's own (moto, from the test tools'
//! virtual environment), for runs that make it unreachable: paused with
//! SIGSTOP it accepts connections and answers nothing, as a hung storage
//! endpoint does; SIGCONT brings it back with its objects (moto keeps them
//! in memory, so it is never restarted).
use std::path::PathBuf;
use std::process::Stdio;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use crate::packaged::wait_until_answering;
use crate::process::free_port;

pub struct S3Server {
    child: Child,
    pub port: u16,
}

impl S3Server {
    /// Starts moto on a free port; waits until it answers.
    pub async fn start() -> S3Server {
        let port = free_port();
        let child = Command::new(moto_server())
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start moto_server");
        let server = S3Server { child, port };
        let url = server.url();
        wait_until_answering("moto_server", port, || {
            let url = url.clone();
            async move { reqwest::get(&url).await.is_ok() }
        })
        .await;
        server
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// SIGSTOP: connections are accepted, nothing is answered.
    pub fn pause(&self) {
        self.signal(Signal::SIGSTOP);
    }

    /// SIGCONT: it answers again, everything it held still there.
    pub fn resume(&self) {
        self.signal(Signal::SIGCONT);
    }

    fn signal(&self, signal: Signal) {
        let pid = self.child.id().and_then(|p| i32::try_from(p).ok());
        let pid = pid.expect("moto_server runs");
        kill(Pid::from_raw(pid), signal).expect("signal moto_server");
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        // A stopped process dies of SIGKILL too; resumed first all the same.
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
        }
    }
}

/// `moto_server` of the test tools' virtual environment (`PARLEY_VENV`, by
/// default under the cache directory, as scripts/lib/services.sh makes it),
/// else on PATH.
fn moto_server() -> PathBuf {
    let venv = std::env::var_os("PARLEY_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| Some(PathBuf::from(std::env::var_os("HOME")?).join(".cache")))?;
            Some(cache.join("parley/venv"))
        });
    venv.map(|v| v.join("bin/moto_server"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| crate::packaged::binary("moto_server", "/usr/bin/moto_server"))
}
