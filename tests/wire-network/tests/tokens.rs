//! Privacy tokens and error 463 (docs/test-network.md, "Privacy tokens"):
//! the test network gates 1:1 messages as the real server does, and a
//! session on `parley serve` writes first to a new contact with its
//! account's salt, answers with the contact's token, keeps it across a
//! restart, falls back to the salt when the token expires, and names a 463
//! it cannot avoid. The cluster's move of a session with its tokens is in
//! `cluster.rs`.
use parley_contract::wire::sandbox::SandboxPastMessage;
use parley_wire_network::tokens::{self, Proof};
use parley_wire_network::{Signal, TestDevice, WireNetwork};
use serde_json::json;

mod api;

use api::*;

/// The shop's phone writes `text` to the contact, whose phone then holds
/// the token the shop issued it: that token and its time.
async fn phone_writes(
    net: &WireNetwork,
    phone: &TestDevice,
    contact: &TestDevice,
    text: &str,
) -> (Vec<u8>, i64) {
    phone
        .send_text(&contact.jid(), text)
        .await
        .expect("the phone writes");
    assert!(net.watcher().holds_token(CONTACT, 0, PHONE, WAIT).await);
    let phone_lid = net.lid_of(PHONE).expect("a LID");
    contact.token_from(&phone_lid).await.expect("a token")
}

/// Whether the gate refused none of the shop's messages.
fn nothing_refused(net: &WireNetwork) -> bool {
    !net.gated()
        .iter()
        .any(|g| g.from == PHONE && g.proof == Proof::Refused)
}

/// What the gate decided for message `id`, once it looked at it.
fn proof_of(net: &WireNetwork, id: &str) -> Option<Proof> {
    net.gated()
        .into_iter()
        .rev()
        .find(|g| g.id == id)
        .map(|g| g.proof)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_contact_is_written_with_the_salt_and_answered_with_its_token_after_a_restart() {
    let mut s = linked_on_serve("tok1").await;
    let lid = |phone| s.net.lid_of(phone).expect("a LID");

    // A first message to a contact who never wrote: the account's salt,
    // which reached the session by app state, lets it through (sent just
    // after linking, it may have been refused once before the salt came:
    // then the session sent it again).
    let first = send_text(&s.p, "tok1", CONTACT, "Welcome to the shop").await;
    assert!(s.contact.wait_for(WAIT, |r| r.id == first).await.is_some());
    assert_eq!(proof_of(&s.net, &first), Some(Proof::Salted));

    // The session issued the contact a token: its answer carries it.
    let watcher = s.net.watcher();
    assert!(watcher.holds_token(CONTACT, 0, PHONE, WAIT).await);
    let answer = s
        .contact
        .send_text(&format!("{}@lid", lid(PHONE)), "Thanks!")
        .await
        .expect("the contact answers");
    event_for(&mut s.hooks, &s.p, &answer).await;
    assert_eq!(proof_of(&s.net, &answer), Some(Proof::Trusted));

    // And the contact issued the session one: the session's next message
    // carries the contact's token, also after a restart (the device store
    // keeps it).
    assert!(watcher.holds_token(PHONE, s.device, CONTACT, WAIT).await);
    let next = send_text(&s.p, "tok1", CONTACT, "Your order shipped").await;
    assert!(s.contact.wait_for(WAIT, |r| r.id == next).await.is_some());
    assert_eq!(proof_of(&s.net, &next), Some(Proof::Trusted));
    s.p.terminate().await;
    let p = serve(s.dir.path(), &s.net, &[]).await;
    connected(&p, "tok1").await;
    let after = send_text(&p, "tok1", CONTACT, "It arrives tomorrow").await;
    assert!(s.contact.wait_for(WAIT, |r| r.id == after).await.is_some());
    assert_eq!(proof_of(&s.net, &after), Some(Proof::Trusted));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_salt_a_first_message_is_refused_with_463_until_the_contact_writes() {
    let mut s = linked_on_serve_after("tok2", |net| net.forget_salt(PHONE)).await;

    let (status, refused) = post(
        &s.p,
        "/send-message",
        json!({"clientId": "tok2", "to": format!("+{CONTACT}"), "body": "Hello?"}),
    )
    .await;
    assert_eq!(status, 502, "{refused}");
    let why = refused["error"].as_str().unwrap_or_default();
    assert!(
        why.contains("error 463") && why.contains("privacy token"),
        "{refused}"
    );
    assert!(
        s.net
            .relayed_from(PHONE, s.device)
            .iter()
            .all(|r| r.to.0 != CONTACT),
        "the refused message reached no one"
    );
    assert!(
        s.net
            .gated()
            .iter()
            .any(|g| g.from == PHONE && g.proof == Proof::Refused)
    );

    // The contact writes (with its own salt) and issues the session a
    // token; the session's answer passes with it.
    let theirs = s
        .contact
        .send_text(&s.phone.jid(), "Hi, I saw your ad")
        .await
        .expect("the contact writes");
    event_for(&mut s.hooks, &s.p, &theirs).await;
    // (With the session's token, issued after its refused message too, or
    // with the contact's salt.)
    assert_ne!(proof_of(&s.net, &theirs), Some(Proof::Refused));
    assert!(
        s.net
            .watcher()
            .holds_token(PHONE, s.device, CONTACT, WAIT)
            .await
    );
    let answer = send_text(&s.p, "tok2", CONTACT, "Welcome!").await;
    assert!(s.contact.wait_for(WAIT, |r| r.id == answer).await.is_some());
    assert_eq!(proof_of(&s.net, &answer), Some(Proof::Trusted));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_message_refused_before_the_salt_arrived_goes_once_it_has() {
    let s = linked_on_serve_after("tok4", |net| net.forget_salt(PHONE)).await;
    let url = s.p.url("/send-message");
    let sending = tokio::spawn(async move {
        let res = reqwest::Client::new()
            .post(url)
            .bearer_auth(TOKEN)
            .json(&json!({"clientId": "tok4", "to": format!("+{CONTACT}"), "body": "Hello!"}))
            .send()
            .await
            .expect("request");
        let status = res.status().as_u16();
        (status, res.json::<serde_json::Value>().await.expect("json"))
    });
    let refused = || {
        s.net
            .gated()
            .iter()
            .filter(|g| g.from == PHONE && g.proof == Proof::Refused)
            .count()
    };
    eventually("the network refused the first attempt", || async {
        (refused() > 0).then_some(())
    })
    .await;
    // The phone shares the salt now: the session syncs it and sends again.
    s.phone.share_salt(&s.net);
    let (status, sent) = sending.await.expect("the send");
    assert_eq!(status, 200, "{sent}\n{}", s.p.output());
    let id = sent["messageId"].as_str().expect("an id");
    assert!(s.contact.wait_for(WAIT, |r| r.id == id).await.is_some());
    assert_eq!(proof_of(&s.net, id), Some(Proof::Salted));
    assert_eq!(refused(), 1, "one refusal, one message delivered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_left_for_the_salt() {
    // A window of one 2-second bucket: a token lives at most 2 s.
    let mut s = linked_on_serve_after("tok3", |net| net.set_token_window(2, 1)).await;
    let theirs = s
        .contact
        .send_text(&s.phone.jid(), "Is this still for sale?")
        .await
        .expect("the contact writes");
    event_for(&mut s.hooks, &s.p, &theirs).await;
    assert!(
        s.net
            .watcher()
            .holds_token(PHONE, s.device, CONTACT, WAIT)
            .await
    );
    // Once its bucket has passed, the session does not offer the token; its
    // salt lets the message through.
    let issued = chrono::Utc::now().timestamp();
    eventually("the token's bucket passed", || async {
        (chrono::Utc::now().timestamp() / 2 > issued / 2).then_some(())
    })
    .await;
    let answer = send_text(&s.p, "tok3", CONTACT, "Yes, it is").await;
    assert!(s.contact.wait_for(WAIT, |r| r.id == answer).await.is_some());
    assert_eq!(proof_of(&s.net, &answer), Some(Proof::Salted));
}

/// The gate itself, with a client that skips the library: a 1:1 message
/// without a token, with a token nobody issued, with an expired one, or
/// salted for another account is refused with 463 and reaches no one; one
/// with a current token, or salted for its recipient, is let through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_without_a_valid_token_is_refused_with_463() {
    let (net, phone, contact) = network_with_phones().await;
    let phone_lid = net.lid_of(PHONE).expect("a LID");
    let to = format!("{phone_lid}@lid");
    let salt = contact.salt().expect("the contact's phone has a salt");

    // The phone writes first, and issues the contact a token.
    let (token, t) = phone_writes(&net, &phone, &contact, "Hello").await;

    let leaf = |tag: &'static str, bytes: Vec<u8>| {
        whatsapp_rust::wacore_binary::builder::NodeBuilder::new(tag)
            .bytes(bytes)
            .build()
    };
    let kept = [
        ("a current token", vec![leaf("tctoken", token.clone())]),
        (
            "the salted token for this recipient",
            vec![leaf("cstoken", tokens::salted(&salt, &phone_lid))],
        ),
    ];
    for (what, extra) in kept {
        let id = contact.send_raw_message(&to, extra).await.expect("sent");
        eventually(what, || async { proof_of(&net, &id) }).await;
        assert_ne!(proof_of(&net, &id), Some(Proof::Refused), "{what}");
    }

    // A window of one 1-second bucket: the token above is soon expired.
    net.set_token_window(1, 1);
    eventually("the token's bucket passed", || async {
        (chrono::Utc::now().timestamp() > t).then_some(())
    })
    .await;
    let broken = [
        ("no token", vec![]),
        ("a token nobody issued", vec![leaf("tctoken", vec![7; 24])]),
        ("an expired token", vec![leaf("tctoken", token)]),
        (
            "a token salted for another account",
            vec![leaf("cstoken", tokens::salted(&salt, "1234567"))],
        ),
    ];
    for (what, extra) in broken {
        let id = contact.send_raw_message(&to, extra).await.expect("sent");
        let refusal = contact
            .wait_for_signal(
                WAIT,
                |s| matches!(s, Signal::Refused { id: refused, .. } if *refused == id),
            )
            .await;
        assert_eq!(
            refusal,
            Some(Signal::Refused {
                id: id.clone(),
                code: "463".into()
            }),
            "{what}"
        );
        assert!(
            net.relayed_from(CONTACT, 0).iter().all(|r| r.id != id),
            "{what}: the refused message reached no one"
        );
    }
}

/// Waits until the session took in the phone's history sync (the library
/// stores its tokens and salt before it hands the messages over).
async fn history_taken(p: &parley_tests::Parley) {
    eventually("the phone's history taken in", || async {
        (metric(p, "parley_history_sync_messages_total").await >= 1.0).then_some(())
    })
    .await;
}

/// A message of the phone's past with the customer.
fn past_with_contact() -> Vec<SandboxPastMessage> {
    vec![SandboxPastMessage {
        chat: format!("{CONTACT}@s.whatsapp.net"),
        body: "Do you deliver?".into(),
        kind: Some("text".into()),
        at: Some((chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339()),
        message_id: Some("3EB0BEEF000000000000A1".into()),
        ..SandboxPastMessage::default()
    }]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_salt_comes_with_the_phones_history_when_app_state_has_none() {
    let s = linked_on_serve_with("tok6", async |net, phone, _| {
        net.salt_by_history_only(PHONE);
        phone.set_history(past_with_contact());
    })
    .await;
    history_taken(&s.p).await;
    let first = send_text(&s.p, "tok6", CONTACT, "Yes, every day").await;
    assert!(s.contact.wait_for(WAIT, |r| r.id == first).await.is_some());
    assert_eq!(proof_of(&s.net, &first), Some(Proof::Salted));
    assert!(nothing_refused(&s.net), "nothing was refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_the_contact_gave_the_phone_comes_with_its_history() {
    let s = linked_on_serve_with("tok7", async |net, phone, contact| {
        // The customer wrote to the shop's phone before the session was
        // linked: the shop's account holds the customer's token, and no salt.
        contact
            .send_text(&phone.jid(), "Do you deliver?")
            .await
            .expect("the customer writes");
        let lid = net.lid_of(CONTACT).expect("a LID");
        eventually("the phone holds the customer's token", || async {
            phone.token_from(&lid).await.map(|_| ())
        })
        .await;
        net.forget_salt(PHONE);
        phone.set_history(past_with_contact());
    })
    .await;
    history_taken(&s.p).await;
    let answer = send_text(&s.p, "tok7", CONTACT, "Yes, every day").await;
    assert!(s.contact.wait_for(WAIT, |r| r.id == answer).await.is_some());
    assert_eq!(proof_of(&s.net, &answer), Some(Proof::Trusted));
}

/// What `serve`'s database in `dir` holds of the session `id`'s salt: the
/// salt, and the version of the app-state collection that carries it.
async fn stored_salt(dir: &std::path::Path, id: &str) -> (Option<Vec<u8>>, i64) {
    use parley_shared::db::ConnectionTrait;
    let db = serve_db(dir).await;
    let one = |sql: &str| {
        sea_orm::Statement::from_sql_and_values(db.conn().get_database_backend(), sql, [id.into()])
    };
    let salt = db
        .conn()
        .query_one_raw(one("SELECT nct_salt FROM wa_devices WHERE client_id = ?"))
        .await
        .expect("read the device")
        .and_then(|row| row.try_get::<Option<Vec<u8>>>("", "nct_salt").ok())
        .flatten();
    let version = db
        .conn()
        .query_one_raw(one(
            "SELECT version FROM wa_app_state_versions WHERE client_id = ? AND name = 'regular_high'",
        ))
        .await
        .expect("read the collection's version")
        .and_then(|row| row.try_get::<i64>("", "version").ok())
        .unwrap_or(0);
    (salt, version)
}

/// A device whose store kept the salt's app-state collection but not the
/// salt (its worker stopped after the library stored the collection's new
/// version and before it saved the device) syncs the collection anew from a
/// snapshot at login: the salt is back before any message, and a first
/// message to a contact who never wrote passes by it, refused nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_that_kept_the_salts_collection_but_lost_the_salt_gets_it_again_at_login() {
    let mut s = linked_on_serve("tok8").await;
    eventually("the salt and its collection stored", || async {
        let (salt, version) = stored_salt(s.dir.path(), "tok8").await;
        (salt.is_some() && version > 0).then_some(())
    })
    .await;
    s.p.terminate().await;
    {
        use parley_shared::db::ConnectionTrait;
        let db = serve_db(s.dir.path()).await;
        let forgot = db
            .conn()
            .execute_raw(sea_orm::Statement::from_sql_and_values(
                db.conn().get_database_backend(),
                "UPDATE wa_devices SET nct_salt = NULL WHERE client_id = ?",
                ["tok8".into()],
            ))
            .await
            .expect("forget the salt");
        assert_eq!(forgot.rows_affected(), 1);
    }
    let p = serve(s.dir.path(), &s.net, &[]).await;
    connected(&p, "tok8").await;
    eventually("the salt back in the device store", || async {
        stored_salt(s.dir.path(), "tok8").await.0.map(|_| ())
    })
    .await;
    let first = send_text(&p, "tok8", CONTACT, "Welcome back").await;
    assert!(s.contact.wait_for(WAIT, |r| r.id == first).await.is_some());
    assert_eq!(proof_of(&s.net, &first), Some(Proof::Salted));
    assert!(
        nothing_refused(&s.net),
        "nothing was refused:\n{}",
        p.output()
    );
}

/// An account that takes calls from its contacts only, with a caller that
/// skips the library: an offer without a `<privacy>` token, or with a token
/// nobody issued, is refused (463) and rings nowhere; one with the token the
/// account issued the caller (it wrote to it) rings. Another account's offer
/// needs none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_an_account_for_its_contacts_needs_its_token() {
    use whatsapp_rust::wacore_binary::builder::NodeBuilder;
    let (net, phone, contact) = network_with_phones().await;
    let contact_lid = net.lid_of(CONTACT).expect("a LID");
    let offer = |to: &str, n: u32, token: Option<Vec<u8>>| {
        let call_id = format!("CA11{n:028X}");
        let mut parts: Vec<_> = token
            .map(|t| NodeBuilder::new("privacy").bytes(t).build())
            .into_iter()
            .collect();
        parts.push(
            NodeBuilder::new("audio")
                .attr("enc", "opus")
                .attr("rate", "16000")
                .build(),
        );
        let action = NodeBuilder::new("offer")
            .attr("call-id", call_id.as_str())
            .attr("call-creator", format!("{contact_lid}@lid"))
            .children(parts)
            .build();
        let stanza = NodeBuilder::new("call")
            .attr("to", format!("{to}@s.whatsapp.net"))
            .attr("id", contact.client.generate_message_id())
            .children([action])
            .build();
        (call_id, stanza)
    };
    let rings = async |to: &str, n: u32, token: Option<Vec<u8>>| {
        let (call_id, stanza) = offer(to, n, token);
        contact
            .client
            .send_node(stanza)
            .await
            .expect("the offer goes");
        net.offer_rang(&call_id, WAIT).await
    };

    net.set_calls_from_contacts(PHONE, true);
    assert_eq!(rings(PHONE, 1, None).await, Some(false), "no token");
    assert_eq!(
        rings(PHONE, 2, Some(vec![7; 24])).await,
        Some(false),
        "a token nobody issued"
    );
    // The phone writes to the contact, and issues it a token.
    let (token, _) = phone_writes(&net, &phone, &contact, "Call me").await;
    assert_eq!(rings(PHONE, 3, Some(token)).await, Some(true), "its token");
    // An account that takes calls from everyone needs none.
    net.set_calls_from_contacts(PHONE, false);
    assert_eq!(
        rings(PHONE, 4, None).await,
        Some(true),
        "calls from everyone"
    );
}
