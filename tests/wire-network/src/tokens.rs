//! Privacy tokens: the gate the real server puts on 1:1 messages between
//! accounts, and error 463 for a message that passes no part of it.
//!
//! Taken from whatsapp-rust 0.7 (`send/tctoken_lifecycle.rs`, `features/
//! tctoken.rs`, `handlers/notification/privacy_business.rs`) and wacore 0.7
//! (`iq/tctoken.rs`, `iq/abprops.rs`), which follow WhatsApp Web:
//! - The server turns tokens on by A/B props (`props`): attaching a
//!   trusted-contact token to every 1:1 message and to profile picture
//!   requests, the salted fallback, the token window (bucket duration and
//!   count) and issuing to LIDs.
//! - After a message to a contact, a client issues it a token (`<iq
//!   xmlns="privacy" type="set"><tokens><token jid t type="trusted_contact"/>`);
//!   the server mints the token and hands it to the contact's devices in a
//!   `<notification type="privacy_token">`; the contact attaches it
//!   (`<tctoken>`) to what it sends back (`issue`).
//! - Without a valid token a client attaches `<cstoken>`,
//!   HMAC-SHA256(its account's salt, `"<recipient lid>@lid"`); the salt
//!   reaches a companion by app state (`nct_salt_sync`, see `app_state`).
//! - The server lets a 1:1 message through with a token the recipient
//!   issued to the sender and still inside its window, or the sender's
//!   salted token for this recipient; otherwise `<ack error="463">`, and it
//!   reaches no one (`check`). whatsapp-rust logs that nack as
//!   `MissingTcToken` (`client/node_io.rs`).
//!
//! Our choices, where the sources do not say: the server keeps each
//! account's salt (registered by its phone) to check salted tokens; a
//! resend answering a retry receipt (its `<enc>` carry `count`) passes
//! without a token, as whatsapp-rust 0.7 attaches none to it (`retry.rs`).
use std::collections::HashMap;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use whatsapp_rust::wacore_binary::node::Node;

use crate::nodes::{attr, child, child_bytes, children, element, iq_result, leaf_bytes, now};
use crate::registry::{Registry, split_jid};

/// The server's code for a 1:1 message without a valid token.
pub const NO_TOKEN: &str = "463";

/// The A/B prop codes the token lifecycle reads (wacore `iq/abprops.rs`).
const SENDING_ON_ALL_1_ON_1: u32 = 10518;
const SALTED_FALLBACK: u32 = 24941;
const BUCKET_SECONDS: u32 = 865;
const BUCKET_SECONDS_SENDER: u32 = 996;
const BUCKETS: u32 = 909;
const BUCKETS_SENDER: u32 = 997;
const ISSUE_TO_LID: u32 = 14303;
/// A token on a profile picture request (wacore `iq/props.rs`, `stale`).
const PROFILE_PIC_TOKEN: u32 = 9666;

/// How the network gates 1:1 messages.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Whether 1:1 messages need a token (the props turn them on for clients).
    pub required: bool,
    /// The token window: buckets of this many seconds...
    pub bucket_seconds: i64,
    /// ...of which a token stays valid in this many, the current one included.
    pub buckets: i64,
}

impl Default for Settings {
    /// The real window's defaults (wacore `TC_TOKEN_BUCKET_DURATION`, `TC_TOKEN_NUM_BUCKETS`).
    fn default() -> Self {
        Settings {
            required: true,
            bucket_seconds: 604_800,
            buckets: 4,
        }
    }
}

/// What let a 1:1 message through, or that nothing did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// A token the recipient issued to the sender (`<tctoken>`).
    Trusted,
    /// The sender's salted token for the recipient (`<cstoken>`).
    Salted,
    /// Refused with 463.
    Refused,
}

/// One 1:1 message the gate looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gated {
    pub from: String,
    pub to: String,
    pub id: String,
    pub proof: Proof,
}

/// A token the server minted: who issued it to whom, and its timestamp.
#[derive(Debug, Clone)]
struct Issued {
    issuer: String,
    holder: String,
    t: i64,
}

/// The network's privacy tokens: settings, salts, issued tokens, and what
/// the gate decided.
#[derive(Debug, Default)]
pub struct Tokens {
    pub settings: Settings,
    /// Each account's salt, by phone number.
    salts: HashMap<String, Vec<u8>>,
    /// Every token minted, by its bytes.
    issued: HashMap<Vec<u8>, Issued>,
    /// The 1:1 messages the gate looked at, in order.
    pub gated: Vec<Gated>,
    /// The notifications that carried tokens: id, issuer, holder.
    notices: Vec<(String, String, String)>,
}

impl Tokens {
    /// `phone`'s account uses `salt` for its salted tokens.
    pub fn set_salt(&mut self, phone: &str, salt: Vec<u8>) {
        self.salts.insert(phone.to_string(), salt);
    }

    /// Whether `token` is one `issuer` issued to `holder`, still inside its
    /// window.
    pub fn trusts(&self, token: Option<&[u8]>, issuer: &str, holder: &str) -> bool {
        let now = now() as i64;
        token
            .and_then(|b| self.issued.get(b))
            .is_some_and(|i| i.issuer == issuer && i.holder == holder && self.in_window(i.t, now))
    }

    /// Whether `issuer` has issued `holder` a token still inside its window
    /// (what the server knows without being shown one).
    pub fn has_issued(&self, issuer: &str, holder: &str) -> bool {
        let now = now() as i64;
        self.issued
            .values()
            .any(|i| i.issuer == issuer && i.holder == holder && self.in_window(i.t, now))
    }

    /// Whether a token stamped `t` is still inside the window at `now`: its
    /// bucket is one of the last `buckets` (wacore `is_tc_token_expired_at`).
    fn in_window(&self, t: i64, now: i64) -> bool {
        let bucket = self.settings.bucket_seconds.max(1);
        let oldest = now / bucket - (self.settings.buckets.max(1) - 1);
        t >= oldest * bucket
    }
}

/// The A/B props the server serves (`<iq xmlns="abt">`): tokens on when
/// the network requires them, with its window.
pub fn props(settings: &Settings) -> Vec<Node> {
    let on = if settings.required { "true" } else { "false" };
    let props: [(u32, String); 8] = [
        (SENDING_ON_ALL_1_ON_1, on.into()),
        (SALTED_FALLBACK, on.into()),
        (BUCKET_SECONDS, settings.bucket_seconds.to_string()),
        (BUCKET_SECONDS_SENDER, settings.bucket_seconds.to_string()),
        (BUCKETS, settings.buckets.to_string()),
        (BUCKETS_SENDER, settings.buckets.to_string()),
        (ISSUE_TO_LID, "true".into()),
        (PROFILE_PIC_TOKEN, on.into()),
    ];
    props
        .into_iter()
        .map(|(code, value)| {
            element(
                "prop",
                &[("config_code", code.to_string()), ("config_value", value)],
                vec![],
            )
        })
        .collect()
}

/// The salted token `salt` makes for the account whose LID is `lid`.
pub fn salted(salt: &[u8], lid: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(salt).expect("HMAC takes any key length");
    mac.update(format!("{lid}@lid").as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// Whether the IQ issues tokens (`<iq xmlns="privacy" type="set"><tokens>`).
pub fn is_issue(iq: &Node) -> bool {
    child(iq, "tokens").is_some()
}

/// `issuer` issues a token to each account its `<tokens>` name: the server
/// mints one for each and hands it to that account's devices (now, or at
/// their next login). The answer echoes no token, as the real one does
/// (whatsapp-rust `record_tc_token_sender_timestamp`).
pub fn issue(reg: &mut Registry, issuer: &str, id: &str, iq: &Node) -> Node {
    let Some(issuer_lid) = reg.accounts.get(issuer).map(|a| a.lid.clone()) else {
        return iq_result(id, vec![]);
    };
    let asked = child(iq, "tokens").map(children).unwrap_or_default();
    for token in asked.iter().filter(|t| t.tag == "token") {
        if attr(token, "type").as_deref() != Some("trusted_contact") {
            continue;
        }
        let (Some(jid), Some(t)) = (
            attr(token, "jid"),
            attr(token, "t").and_then(|t| t.parse::<i64>().ok()),
        ) else {
            continue;
        };
        let (user, _, server) = split_jid(&jid);
        let Some(holder) = reg.phone_of(&user, &server) else {
            continue;
        };
        if holder == issuer {
            continue;
        }
        let bytes = rand10::random::<[u8; 24]>().to_vec();
        reg.tokens.issued.insert(
            bytes.clone(),
            Issued {
                issuer: issuer.to_string(),
                holder: holder.clone(),
                t,
            },
        );
        let mut minted = leaf_bytes("token", bytes);
        minted.attrs.insert("type", "trusted_contact".to_string());
        minted.attrs.insert("t", t.to_string());
        let notice = format!("token-{}", hex::encode(rand10::random::<[u8; 6]>()));
        reg.tokens
            .notices
            .push((notice.clone(), issuer.to_string(), holder.clone()));
        let notification = element(
            "notification",
            &[
                ("type", "privacy_token".into()),
                ("id", notice),
                ("from", format!("{issuer_lid}@lid")),
                ("sender_lid", format!("{issuer_lid}@lid")),
                ("t", now().to_string()),
            ],
            vec![element("tokens", &[], vec![minted])],
        );
        let devices: Vec<u16> = reg
            .accounts
            .get(&holder)
            .map(|a| a.devices.keys().copied().collect())
            .unwrap_or_default();
        for device in devices {
            reg.deliver(&holder, device, notification.clone());
        }
    }
    iq_result(id, vec![])
}

/// The gate on a 1:1 message from `from` to another account `to`: `Err`
/// (463) when it carries neither a token `to` issued to `from`, inside its
/// window, nor `from`'s salted token for `to`. A resend answering a retry
/// receipt passes. Every decision is kept in `gated`.
pub fn check(reg: &mut Registry, from: &str, to: &str, stanza: &Node) -> Result<(), &'static str> {
    if !reg.tokens.settings.required || from == to || is_resend(stanza) {
        return Ok(());
    }
    let tokens = &reg.tokens;
    let trusted = tokens.trusts(child_bytes(stanza, "tctoken"), to, from);
    let salted_ok = || {
        let lid = reg.accounts.get(to).map(|a| a.lid.as_str());
        match (child_bytes(stanza, "cstoken"), tokens.salts.get(from), lid) {
            (Some(given), Some(salt), Some(lid)) => given == salted(salt, lid).as_slice(),
            _ => false,
        }
    };
    let proof = if trusted {
        Proof::Trusted
    } else if salted_ok() {
        Proof::Salted
    } else {
        Proof::Refused
    };
    reg.tokens.gated.push(Gated {
        from: from.to_string(),
        to: to.to_string(),
        id: attr(stanza, "id").unwrap_or_default(),
        proof,
    });
    if proof == Proof::Refused {
        Err(NO_TOKEN)
    } else {
        Ok(())
    }
}

/// Whether the stanza resends a message to a device that asked by a retry
/// receipt: each of its `<enc>` carries the retry `count`.
fn is_resend(stanza: &Node) -> bool {
    let mut encs: Vec<&Node> = children(stanza).iter().filter(|n| n.tag == "enc").collect();
    if let Some(participants) = child(stanza, "participants") {
        for to in children(participants) {
            encs.extend(children(to).iter().filter(|n| n.tag == "enc"));
        }
    }
    !encs.is_empty() && encs.iter().all(|e| attr(e, "count").is_some())
}

impl crate::Watcher {
    /// Waits up to `deadline` until device `device` of `holder` holds a
    /// token `issuer` issued it: it acknowledged a notification that brought
    /// one, which whatsapp-rust does once it stored the token.
    pub async fn holds_token(
        &self,
        holder: &str,
        device: u16,
        issuer: &str,
        deadline: std::time::Duration,
    ) -> bool {
        let key = (holder.to_string(), device);
        self.0
            .wait_until(deadline, |reg| {
                reg.tokens
                    .notices
                    .iter()
                    .any(|(id, from, to)| from == issuer && to == holder && reg.has_acked(&key, id))
            })
            .await
    }
}

/// The tests' handle on the token gate.
impl crate::WireNetwork {
    /// Whether 1:1 messages need a privacy token (on by default). A client
    /// reads it at login, with the props.
    pub fn require_privacy_tokens(&self, on: bool) {
        self.inner.registry().tokens.settings.required = on;
    }

    /// The token window: buckets of `bucket_seconds`, a token valid in the
    /// last `buckets` of them (the real window is weeks long; a test
    /// shortens it to see tokens expire). A client reads it at login.
    pub fn set_token_window(&self, bucket_seconds: i64, buckets: i64) {
        let settings = &mut self.inner.registry().tokens.settings;
        settings.bucket_seconds = bucket_seconds.max(1);
        settings.buckets = buckets.max(1);
    }

    /// The 1:1 messages the gate looked at, and what let each through.
    pub fn gated(&self) -> Vec<Gated> {
        self.inner.registry().tokens.gated.clone()
    }

    /// `phone`'s account gets `salt`, and its `regular_high` app-state
    /// collection starts anew with `patch`, which carries the salt to the
    /// account's companions (its phone made it: see `TestDevice::start`);
    /// those linked already hear of it and sync.
    pub fn set_salt(&self, phone: &str, salt: Vec<u8>, patch: Vec<u8>) {
        let mut reg = self.inner.registry();
        reg.tokens.set_salt(phone, salt);
        reg.collections.insert(
            (phone.to_string(), "regular_high".into()),
            vec![crate::app_state::served_first(&patch)],
        );
        crate::app_state::tell_companions(&mut reg, phone, None, "regular_high");
    }

    /// `phone`'s account keeps its salt, but its app state no longer
    /// carries it: a companion linked from now on has it only from the
    /// phone's history sync.
    pub fn salt_by_history_only(&self, phone: &str) {
        self.inner
            .registry()
            .collections
            .remove(&(phone.to_string(), "regular_high".into()));
    }

    /// `phone`'s account has no salt: its companions get none, and a
    /// salted token from it passes nothing.
    pub fn forget_salt(&self, phone: &str) {
        let mut reg = self.inner.registry();
        reg.tokens.salts.remove(phone);
        reg.collections
            .remove(&(phone.to_string(), "regular_high".into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_salted_token_is_the_clients() {
        let salt = [7u8; 32];
        let ours = salted(&salt, "123456789");
        let theirs = whatsapp_rust::wacore::iq::tctoken::compute_cs_token(&salt, "123456789@lid");
        assert_eq!(ours, theirs);
    }

    #[test]
    fn the_server_knows_whom_an_account_issued_a_token_while_it_lasts() {
        let mut tokens = Tokens {
            settings: Settings {
                required: true,
                bucket_seconds: 10,
                buckets: 2,
            },
            ..Tokens::default()
        };
        let t = now() as i64;
        tokens.issued.insert(
            vec![1],
            Issued {
                issuer: "4915100000731".into(),
                holder: "4915100000732".into(),
                t,
            },
        );
        assert!(tokens.has_issued("4915100000731", "4915100000732"));
        assert!(
            !tokens.has_issued("4915100000732", "4915100000731"),
            "one way"
        );
        assert!(!tokens.has_issued("4915100000731", "4915100000733"));
        tokens.issued.get_mut(&vec![1]).expect("issued").t = t - 60;
        assert!(
            !tokens.has_issued("4915100000731", "4915100000732"),
            "expired"
        );
    }

    #[test]
    fn a_token_expires_when_its_bucket_leaves_the_window() {
        let tokens = Tokens {
            settings: Settings {
                required: true,
                bucket_seconds: 10,
                buckets: 2,
            },
            ..Tokens::default()
        };
        // At 105 the window is buckets 9 and 10: from 90 on.
        assert!(tokens.in_window(90, 105));
        assert!(tokens.in_window(104, 105));
        assert!(!tokens.in_window(89, 105));
        // The client's own rule agrees.
        let config = whatsapp_rust::wacore::iq::tctoken::TcTokenConfig {
            bucket_duration: 10,
            num_buckets: 2,
            sender_bucket_duration: 10,
            sender_num_buckets: 2,
        };
        for t in [85, 89, 90, 99, 104] {
            assert_eq!(
                tokens.in_window(t, 105),
                !whatsapp_rust::wacore::iq::tctoken::is_tc_token_expired_with_at(t, &config, 105),
                "t = {t}"
            );
        }
    }
}
