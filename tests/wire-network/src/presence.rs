//! Presence (`<presence>`). A device subscribes to another account's
//! presence (`type="subscribe" to=<jid>`, carrying the `<tctoken>` that
//! account issued the subscriber's: whatsapp-rust `features/presence.rs`),
//! for as long as its socket lasts; an account's device says it is online
//! or offline (`type="available"` or `"unavailable"`, no `to`), and the
//! server tells the subscribed sockets (`<presence from="<lid>@lid" type>`,
//! with `last` when offline: whatsapp-rust `handlers/presence.rs`).
//!
//! Our choices, where the sources do not say: while the network requires
//! privacy tokens, a subscription without a valid token from the account
//! it names is ignored (the server answers presence stanzas with nothing),
//! as is one to an unknown account; the server sends no presence at
//! subscription, only changes after it.
use whatsapp_rust::wacore_binary::node::Node;

use crate::Inner;
use crate::nodes::{attr, child_bytes, element, now};
use crate::registry::{SaidPresence, split_jid};
use crate::relay::Sender;

/// A `<presence>` from a device.
pub fn stanza(inner: &Inner, from: &Sender<'_>, node: &Node) {
    let kind = attr(node, "type").unwrap_or_else(|| "available".into());
    match (kind.as_str(), attr(node, "to")) {
        ("subscribe", Some(to)) => subscribe(inner, from, node, &to),
        ("available" | "unavailable", None) => publish(inner, from, kind == "available"),
        _ => {}
    }
}

/// `from`'s socket subscribes to the presence of the account `to` names.
fn subscribe(inner: &Inner, from: &Sender<'_>, node: &Node, to: &str) {
    let mut reg = inner.registry();
    let (user, _, server) = split_jid(to);
    let Some(target) = reg.phone_of(&user, &server) else {
        return;
    };
    let token = child_bytes(node, "tctoken");
    if reg.tokens.settings.required && !reg.tokens.trusts(token, &target, from.phone) {
        return;
    }
    let Some(conn) = reg
        .live
        .get(&(from.phone.to_string(), from.device))
        .map(|l| l.conn)
    else {
        return;
    };
    reg.watchers
        .entry(target)
        .or_default()
        .insert((from.phone.to_string(), from.device, conn));
}

/// `from`'s account comes online or goes offline (kept for the sandbox's
/// outbox): every socket still subscribed to it hears so.
fn publish(inner: &Inner, from: &Sender<'_>, available: bool) {
    let mut reg = inner.registry();
    reg.presences.push(SaidPresence {
        from: (from.phone.to_string(), from.device),
        available,
        at: chrono::Utc::now(),
    });
    let Some(lid) = reg.accounts.get(from.phone).map(|a| a.lid.clone()) else {
        return;
    };
    let mut attrs = vec![("from", format!("{lid}@lid"))];
    if available {
        attrs.push(("type", "available".into()));
    } else {
        attrs.push(("type", "unavailable".into()));
        attrs.push(("last", now().to_string()));
    }
    let update = element("presence", &attrs, vec![]);
    let watchers = reg.watchers.get(from.phone).cloned().unwrap_or_default();
    for (phone, device, conn) in watchers {
        let live = reg.live.get(&(phone, device));
        if let Some(live) = live.filter(|l| l.conn == conn) {
            let _ = live.tx.send(crate::registry::Control::Send(update.clone()));
        }
    }
}
