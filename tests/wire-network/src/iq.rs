//! The IQs a logged-in client asks the server, and their answers: keepalive,
//! passive/active, Signal keys (upload, count, fetch, digest), usync (devices,
//! LID, contact, status, picture), props, blocklist, privacy, app-state sync
//! (empty collections), profile pictures (see `profile`), groups (see
//! `groups`), and unlinking itself. Anything else is answered 501 and
//! logged, so a missing feature shows up as such.
use std::collections::VecDeque;

use whatsapp_rust::wacore_binary::node::Node;

use crate::Inner;
use crate::faults::Fault;
use crate::nodes::{
    attr, child, child_bytes, children, element, iq_error, iq_result, leaf_bytes, text,
};
use crate::registry::{Bundle, Control, device_jid, split_jid};

/// Who asks: the account's phone number and the device.
pub struct Asker<'a> {
    pub phone: &'a str,
    pub device: u16,
}

/// The answer to `iq`, if it wants one.
pub fn answer(inner: &Inner, who: &Asker<'_>, iq: &Node) -> Option<Node> {
    let id = attr(iq, "id")?;
    let kind = attr(iq, "type").unwrap_or_default();
    if kind == "result" || kind == "error" {
        return None;
    }
    let xmlns = attr(iq, "xmlns").unwrap_or_default();
    if let Some(fault) = fault_of(&xmlns, &kind, iq)
        && inner.faults.take(who.phone, who.device, fault)
    {
        if fault == Fault::Keepalive {
            return None;
        }
        return Some(iq_error(&id, 500, "internal-server-error"));
    }
    let reply = match (xmlns.as_str(), kind.as_str()) {
        ("w:p", _) | ("passive", _) => iq_result(&id, vec![]),
        ("encrypt", "set") => encrypt_set(inner, who, &id, iq),
        ("encrypt", "get") => encrypt_get(inner, who, &id, iq),
        ("usync", _) => usync(inner, who, &id, iq),
        ("abt", _) => {
            let props = crate::tokens::props(&inner.registry().tokens.settings);
            iq_result(
                &id,
                vec![element(
                    "props",
                    &[("protocol", "1".into()), ("hash", "wire".into())],
                    props,
                )],
            )
        }
        ("blocklist", "get") => iq_result(&id, vec![element("list", &[], vec![])]),
        ("privacy", "get") => iq_result(&id, vec![privacy()]),
        ("privacy", "set") if crate::tokens::is_issue(iq) => {
            let mut reg = inner.registry();
            crate::tokens::issue(&mut reg, who.phone, &id, iq)
        }
        ("privacy", "set") => iq_result(&id, vec![]),
        ("w:sync:app:state", _) => crate::app_state::answer(inner, who, &id, iq),
        ("md", "set") => remove_companion(inner, who, &id, iq),
        ("w:m", "set") => media_conn(inner, &id),
        ("w:g2", _) => crate::groups::answer(inner, who, &id, iq),
        ("w:profile:picture", "get") => crate::profile::picture(inner, who, &id, iq),
        _ => {
            tracing::debug!(xmlns, kind, "wire network: IQ not served");
            iq_error(&id, 501, "feature-not-implemented")
        }
    };
    Some(reply)
}

/// The fault that would refuse this IQ, if one can: a lookup of other
/// people, an app-state patch, a companion removing itself, or a keepalive
/// (left unanswered).
fn fault_of(xmlns: &str, kind: &str, iq: &Node) -> Option<Fault> {
    match (xmlns, kind) {
        ("w:p", _) => Some(Fault::Keepalive),
        _ if is_lookup(xmlns, kind, iq) => Some(Fault::Lookup),
        ("w:sync:app:state", _) if crate::app_state::carries_patch(iq) => Some(Fault::Receipt),
        ("md", "set") => Some(Fault::Logout),
        _ => None,
    }
}

/// A lookup of other people (the `lookup` fault refuses these): a profile
/// picture, or a user query for more than devices and LIDs (a number
/// check, user info), never the device lists a send asks for.
fn is_lookup(xmlns: &str, kind: &str, iq: &Node) -> bool {
    match (xmlns, kind) {
        ("w:profile:picture", "get") => true,
        ("usync", _) => child(iq, "usync")
            .and_then(|u| child(u, "query"))
            .map(children)
            .unwrap_or_default()
            .iter()
            .any(|q| {
                matches!(
                    q.tag.as_ref(),
                    "contact" | "status" | "business" | "picture" | "username"
                )
            }),
        _ => false,
    }
}

fn privacy() -> Node {
    let categories = [
        "last",
        "online",
        "profile",
        "status",
        "readreceipts",
        "groupadd",
    ]
    .iter()
    .map(|name| {
        element(
            "category",
            &[("name", (*name).into()), ("value", "all".into())],
            vec![],
        )
    })
    .collect();
    element("privacy", &[], categories)
}

/// Prekey upload (and signed-prekey rotation).
fn encrypt_set(inner: &Inner, who: &Asker<'_>, id: &str, iq: &Node) -> Node {
    let Some(registration) = child_bytes(iq, "registration") else {
        return iq_result(id, vec![]);
    };
    let prekeys: VecDeque<(Vec<u8>, Vec<u8>)> = child(iq, "list")
        .map(children)
        .unwrap_or_default()
        .iter()
        .filter_map(|k| {
            Some((
                child_bytes(k, "id")?.to_vec(),
                child_bytes(k, "value")?.to_vec(),
            ))
        })
        .collect();
    let Some(skey) = child(iq, "skey") else {
        return iq_error(id, 400, "bad-request");
    };
    let signed = (
        child_bytes(skey, "id").unwrap_or_default().to_vec(),
        child_bytes(skey, "value").unwrap_or_default().to_vec(),
        child_bytes(skey, "signature").unwrap_or_default().to_vec(),
    );
    let identity = child_bytes(iq, "identity").unwrap_or_default().to_vec();
    if !signed_by(&identity, &signed.1, &signed.2) {
        return iq_error(id, 406, "not-acceptable");
    }
    let mut reg = inner.registry();
    let Some(device) = reg.device(who.phone, who.device) else {
        return iq_error(id, 401, "not-authorized");
    };
    let bundle = device.bundle.get_or_insert_with(Bundle::default);
    bundle.registration = registration.to_vec();
    bundle.identity = identity;
    bundle.prekeys.extend(prekeys);
    bundle.signed = signed;
    // A reinstalled phone's new keys are here: those who wrote with the
    // number hear of its new identity.
    if who.device == 0 && reg.reinstalled.remove(who.phone) {
        crate::identities::announce(&mut reg, who.phone);
    }
    drop(reg);
    inner.changed.notify_waiters();
    iq_result(id, vec![])
}

/// Whether `signature` is `identity`'s signature of the signed prekey
/// `value`, as a client that fetches the bundle checks it (libsignal's
/// `process_prekey_bundle`: over the key's serialized form, type byte first).
/// The server refuses an upload that fails it, so nobody is handed a bundle
/// that no session can be built from.
fn signed_by(identity: &[u8], value: &[u8], signature: &[u8]) -> bool {
    use whatsapp_rust::wacore::libsignal::protocol::PublicKey;
    let (Ok(identity), Ok(key)) = (
        PublicKey::from_djb_public_key_bytes(identity),
        PublicKey::from_djb_public_key_bytes(value),
    ) else {
        return false;
    };
    identity.verify_signature(&key.serialize(), signature)
}

fn encrypt_get(inner: &Inner, who: &Asker<'_>, id: &str, iq: &Node) -> Node {
    if let Some(key) = child(iq, "key") {
        return fetch_keys(inner, id, key);
    }
    let mut reg = inner.registry();
    let bundle = reg
        .device(who.phone, who.device)
        .and_then(|d| d.bundle.clone());
    if child(iq, "count").is_some() {
        let count = bundle.map(|b| b.prekeys.len()).unwrap_or(0);
        return iq_result(
            id,
            vec![element("count", &[("value", count.to_string())], vec![])],
        );
    }
    if child(iq, "digest").is_some() {
        return match bundle {
            Some(bundle) => digest(id, &bundle),
            None => iq_error(id, 404, "item-not-found"),
        };
    }
    iq_error(id, 501, "feature-not-implemented")
}

/// The key-bundle digest a client checks its uploaded keys against: what
/// the server holds, and the SHA-1 over identity, signed prekey, signature
/// and the remaining one-time prekeys.
fn digest(id: &str, bundle: &Bundle) -> Node {
    use whatsapp_rust::wacore::prekeys::compute_key_bundle_digest;
    let (sid, value, signature) = &bundle.signed;
    let prekeys: Vec<&[u8]> = bundle.prekeys.iter().map(|(_, v)| v.as_slice()).collect();
    let hash = compute_key_bundle_digest(&bundle.identity, value, signature, &prekeys);
    let ids = bundle
        .prekeys
        .iter()
        .map(|(pid, _)| leaf_bytes("id", pid.clone()))
        .collect();
    let digest = element(
        "digest",
        &[],
        vec![
            leaf_bytes("registration", bundle.registration.clone()),
            leaf_bytes("type", vec![5u8]),
            leaf_bytes("identity", bundle.identity.clone()),
            element(
                "skey",
                &[],
                vec![
                    leaf_bytes("id", sid.clone()),
                    leaf_bytes("value", value.clone()),
                    leaf_bytes("signature", signature.clone()),
                ],
            ),
            element("list", &[], ids),
            leaf_bytes("hash", hash),
        ],
    );
    iq_result(id, vec![digest])
}

/// Each requested device's bundle, taking one one-time prekey each.
fn fetch_keys(inner: &Inner, id: &str, key: &Node) -> Node {
    let mut reg = inner.registry();
    let mut users = Vec::new();
    for user in children(key).iter().filter(|n| n.tag == "user") {
        let Some(jid) = attr(user, "jid") else {
            continue;
        };
        let (user_part, device, server) = split_jid(&jid);
        let phone = reg.phone_of(&user_part, &server);
        let found = phone.as_deref().and_then(|p| reg.device(p, device));
        let Some(dev) = found else {
            users.push(user_error(jid, 406, "not-acceptable"));
            continue;
        };
        let Some(bundle) = dev.bundle.as_mut() else {
            users.push(user_error(jid, 404, "item-not-found"));
            continue;
        };
        let mut kids = vec![
            leaf_bytes("registration", bundle.registration.clone()),
            leaf_bytes("type", vec![5u8]),
            leaf_bytes("identity", bundle.identity.clone()),
        ];
        if let Some((pid, value)) = bundle.prekeys.pop_front() {
            kids.push(element(
                "key",
                &[],
                vec![leaf_bytes("id", pid), leaf_bytes("value", value)],
            ));
        }
        let (sid, value, signature) = bundle.signed.clone();
        kids.push(element(
            "skey",
            &[],
            vec![
                leaf_bytes("id", sid),
                leaf_bytes("value", value),
                leaf_bytes("signature", signature),
            ],
        ));
        if let Some(identity) = &dev.identity {
            kids.push(leaf_bytes("device-identity", identity.clone()));
        }
        users.push(element("user", &[("jid", jid)], kids));
    }
    iq_result(id, vec![element("list", &[], users)])
}

/// A `<user>` whose keys cannot be served: `<error code text/>` in their place.
fn user_error(jid: String, code: u16, text: &str) -> Node {
    let error = element(
        "error",
        &[("code", code.to_string()), ("text", text.into())],
        vec![],
    );
    element("user", &[("jid", jid)], vec![error])
}

/// usync: for each listed user (by JID, or by phone number in a number
/// check), the parts the query asks (devices, lid, contact, status, picture,
/// username).
fn usync(inner: &Inner, who: &Asker<'_>, id: &str, iq: &Node) -> Node {
    let Some(request) = child(iq, "usync") else {
        return iq_error(id, 400, "bad-request");
    };
    let asked: Vec<String> = child(request, "query")
        .map(children)
        .unwrap_or_default()
        .iter()
        .map(|q| q.tag.to_string())
        .collect();
    let mut reg = inner.registry();
    let mut users = Vec::new();
    for user in child(request, "list").map(children).unwrap_or_default() {
        // A number check names the user by phone: `<contact>+4915...</contact>`.
        let by_phone = child(user, "contact")
            .and_then(text)
            .map(|phone| format!("{}@s.whatsapp.net", phone.trim_start_matches('+')));
        let Some(jid) = attr(user, "jid").or(by_phone) else {
            continue;
        };
        let (user_part, _, server) = split_jid(&jid);
        let phone = reg.phone_of(&user_part, &server);
        // A device list the asker holds already: the user is left out.
        if asked.iter().any(|part| part == "devices")
            && phone
                .as_deref()
                .and_then(|p| reg.accounts.get(p))
                .is_some_and(|account| crate::device_lists::held(user, account))
        {
            *reg.device_lists_unchanged
                .entry((who.phone.to_string(), who.device))
                .or_default() += 1;
            continue;
        }
        if asked.iter().any(|part| part == "devices") && phone.as_deref() == Some(who.phone) {
            *reg.own_device_lists_sent
                .entry((who.phone.to_string(), who.device))
                .or_default() += 1;
        }
        // A picture for the owner's contacts shows to those it wrote to.
        let trusted = phone
            .as_deref()
            .is_some_and(|owner| reg.tokens.has_issued(owner, who.phone));
        let account = phone.as_deref().and_then(|p| reg.accounts.get_mut(p));
        let mut kids = Vec::new();
        for part in &asked {
            match (part.as_str(), &account) {
                ("devices", Some(account)) => kids.push(crate::device_lists::devices(account)),
                ("lid", Some(account)) => kids.push(element(
                    "lid",
                    &[("val", format!("{}@lid", account.lid))],
                    vec![],
                )),
                ("contact", Some(_)) => {
                    kids.push(element("contact", &[("type", "in".into())], vec![]))
                }
                ("contact", None) => {
                    kids.push(element("contact", &[("type", "out".into())], vec![]))
                }
                ("status", Some(account)) => kids.push(crate::profile::status(account)),
                ("picture", Some(account)) => {
                    kids.push(crate::profile::picture_id(account, trusted))
                }
                ("username", Some(account)) => kids.push(crate::profile::username(account)),
                _ => {}
            }
        }
        let mut attrs = vec![("jid", jid.clone())];
        if let Some(phone) = &phone
            && server == "lid"
        {
            attrs.push(("pn_jid", format!("{phone}@s.whatsapp.net")));
        }
        users.push(element("user", &attrs, kids));
    }
    let mut attrs = vec![];
    for key in ["sid", "mode", "context", "index", "last"] {
        if let Some(v) = attr(request, key) {
            attrs.push((key, v));
        }
    }
    let list = element("list", &[], users);
    iq_result(id, vec![element("usync", &attrs, vec![list])])
}

/// `remove-companion-device`: a companion logs itself out (or the phone removes one).
fn remove_companion(inner: &Inner, who: &Asker<'_>, id: &str, iq: &Node) -> Node {
    let Some(remove) = child(iq, "remove-companion-device") else {
        return iq_error(id, 501, "feature-not-implemented");
    };
    let jid =
        attr(remove, "jid").unwrap_or_else(|| device_jid(who.phone, who.device, "s.whatsapp.net"));
    let (user, device, server) = split_jid(&jid);
    let mut reg = inner.registry();
    let phone = reg.phone_of(&user, &server);
    if phone.as_deref() != Some(who.phone) || device == 0 {
        return iq_error(id, 403, "forbidden");
    }
    crate::device_lists::remove(&mut reg, who.phone, device);
    if device != who.device
        && let Some(live) = reg.live.get(&(who.phone.to_string(), device))
    {
        let _ = live.tx.send(Control::End(crate::nodes::stream_error(
            Some(401),
            Some("device_removed"),
        )));
    }
    drop(reg);
    inner.changed.notify_waiters();
    iq_result(id, vec![])
}

/// `media_conn`: the CDN stand-in as the one media host, its auth, a long ttl.
fn media_conn(inner: &Inner, id: &str) -> Node {
    let host = element("host", &[("hostname", inner.cdn_host.clone())], vec![]);
    let conn = element(
        "media_conn",
        &[
            ("auth", inner.shelf.issue_auth()),
            ("ttl", "86400".into()),
            ("auth_ttl", "86400".into()),
            ("max_buckets", "12".into()),
        ],
        vec![host],
    );
    iq_result(id, vec![conn])
}

#[cfg(test)]
mod tests {
    use whatsapp_rust::wacore::libsignal::protocol::KeyPair;

    use crate::WireNetwork;
    use crate::nodes::{child, children, element};

    const PHONE: &str = "4915100000001";

    /// A benchmark's phone without a client: its keys are served as an
    /// uploaded bundle is, its signed prekey signed by its identity.
    #[tokio::test]
    async fn a_phone_given_keys_serves_a_bundle_its_identity_signed() {
        let net = WireNetwork::start().await.expect("network");
        net.provision(PHONE, [7; 32], "Phone");
        let identity = KeyPair::generate(&mut rand10::rng());
        assert!(net.give_phone_keys("4915100000009", &identity).is_err());
        net.give_phone_keys(PHONE, &identity).expect("keys");

        let asked = element(
            "key",
            &[],
            vec![element(
                "user",
                &[("jid", format!("{PHONE}@s.whatsapp.net"))],
                vec![],
            )],
        );
        let answer = super::fetch_keys(&net.inner, "1", &asked);
        let list = child(&answer, "list").expect("list");
        let user = &children(list)[0];
        assert!(child(user, "error").is_none(), "{user:?}");
        let bytes = |n: &whatsapp_rust::wacore_binary::node::Node, tag: &str| {
            crate::nodes::child_bytes(n, tag).expect(tag).to_vec()
        };
        let skey = child(user, "skey").expect("signed prekey");
        assert_eq!(
            bytes(user, "identity"),
            identity.public_key.public_key_bytes()
        );
        assert!(super::signed_by(
            &bytes(user, "identity"),
            &bytes(skey, "value"),
            &bytes(skey, "signature")
        ));
        assert_eq!(bytes(user, "registration").len(), 4);
    }
}
