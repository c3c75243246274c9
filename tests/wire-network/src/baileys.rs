//! An independent client on the test network: Baileys (npm `baileys`, a
//! WhatsApp Web implementation in JavaScript), linked as a companion of a
//! test contact's account and driven through `baileys/contact.js` over
//! stdin/stdout. Two independent clients agreeing with the server is the
//! evidence that the server is faithful rather than tuned to one of them.
//!
//! Needs Node.js and the packages of `baileys/package-lock.json` installed
//! (`npm ci` in that folder; `scripts/wire-e2e.sh` does it).
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use crate::WireNetwork;
use crate::dictionary::Dictionary;

/// How long any one step may take.
const STEP: Duration = Duration::from_secs(30);

/// A message Baileys received.
#[derive(Debug, Clone)]
pub struct BaileysMessage {
    pub id: String,
    pub from: String,
    pub text: Option<String>,
    /// The decrypted image, when it was one.
    pub image: Option<Vec<u8>>,
}

pub struct Baileys {
    _child: Child,
    stdin: ChildStdin,
    events: mpsc::UnboundedReceiver<Value>,
    backlog: Vec<Value>,
    next_ref: u64,
}

/// The folder of the driver and its packages.
fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("baileys")
}

/// The token dictionary (version 2) Baileys encodes with, read from its
/// installed package.
async fn dictionary(dir: &std::path::Path) -> anyhow::Result<Dictionary> {
    let script = "const c = require('baileys/lib/WABinary/constants'); \
        process.stdout.write(JSON.stringify({single: c.SINGLE_BYTE_TOKENS, double: c.DOUBLE_BYTE_TOKENS}))";
    let out = Command::new("node")
        .args(["-e", script])
        .current_dir(dir)
        .output()
        .await
        .context("run node")?;
    if !out.status.success() {
        bail!(
            "reading Baileys' dictionary: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    #[derive(serde::Deserialize)]
    struct Tables {
        single: Vec<String>,
        double: Vec<Vec<String>>,
    }
    let tables: Tables = serde_json::from_slice(&out.stdout).context("Baileys' dictionary")?;
    Dictionary::new(tables.single, tables.double)
}

impl Baileys {
    /// Starts the driver against `net`; it shows a QR code to link it.
    /// Baileys 6.17 attaches no privacy token to what it sends (its users
    /// meet error 463: Baileys #2441), so the network it joins stops
    /// requiring them.
    pub async fn start(net: &WireNetwork) -> anyhow::Result<Self> {
        net.require_privacy_tokens(false);
        let dir = folder();
        if !dir.join("node_modules/baileys").is_dir() {
            bail!(
                "Baileys is not installed: run `npm ci` in {} (scripts/wire-e2e.sh does)",
                dir.display()
            );
        }
        net.speak_dictionary(2, dictionary(&dir).await?)?;
        let mut child = Command::new("node")
            .arg("contact.js")
            .arg(net.url())
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .context("start node (Node.js is needed for the Baileys tests)")?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = child.stdout.take().context("stdout")?;
        let (tx, events) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                match serde_json::from_str::<Value>(&line) {
                    Ok(event) => {
                        if tx.send(event).is_err() {
                            break;
                        }
                    }
                    Err(_) => tracing::debug!(%line, "baileys: not an event"),
                }
            }
        });
        Ok(Self {
            _child: child,
            stdin,
            events,
            backlog: Vec::new(),
            next_ref: 0,
        })
    }

    /// The first event `test` accepts (earlier unmatched ones are kept).
    async fn event(&mut self, what: &str, test: impl Fn(&Value) -> bool) -> anyhow::Result<Value> {
        if let Some(i) = self.backlog.iter().position(&test) {
            return Ok(self.backlog.remove(i));
        }
        let until = tokio::time::Instant::now() + STEP;
        loop {
            let event = tokio::time::timeout_at(until, self.events.recv())
                .await
                .map_err(|_| {
                    anyhow!(
                        "Baileys: no {what} within {STEP:?} (saw {:?})",
                        self.backlog
                    )
                })?
                .ok_or_else(|| {
                    anyhow!(
                        "Baileys exited while waiting for {what} (saw {:?})",
                        self.backlog
                    )
                })?;
            if event["event"] == "closed" {
                bail!("Baileys closed ({event}) while waiting for {what}");
            }
            if test(&event) {
                return Ok(event);
            }
            self.backlog.push(event);
        }
    }

    /// The QR code it shows.
    pub async fn qr(&mut self) -> anyhow::Result<String> {
        let event = self.event("a QR code", |e| e["event"] == "qr").await?;
        Ok(event["qr"].as_str().unwrap_or_default().to_string())
    }

    /// Waits until it is logged in; returns its device JID.
    pub async fn opened(&mut self) -> anyhow::Result<String> {
        let event = self.event("the login", |e| e["event"] == "open").await?;
        Ok(event["me"].as_str().unwrap_or_default().to_string())
    }

    async fn command(&mut self, mut command: Value) -> anyhow::Result<String> {
        self.next_ref += 1;
        let reference = self.next_ref.to_string();
        command["ref"] = json!(reference);
        let line = format!("{command}\n");
        self.stdin.write_all(line.as_bytes()).await?;
        self.stdin.flush().await?;
        let done = self
            .event("a send", |e| {
                (e["event"] == "sent" || e["event"] == "failed") && e["ref"] == reference.as_str()
            })
            .await?;
        if done["event"] == "failed" {
            bail!("Baileys could not send: {}", done["error"]);
        }
        Ok(done["id"].as_str().unwrap_or_default().to_string())
    }

    /// Sends `text` to `to` (a JID); returns the message id.
    pub async fn send_text(&mut self, to: &str, text: &str) -> anyhow::Result<String> {
        self.command(json!({"cmd": "text", "to": to, "text": text}))
            .await
    }

    /// Uploads `data` and sends it to `to` as an image; returns the message id.
    pub async fn send_image(
        &mut self,
        to: &str,
        data: &[u8],
        mime: &str,
        caption: &str,
    ) -> anyhow::Result<String> {
        let data = BASE64_STANDARD.encode(data);
        self.command(
            json!({"cmd": "image", "to": to, "data": data, "mime": mime, "caption": caption}),
        )
        .await
    }

    /// Asks for a code to link it to `phone`'s account (typed into that
    /// phone instead of a QR scan); returns the code.
    pub async fn pairing_code(&mut self, phone: &str) -> anyhow::Result<String> {
        self.command(json!({"cmd": "code", "phone": phone})).await
    }

    /// Reacts with `emoji` to message `id` in chat `to` (`from_me`: one of
    /// its own account's); returns the reaction's id.
    pub async fn react(
        &mut self,
        to: &str,
        id: &str,
        from_me: bool,
        emoji: &str,
    ) -> anyhow::Result<String> {
        self.command(json!({"cmd": "react", "to": to, "id": id, "fromMe": from_me, "emoji": emoji}))
            .await
    }

    /// Deletes its own message `id` in chat `to` for everyone.
    pub async fn revoke(&mut self, to: &str, id: &str) -> anyhow::Result<String> {
        self.command(json!({"cmd": "revoke", "to": to, "id": id}))
            .await
    }

    /// The message `id`, once Baileys has received (and for an image,
    /// downloaded and decrypted) it.
    pub async fn message(&mut self, id: &str) -> anyhow::Result<BaileysMessage> {
        let event = self
            .event(&format!("message {id}"), |e| {
                e["event"] == "message" && e["id"] == id
            })
            .await?;
        let image = match event["image"].as_str() {
            Some(b64) => Some(BASE64_STANDARD.decode(b64).context("image bytes")?),
            None => None,
        };
        Ok(BaileysMessage {
            id: id.to_string(),
            from: event["from"].as_str().unwrap_or_default().to_string(),
            text: event["text"].as_str().map(str::to_string),
            image,
        })
    }
}
