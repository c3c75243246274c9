//! The wire-level test network as a process of its own (`parley-wire-network`,
//! built in tests/wire-network), for suites that run the gateway's
//! test-network build over it: its websocket URL and control URL are the
//! gateway's `PARLEY_NETWORK_URL` and `PARLEY_NETWORK_CONTROL_URL`.
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

/// A running test network; it stops with this handle, or when the process
/// that started it exits (its standard input closes).
pub struct TestNetwork {
    child: Child,
    _stdin: ChildStdin,
    pub network_url: String,
    pub control_url: String,
}

impl Drop for TestNetwork {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TestNetwork {
    /// Starts `bin` (a `parley-wire-network`) on free loopback ports and
    /// waits for its ready line.
    pub fn start(bin: &Path) -> TestNetwork {
        assert!(
            bin.is_file(),
            "no test network at {} (cargo build --locked --manifest-path tests/wire-network/Cargo.toml --bins)",
            bin.display()
        );
        let mut child = Command::new(bin)
            .arg("--exit-with-stdin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the test network's ready line");
        let ready: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the test network's ready line {line:?}: {e}"));
        let url = |key: &str| {
            ready[key]
                .as_str()
                .unwrap_or_else(|| panic!("no {key} in {line:?}"))
                .to_string()
        };
        TestNetwork {
            network_url: url("network"),
            control_url: url("control"),
            child,
            _stdin: stdin,
        }
    }

    /// The gateway's settings for this network.
    pub fn vars(&self) -> Vec<(String, String)> {
        [
            ("PARLEY_NETWORK", "whatsapp"),
            ("PARLEY_NETWORK_URL", self.network_url.as_str()),
            ("PARLEY_NETWORK_CONTROL_URL", self.control_url.as_str()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }
}
