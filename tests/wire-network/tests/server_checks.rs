//! What the test network checks as the real server does, each shown by a
//! client that breaks the rule and is refused (and by one that keeps it and
//! is not): the companion's signature at pairing, the signed prekey's
//! signature at upload. (Group membership on send: `groups.rs`; the CDN's
//! checks: `cdn.rs`.)
use std::time::Duration;

use parley_wire_network::rogue::{RogueCompanion, Signing};
use parley_wire_network::{TestDevice, WireNetwork};
use whatsapp_rust::request::IqError;
use whatsapp_rust::wacore::libsignal::protocol::KeyPair;
use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::Node;

const PHONE: &str = "4915100000501";
const CONTACT: &str = "4915100000502";
const WAIT: Duration = Duration::from_secs(15);

fn attr(node: &Node, key: &str) -> Option<String> {
    node.attrs.get(key).map(|v| v.as_str().into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_companion_whose_signature_fails_is_not_linked() {
    let net = WireNetwork::start().await.expect("network");
    let phone = TestDevice::start(&net, PHONE, "Phone")
        .await
        .expect("phone");

    let mut forger = RogueCompanion::connect(&net).await.expect("connect");
    let linked = phone.scan(&net, &forger.qr()).expect("scan");
    let answer = forger
        .sign(Signing::Forged)
        .await
        .expect("the server answers");
    let answer = answer.expect("an answer before the socket ends");
    let error = answer.get_optional_child("error");
    assert_eq!(
        (
            answer.tag.as_ref(),
            attr(&answer, "type").as_deref(),
            error.and_then(|e| attr(e, "code")).as_deref()
        ),
        ("iq", Some("error"), Some("401")),
        "{answer:?}"
    );
    assert!(
        !net.devices_of(PHONE).contains(&linked.device),
        "the forger is no device of the account"
    );

    // The same client signing honestly is linked and sent to log in (515).
    let mut honest = RogueCompanion::connect(&net).await.expect("connect");
    let linked = phone.scan(&net, &honest.qr()).expect("scan");
    let answer = honest
        .sign(Signing::Honest)
        .await
        .expect("the server answers");
    let answer = answer.expect("an answer");
    assert_eq!(
        (answer.tag.as_ref(), attr(&answer, "code").as_deref()),
        ("stream:error", Some("515")),
        "{answer:?}"
    );
    assert!(net.devices_of(PHONE).contains(&linked.device));
}

/// A second pairing socket of one install (the same noise key) takes the
/// first one's place, as a client that connects again before the server
/// read the end of its last socket: the first socket is ended, and its end
/// leaves the second one in place, shown its QR code and linked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairing_socket_replaced_by_the_same_install_leaves_the_new_one_linkable() {
    let net = WireNetwork::start().await.expect("network");
    let phone = TestDevice::start(&net, PHONE, "Phone")
        .await
        .expect("phone");
    let mut first = RogueCompanion::connect(&net).await.expect("connect");
    let mut second = RogueCompanion::connect_as(&net, first.noise())
        .await
        .expect("connect again");
    assert!(first.ended(WAIT).await, "the replaced socket is ended");
    let linked = phone.scan(&net, &second.qr()).expect("scan");
    let answer = second
        .sign(Signing::Honest)
        .await
        .expect("the server answers")
        .expect("an answer before the socket ends");
    assert_eq!(
        (answer.tag.as_ref(), attr(&answer, "code").as_deref()),
        ("stream:error", Some("515")),
        "{answer:?}"
    );
    assert!(net.devices_of(PHONE).contains(&linked.device));
}

/// An `encrypt` upload of one prekey and a signed prekey, signed by
/// `identity` or, when `forged`, by another key.
fn key_upload(identity: &KeyPair, id: u32, forged: bool) -> Node {
    let key_id = |n: u32| n.to_be_bytes()[1..].to_vec();
    let prekey = KeyPair::generate(&mut rand10::rng());
    let signed = KeyPair::generate(&mut rand10::rng());
    let signer = if forged {
        KeyPair::generate(&mut rand10::rng())
    } else {
        identity.clone()
    };
    let signature = signer
        .private_key
        .calculate_signature(&signed.public_key.serialize(), &mut rand10::rng())
        .expect("sign");
    let leaf = |tag: &'static str, bytes: Vec<u8>| NodeBuilder::new(tag).bytes(bytes).build();
    let key = |tag: &'static str, kid: u32, pair: &KeyPair, sig: Option<Vec<u8>>| {
        let mut kids = vec![
            leaf("id", key_id(kid)),
            leaf("value", pair.public_key.public_key_bytes().to_vec()),
        ];
        kids.extend(sig.map(|s| leaf("signature", s)));
        NodeBuilder::new(tag).children(kids).build()
    };
    NodeBuilder::new("iq")
        .attr("xmlns", "encrypt")
        .attr("type", "set")
        .attr("to", "s.whatsapp.net")
        .attr("id", format!("keys-{id}-{forged}"))
        .children([
            leaf("registration", 77u32.to_be_bytes().to_vec()),
            leaf("type", vec![5]),
            leaf("identity", identity.public_key.public_key_bytes().to_vec()),
            NodeBuilder::new("list")
                .children([key("key", id, &prekey, None)])
                .build(),
            key("skey", id, &signed, Some(signature.to_vec())),
        ])
        .build()
}

/// How many one-time prekeys the server holds for the asking device.
async fn prekeys_held(device: &TestDevice) -> usize {
    let answer = device
        .ask("encrypt", "get", NodeBuilder::new("count").build())
        .await
        .expect("count");
    let count = answer.get().get_optional_child("count").expect("count");
    let value = count.get_attr("value").expect("value");
    value.as_str().parse().expect("a number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prekey_upload_whose_signature_fails_is_refused() {
    let net = WireNetwork::start().await.expect("network");
    let contact = TestDevice::start(&net, CONTACT, "Contact")
        .await
        .expect("contact");
    let held = prekeys_held(&contact).await;

    let refused = contact
        .client
        .send_iq_node(key_upload(contact.identity(), 9001, true), Some(WAIT))
        .await;
    match refused {
        Err(IqError::ServerError { code, .. }) => assert_eq!(code, 406),
        other => panic!("a forged signed prekey was taken: {other:?}"),
    }
    assert_eq!(prekeys_held(&contact).await, held, "nothing was kept");

    contact
        .client
        .send_iq_node(key_upload(contact.identity(), 9002, false), Some(WAIT))
        .await
        .expect("an honest upload is taken");
    assert_eq!(prekeys_held(&contact).await, held + 1);
}
