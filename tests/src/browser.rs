//! A real browser for tests: Debian's headless Chromium driven through its
//! ChromeDriver (installed by `scripts/test.sh`). Each [`Browser`] has its own
//! ChromeDriver process and profile, stopped when dropped.
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

pub use fantoccini::Locator;
use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use tokio::process::{Child, Command};

use crate::process::free_port;

/// How long a page may take to show what a test waits for.
pub const PAGE_WAIT: Duration = Duration::from_secs(20);

pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

/// Where ChromeDriver is, or `None` when it is not installed (a test then
/// fails under CI, and says why elsewhere).
pub fn chromedriver() -> Option<PathBuf> {
    let path = std::env::var_os("PARLEY_CHROMEDRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromedriver"));
    path.is_file().then_some(path)
}

/// Whether browser tests can run here; under CI (`CI=true`) a missing browser
/// fails the test instead.
pub fn available(test: &str) -> bool {
    if chromedriver().is_some() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: no ChromeDriver at /usr/bin/chromedriver (install chromium and chromium-driver, or run scripts/test.sh)"
    );
    eprintln!("{test}: skipped, no ChromeDriver (scripts/test.sh installs it)");
    false
}

impl Browser {
    /// Starts ChromeDriver and a headless Chromium of `width`×`height`.
    pub async fn start(width: u32, height: u32) -> Browser {
        let driver_bin = chromedriver().expect("ChromeDriver installed");
        let port = free_port();
        let driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // A group of its own: the Chromium it starts goes with it (Drop).
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("start chromedriver");
        let profile = tempfile::tempdir().expect("profile dir");
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": std::env::var("PARLEY_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
                "args": [
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--no-first-run",
                    "--disable-extensions",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--hide-scrollbars",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            }),
        );
        let url = format!("http://127.0.0.1:{port}");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let client = loop {
            match ClientBuilder::new(HttpConnector::new())
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(e) if tokio::time::Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("no browser session from ChromeDriver at {url}: {e}"),
            }
        };
        client
            .set_window_size(width, height)
            .await
            .expect("window size");
        Browser {
            client,
            driver,
            _profile: profile,
        }
    }

    /// The first element `css` selects, waiting up to [`PAGE_WAIT`] for it.
    pub async fn wait_css(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(PAGE_WAIT)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css} within {PAGE_WAIT:?}: {e}"))
    }

    /// Waits until the text of the first element `css` selects satisfies `ok`;
    /// returns that text.
    pub async fn wait_text(&self, css: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = tokio::time::Instant::now() + PAGE_WAIT;
        let mut last = String::new();
        loop {
            if let Ok(el) = self.client.find(Locator::Css(css)).await
                && let Ok(text) = el.text().await
            {
                if ok(&text) {
                    return text;
                }
                last = text;
            }
            if tokio::time::Instant::now() >= deadline {
                let page = self.text().await;
                panic!(
                    "{css} never showed the expected text within {PAGE_WAIT:?}; last: {last:?}; the page: {page}"
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The page's text as a user reads it (for failure messages).
    pub async fn text(&self) -> String {
        let text = self
            .client
            .execute("return document.body.innerText", vec![])
            .await
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        text.chars().take(3000).collect()
    }

    /// Ends the browser session and stops ChromeDriver.
    pub async fn stop(self) {
        let _ = self.client.clone().close().await;
        // Drop ends ChromeDriver's process group.
    }
}

/// Ends ChromeDriver and every process it started (Chromium and its
/// helpers), also when a test panics before [`Browser::stop`].
impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(pid) = self.driver.id().and_then(|pid| i32::try_from(pid).ok()) {
            let group = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
}
