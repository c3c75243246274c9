//! A PostgreSQL of a run's own (Debian's packaged server, `initdb` into a
//! fresh directory), for runs that restart it: its data directory survives
//! a restart, so what was committed before is there again after, as on a
//! database server that crashed and came back.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::packaged::wait_until_answering;
use crate::process::free_port;

pub struct PostgresServer {
    bindir: PathBuf,
    dir: PathBuf,
    pub port: u16,
    /// Runs the server's programs as the `postgres` user when this runs as
    /// root (`initdb` refuses root).
    as_postgres: bool,
}

impl PostgresServer {
    /// Creates a cluster under `dir` and starts it; waits until it answers.
    pub async fn start(dir: &Path) -> PostgresServer {
        let as_postgres = running_as_root();
        let server = PostgresServer {
            bindir: bindir(),
            dir: dir.to_path_buf(),
            port: free_port(),
            as_postgres,
        };
        std::fs::create_dir_all(dir).expect("create the database directory");
        if as_postgres {
            // The server's user must reach its directory: a run's temporary
            // directory is its creator's alone.
            if let Some(parent) = dir.parent() {
                use std::os::unix::fs::PermissionsExt;
                let open = std::fs::Permissions::from_mode(0o755);
                std::fs::set_permissions(parent, open).expect("open the run's directory");
            }
            if !Command::new("id")
                .arg("postgres")
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
            {
                let mut useradd = Command::new("useradd");
                useradd.args(["-r", "postgres"]);
                run(useradd);
            }
            let mut chown = Command::new("chown");
            chown.args(["postgres", &dir.display().to_string()]);
            run(chown);
        }
        let data = server.data();
        let initdb = server.bindir.join("initdb").display().to_string();
        run(server.program(&initdb, &["-D", &data, "-A", "trust", "-U", "postgres"]));
        server.up().await;
        server
    }

    /// The URL of its `postgres` database, as the superuser.
    pub fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops it at once, as a crash does (`pg_ctl stop -m immediate`: no
    /// checkpoint; what was committed is recovered from the WAL at start).
    pub fn crash(&self) {
        let data = self.data();
        self.pg_ctl(&["-D", &data, "-m", "immediate", "stop"]);
    }

    /// Starts it again on the same port and data; waits until it answers.
    pub async fn up(&self) {
        let (data, log) = (self.data(), self.dir.join("log").display().to_string());
        // Room for a cluster's pools as docs/operations.md sizes them (23
        // per worker, 20 per API pod): the default 100 is short of 3 workers
        // and 2 API pods, which then wait for connections after a restart.
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300",
            self.port,
            self.dir.display()
        );
        self.pg_ctl(&["-D", &data, "-o", &options, "-l", &log, "-w", "start"]);
        let url = self.admin_url();
        wait_until_answering("postgres", self.port, || {
            let url = url.clone();
            async move { parley_shared::db::Db::connect(&url).await.is_ok() }
        })
        .await;
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    fn pg_ctl(&self, args: &[&str]) {
        let pg_ctl = self.bindir.join("pg_ctl").display().to_string();
        run(self.program(&pg_ctl, args));
    }

    /// One of the server's programs, run as `postgres` when root.
    fn program(&self, program: &str, args: &[&str]) -> Command {
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", program]);
            c
        } else {
            Command::new(program)
        };
        cmd.args(args).stdin(Stdio::null());
        cmd
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        let (data, pg_ctl) = (self.data(), self.bindir.join("pg_ctl"));
        let pg_ctl = pg_ctl.display().to_string();
        let mut stop = self.program(&pg_ctl, &["-D", &data, "-m", "immediate", "stop"]);
        let _ = stop.stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

/// Runs a program to completion; fails the run when it fails.
fn run(mut cmd: Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether this process runs as root (the owner of its own `/proc` entry).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The newest packaged server's programs (`/usr/lib/postgresql/<version>/bin`).
fn bindir() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, e.path().join("bin")))
        })
        .filter(|(_, bin)| bin.join("initdb").is_file())
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, bin)| bin)
        .expect("PostgreSQL's server programs are required (the test script installs them)")
}
