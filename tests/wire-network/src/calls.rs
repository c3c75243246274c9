//! Call signalling. A device's `<call to id>` holds one action (an
//! `<offer>`, a `<reject>`, a `<terminate>`...) naming the call
//! (`call-id`) and who started it (`call-creator`); the server passes it to
//! the connected devices of the account `to` names (the one device, when
//! `to` names one), from the sender's device with the time and the
//! sender's name (a caller known by its LID, an offer naming its phone
//! number as `caller_pn`), and acks it with `<ack class="call" type=ACTION>`. It
//! keeps what each device signalled (`Registry::calls`), which the outbox
//! lists. Calls carry no media here: the server checks that an action
//! names its call, not the offer's media parts (codecs, relays, keys),
//! which no test exercises; an offer for a device that is not connected is
//! not queued for its next login (the real server replays it as missed).
//!
//! An account can take calls from its contacts only: while the network
//! requires privacy tokens, an offer to it passes with a `<privacy>` (the
//! offer's first child) holding a token it issued the caller, inside the
//! window, and is otherwise answered `<ack class="call" type="offer"
//! error="463">` and rings nowhere (whatsapp-rust `voip/facade.rs`:
//! "a privacy-restricted callee rejects the offer unless it carries our
//! stored token", and the 463 nacks its post-offer token issue prevents).
use whatsapp_rust::wacore_binary::node::Node;

use crate::Inner;
use crate::nodes::{attr, child_bytes, children, element, now};
use crate::registry::{Registry, device_jid, split_jid};
use crate::relay::Sender;

/// A call action one device signalled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSignal {
    pub from: (String, u16),
    /// The account it went to.
    pub to: String,
    /// The action's tag: `offer`, `reject`, `terminate`...
    pub action: String,
    pub call_id: String,
    pub at: chrono::DateTime<chrono::Utc>,
}

/// Routes a device's `<call>`; the server's ack (an error ack for a
/// stanza without an action that names its call).
pub fn stanza(inner: &Inner, from: &Sender<'_>, stanza: &Node) -> Option<Node> {
    let id = attr(stanza, "id")?;
    let action = children(stanza)
        .iter()
        .find(|a| attr(a, "call-id").is_some() && attr(a, "call-creator").is_some());
    let (Some(to), Some(action)) = (attr(stanza, "to"), action) else {
        let attrs = [
            ("class", "call".into()),
            ("id", id),
            ("error", "400".into()),
        ];
        return Some(element("ack", &attrs, vec![]));
    };
    let tag = action.tag.to_string();
    let (user, device, server) = split_jid(&to);
    let mut reg = inner.registry();
    // Others know the caller by its hidden LID; an offer names its phone
    // number beside it (`caller_pn`).
    let lid = reg
        .accounts
        .get(from.phone)
        .map(|a| a.lid.clone())
        .filter(|l| !l.is_empty());
    let mut action = action.clone();
    let sender = match &lid {
        Some(lid) => {
            if tag == "offer" {
                action
                    .attrs
                    .insert("caller_pn", format!("{}@s.whatsapp.net", from.phone));
            }
            device_jid(lid, from.device, "lid")
        }
        None => device_jid(from.phone, from.device, "s.whatsapp.net"),
    };
    let mut attrs = vec![
        ("from", sender),
        ("id", id.clone()),
        ("t", now().to_string()),
    ];
    if !from.push_name.is_empty() {
        attrs.push(("notify", from.push_name.to_string()));
    }
    let call_id = attr(&action, "call-id").unwrap_or_default();
    if tag == "offer"
        && let Some(callee) = reg.phone_of(&user, &server)
        && !rings(&reg, from.phone, &callee, &action)
    {
        reg.calls_refused.push(call_id);
        inner.changed.notify_waiters();
        return Some(ack(id, to, tag, Some(crate::tokens::NO_TOKEN)));
    }
    let node = element("call", &attrs, vec![action]);
    if let Some(phone) = reg.phone_of(&user, &server) {
        let named = to.contains(':').then_some(device);
        for ((p, d), live) in reg.live.iter() {
            let sender = *p == from.phone && *d == from.device;
            if *p == phone && named.is_none_or(|n| n == *d) && !sender {
                let _ = live.tx.send(crate::registry::Control::Send(node.clone()));
            }
        }
        reg.calls.push(CallSignal {
            from: (from.phone.to_string(), from.device),
            to: phone,
            action: tag.clone(),
            call_id,
            at: chrono::Utc::now(),
        });
        inner.changed.notify_waiters();
    }
    Some(ack(id, to, tag, None))
}

/// The server's `<ack class="call">` of stanza `id` to `to`, action `tag`,
/// with `error` when it refused it.
fn ack(id: String, to: String, tag: String, error: Option<&str>) -> Node {
    let mut attrs = vec![
        ("class", "call".into()),
        ("id", id),
        ("from", to),
        ("type", tag),
    ];
    attrs.extend(error.map(|e| ("error", e.to_string())));
    element("ack", &attrs, vec![])
}

/// Whether `caller`'s offer `offer` rings `callee`: it takes calls from
/// everyone, or it is a group's call, or tokens are not required, or the
/// offer's `<privacy>` holds a token `callee` issued `caller`, inside the
/// window.
fn rings(reg: &Registry, caller: &str, callee: &str, offer: &Node) -> bool {
    let restricted = reg
        .accounts
        .get(callee)
        .is_some_and(|a| a.calls_from_contacts);
    !restricted
        || attr(offer, "group-jid").is_some()
        || !reg.tokens.settings.required
        || caller == callee
        || reg
            .tokens
            .trusts(child_bytes(offer, "privacy"), callee, caller)
}

impl crate::WireNetwork {
    /// Waits up to `deadline` for the server's word on the offer of call
    /// `call_id`: `Some(true)` passed on, `Some(false)` refused (463),
    /// `None` not seen.
    pub async fn offer_rang(&self, call_id: &str, deadline: std::time::Duration) -> Option<bool> {
        let seen = |reg: &Registry| {
            if reg.calls_refused.iter().any(|c| c == call_id) {
                Some(false)
            } else {
                reg.calls
                    .iter()
                    .any(|c| c.call_id == call_id && c.action == "offer")
                    .then_some(true)
            }
        };
        self.inner
            .wait_until(deadline, |reg| seen(reg).is_some())
            .await;
        seen(&self.inner.registry())
    }
}
