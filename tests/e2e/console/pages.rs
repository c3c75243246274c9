//! The console in a real browser (Debian's Chromium, headless): an operator
//! signs in, creates a session, scans its QR from the screen with the sandbox
//! phone, watches it turn connected without a reload, sends a text, sees its
//! event, and disconnects it; a session's secret shows that session only; a
//! wrong token shows nothing; markup from contacts is shown as text. Each
//! page is photographed at desktop and phone widths (into
//! `PARLEY_CONSOLE_SCREENSHOTS` when set: `docs/console/`).
use std::time::Duration;

use parley_network::contract::ForwardProxy;
use parley_tests::browser::{self, Browser, Locator, PAGE_WAIT};
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

const SECRET: &str = "console-browser-secret-0123456789";
const HOOK_TOKEN: &str = "console-browser-hook-token-0123456789";
const CONTACT: &str = "4917600000451";
const DESKTOP: (u32, u32) = (1280, 900);
const PHONE: (u32, u32) = (390, 844);

/// `parley serve` on the sandbox with http webhooks to loopback allowed.
async fn gateway(dir: &std::path::Path) -> Parley {
    gateway_with(dir, &[]).await
}

async fn gateway_with(dir: &std::path::Path, more: &[(&str, &str)]) -> Parley {
    let mut vars = vec![
        ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
        ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
    ];
    vars.extend_from_slice(more);
    serve_with(dir, &vars).await
}

/// Runs `script` in the page and returns its value.
async fn js(b: &Browser, script: &str) -> Value {
    b.client.execute(script, vec![]).await.expect(script)
}

/// Waits until `css` is shown (present and not hidden).
async fn shown(b: &Browser, css: &str) {
    let script = format!(
        "var e = document.querySelector({}); \
         return !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';",
        serde_json::to_string(css).unwrap()
    );
    let deadline = tokio::time::Instant::now() + PAGE_WAIT;
    while js(b, &script).await != Value::Bool(true) {
        if tokio::time::Instant::now() >= deadline {
            panic!("{css} never shown; the page: {}", b.text().await);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn click(b: &Browser, css: &str) {
    b.wait_css(css).await.click().await.expect(css);
}

async fn type_into(b: &Browser, css: &str, text: &str) {
    let el = b.wait_css(css).await;
    el.clear().await.expect(css);
    el.send_keys(text).await.expect(css);
}

/// Opens the console and signs in; `session`: with that session's secret.
async fn sign_in(b: &Browser, p: &Parley, token: &str, session: Option<&str>) {
    b.client.goto(&p.url("/console/")).await.unwrap();
    shown(b, "#signin-form").await;
    type_into(b, "#signin-token", token).await;
    if let Some(id) = session {
        click(b, "#signin-as-session").await;
        type_into(b, "#signin-client", id).await;
    }
    click(b, "#signin-submit").await;
}

/// The QR image's data URL once the page shows one (within [`PAGE_WAIT`]).
async fn qr_on_screen(b: &Browser) -> String {
    let qr = b.wait_css("#qr-image").await;
    let deadline = tokio::time::Instant::now() + PAGE_WAIT;
    loop {
        let src = qr.attr("src").await.unwrap().unwrap_or_default();
        if src.starts_with("data:image/png") {
            return src;
        }
        assert!(tokio::time::Instant::now() < deadline, "no QR code shown");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The page's text, as a user reads it.
async fn page_text(b: &Browser) -> String {
    js(b, "return document.body.innerText")
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Saves a screenshot as `<name>.png` where `PARLEY_CONSOLE_SCREENSHOTS`
/// says (the documentation's pictures); always checks it is a PNG.
async fn photograph(b: &Browser, name: &str) {
    js(b, "window.scrollTo(0, 0); return 1").await;
    let png = b.client.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "{name}: not a PNG");
    if let Some(dir) = std::env::var_os("PARLEY_CONSOLE_SCREENSHOTS") {
        std::fs::write(std::path::Path::new(&dir).join(format!("{name}.png")), png)
            .expect("write screenshot");
    }
}

/// Neither the page nor anything in it is wider than the window.
async fn fits(b: &Browser, what: &str) {
    let wide = js(
        b,
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
    )
    .await;
    assert!(
        wide.as_i64().unwrap_or(1) <= 0,
        "{what} scrolls sideways by {wide}px"
    );
}

#[tokio::test]
async fn an_operator_pairs_a_session_sends_sees_the_event_and_disconnects() {
    if !browser::available("console pages") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = gateway(dir.path()).await;
    let mut rx = Receiver::start().await;
    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;

    sign_in(&b, &p, TOKEN, None).await;
    shown(&b, "#page-sessions").await;
    click(&b, "#new-session").await;
    type_into(&b, "#new-client-id", "browser1").await;
    type_into(&b, "#new-webhook-url", &rx.url).await;
    type_into(&b, "#new-webhook-token", HOOK_TOKEN).await;
    click(&b, "#new-submit").await;

    // The QR on screen, read as a phone's camera reads it.
    let src = qr_on_screen(&b).await;
    photograph(&b, "pairing-desktop").await;
    let code = parley_tests::qr::decode_data_url(&src);
    js(&b, "window.parleyTestMarker = 'same page'; return 1").await;
    let (status, linked) = post(
        &p,
        "/sandbox/link",
        json!({"clientId": "browser1", "phone": "4915100000450", "qr": code, "name": "Phone"}),
    )
    .await;
    assert_eq!(status, 200, "{linked}");
    b.wait_text("#session-status", |t| t == "connected").await;
    assert_eq!(
        js(&b, "return window.parleyTestMarker").await,
        "same page",
        "connected without a reload"
    );
    shown(&b, "#connected-note").await;
    b.client.goto(&p.url("/console/#/sessions")).await.unwrap();
    b.wait_text("#sessions-table tr[data-client-id='browser1']", |t| {
        t.contains("connected")
    })
    .await;
    photograph(&b, "sessions-desktop").await;
    b.client
        .goto(&p.url("/console/#/session/browser1"))
        .await
        .unwrap();
    b.wait_text("#session-status", |t| t == "connected").await;

    // A test text, and its event in the log with its delivery state.
    let (status, _) = post(
        &p,
        "/sandbox/contacts",
        json!({"phone": CONTACT, "name": "Carla"}),
    )
    .await;
    assert_eq!(status, 200);
    type_into(&b, "#send-to", CONTACT).await;
    type_into(&b, "#send-body", "hello from the console").await;
    click(&b, "#send-submit").await;
    let sent = b.wait_text("#send-result", |t| t.starts_with("Sent")).await;
    b.wait_text("#events-table tbody", |t| {
        t.contains("hello from the console") && t.contains("delivered")
    })
    .await;
    let event = loop {
        let req = rx.next(Duration::from_secs(10)).await;
        if req.json()["body"] == "hello from the console" {
            break req.json();
        }
    };
    assert!(
        sent.contains(event["messageId"].as_str().unwrap()),
        "{sent}"
    );
    b.wait_text("#history-table tbody", |t| t.contains("connected"))
        .await;
    photograph(&b, "session-desktop").await;

    b.client.goto(&p.url("/console/#/cluster")).await.unwrap();
    shown(&b, "#page-cluster").await;
    b.wait_text("#cluster-workers", |t| t.contains("1")).await;
    b.wait_css("#cluster-charts svg").await;
    photograph(&b, "cluster-desktop").await;

    // Disconnect, confirmed in the dialog: gone from the list.
    b.client
        .goto(&p.url("/console/#/session/browser1"))
        .await
        .unwrap();
    b.wait_text("#session-status", |t| t == "connected").await;
    click(&b, "#disconnect").await;
    shown(&b, "#confirm-dialog").await;
    photograph(&b, "disconnect-dialog-desktop").await;
    click(&b, "#confirm-yes").await;
    shown(&b, "#page-sessions").await;
    let deadline = tokio::time::Instant::now() + PAGE_WAIT;
    while b
        .client
        .find(Locator::Css(
            "#sessions-table tr[data-client-id='browser1']",
        ))
        .await
        .is_ok()
    {
        assert!(tokio::time::Instant::now() < deadline, "still listed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(get(&p, "/qr?clientId=browser1").await.0, 404, "deleted");

    // Signing out forgets the token.
    click(&b, "#signout").await;
    shown(&b, "#signin-form").await;
    assert_eq!(js(&b, "return sessionStorage.length").await, 0);
    photograph(&b, "signin-desktop").await;
    b.stop().await;
}

#[tokio::test]
async fn a_session_secret_shows_that_session_only_and_a_wrong_token_nothing() {
    if !browser::available("console pages") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = gateway(dir.path()).await;
    linked(&p, "mine", "4915100000460", json!({})).await;
    linked(&p, "theirs", "4915100000461", json!({})).await;
    let (status, _) = post(
        &p,
        "/set-api-secret",
        json!({"clientId": "mine", "secret": SECRET}),
    )
    .await;
    assert_eq!(status, 200);
    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;

    sign_in(&b, &p, "not-the-token-0123456789abcdef", None).await;
    let error = b.wait_text("#signin-error", |t| !t.is_empty()).await;
    assert!(error.contains("refused"), "{error}");
    assert!(!page_text(&b).await.contains("mine"), "nothing shown");
    assert_eq!(
        js(&b, "return sessionStorage.length").await,
        0,
        "nothing kept"
    );

    sign_in(&b, &p, SECRET, Some("mine")).await;
    b.wait_text("#session-title", |t| t == "mine").await;
    b.wait_text("#session-status", |t| t == "connected").await;
    for hidden in ["#nav-sessions", "#nav-cluster"] {
        let el = b.wait_css(hidden).await;
        assert!(!el.is_displayed().await.unwrap(), "{hidden} is shown");
    }
    // Asking for the list or the other session shows no other session.
    b.client.goto(&p.url("/console/#/sessions")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    b.client
        .goto(&p.url("/console/#/session/theirs"))
        .await
        .unwrap();
    let text = page_text(&b).await;
    assert!(!text.contains("4915100000461"), "{text}");
    let session = b.wait_text("#session-title", |t| !t.is_empty()).await;
    assert_ne!(session, "theirs", "another session's page");
    assert!(
        js(&b, "return sessionStorage.length")
            .await
            .as_u64()
            .unwrap_or(0)
            > 0,
        "the secret is kept for this tab"
    );
    let cookies = js(&b, "return document.cookie + localStorage.length").await;
    assert_eq!(cookies, "0", "never in a cookie or local storage");
    b.stop().await;
}

#[tokio::test]
async fn markup_from_contacts_is_shown_as_text() {
    if !browser::available("console pages") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The hosted inbox keeps the chats of sessions whose webhook is its receiver.
    let rx = Receiver::start().await;
    let p = gateway_with(dir.path(), &[("PARLEY_HOSTED_RECEIVER_URL", &rx.url)]).await;
    let name = "<img src=x onerror=alert(1)>Mallory";
    let text = "<script>document.title='owned'</script><b>bold</b>";
    let subject = "<iframe src=javascript:alert(2)></iframe>Team";
    linked(
        &p,
        "inbox",
        "4915100000470",
        json!({"webhookUrl": rx.url, "webhookToken": HOOK_TOKEN}),
    )
    .await;
    for (path, body) in [
        ("/set-org-id", json!({"clientId": "inbox", "orgId": "org1"})),
        (
            "/set-enable-group-ai",
            json!({"clientId": "inbox", "enabled": true}),
        ),
        ("/sandbox/contacts", json!({"phone": CONTACT, "name": name})),
    ] {
        let (status, res) = post(&p, path, body).await;
        assert_eq!(status, 200, "{path}: {res}");
    }
    let (status, group) = post(
        &p,
        "/sandbox/groups",
        json!({"clientId": "inbox", "subject": subject, "participants": [CONTACT]}),
    )
    .await;
    assert_eq!(status, 200, "{group}");
    for chat in [Value::Null, group["jid"].clone()] {
        let mut msg = json!({"clientId": "inbox", "from": CONTACT, "type": "text", "body": text});
        if !chat.is_null() {
            msg["chat"] = chat;
        }
        let (status, res) = post(&p, "/sandbox/messages", msg).await;
        assert_eq!(status, 200, "{res}");
    }

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    sign_in(&b, &p, TOKEN, None).await;
    b.wait_css("#sessions-table tr[data-client-id='inbox']")
        .await;
    b.client
        .goto(&p.url("/console/#/session/inbox"))
        .await
        .unwrap();
    b.wait_text("#rooms-table", |t| {
        t.contains("Mallory") && t.contains("Team")
    })
    .await;
    b.wait_text("#events-table", |t| t.contains("<b>bold</b>"))
        .await;
    let shown_text = page_text(&b).await;
    for markup in [name, subject, text] {
        assert!(shown_text.contains(markup), "{markup:?} not shown as text");
    }
    let injected = js(
        &b,
        "return [document.querySelectorAll('img[src=x], iframe, b').length, \
         document.querySelectorAll('script').length, document.title]",
    )
    .await;
    assert_eq!(injected[0], 0, "markup became elements: {injected}");
    assert_eq!(injected[1], 1, "only the console's own script: {injected}");
    assert_ne!(injected[2], "owned");
    photograph(&b, "session-inbox-desktop").await;
    b.stop().await;
}

#[tokio::test]
async fn every_page_fits_a_phone() {
    if !browser::available("console pages") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = gateway(dir.path()).await;
    linked(&p, "phoneview", "4915100000480", json!({})).await;
    let (status, _) = post(&p, "/start?clientId=waiting", json!({})).await;
    assert_eq!(status, 200);
    let b = Browser::start(PHONE.0, PHONE.1).await;

    b.client.goto(&p.url("/console/")).await.unwrap();
    shown(&b, "#signin-form").await;
    fits(&b, "sign-in").await;
    photograph(&b, "signin-phone").await;
    sign_in(&b, &p, TOKEN, None).await;
    b.wait_css("#sessions-table tr[data-client-id='phoneview']")
        .await;
    fits(&b, "sessions").await;
    photograph(&b, "sessions-phone").await;
    b.client
        .goto(&p.url("/console/#/session/phoneview"))
        .await
        .unwrap();
    b.wait_text("#session-status", |t| t == "connected").await;
    b.wait_text("#history-table tbody", |t| t.contains("connected"))
        .await;
    fits(&b, "a session").await;
    photograph(&b, "session-phone").await;
    b.client
        .goto(&p.url("/console/#/session/waiting"))
        .await
        .unwrap();
    qr_on_screen(&b).await;
    fits(&b, "pairing").await;
    photograph(&b, "pairing-phone").await;
    b.client.goto(&p.url("/console/#/cluster")).await.unwrap();
    b.wait_css("#cluster-charts svg").await;
    fits(&b, "cluster").await;
    photograph(&b, "cluster-phone").await;
    b.stop().await;
}

#[tokio::test]
async fn the_qr_rotates_on_screen_a_phone_code_pairs_and_dead_letters_are_redelivered() {
    if !browser::available("console pages") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    // The sandbox rotates its QR codes every 2 s here.
    let p = gateway_with(
        dir.path(),
        &[
            ("PARLEY_SANDBOX_QR_FIRST_SECS", "2"),
            ("PARLEY_SANDBOX_QR_NEXT_SECS", "2"),
        ],
    )
    .await;
    let (status, _) = post(&p, "/start?clientId=rotating", json!({})).await;
    assert_eq!(status, 200);
    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    sign_in(&b, &p, TOKEN, None).await;
    b.wait_css("#sessions-table tr[data-client-id='rotating']")
        .await;
    b.client
        .goto(&p.url("/console/#/session/rotating"))
        .await
        .unwrap();
    let qr = b.wait_css("#qr-image").await;
    let mut codes = Vec::new();
    let deadline = tokio::time::Instant::now() + PAGE_WAIT;
    while codes.len() < 2 {
        let src = qr.attr("src").await.unwrap().unwrap_or_default();
        if src.starts_with("data:image/png") {
            let code = parley_tests::qr::decode_data_url(&src);
            if codes.last() != Some(&code) {
                codes.push(code);
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the QR never rotated"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Paired by phone-number code instead, entered on the simulated phone.
    type_into(&b, "#pair-phone", "4915100000490").await;
    click(&b, "#pair-phone-submit").await;
    let code = b.wait_text("#pair-code", |t| t.trim().len() == 8).await;
    let (status, body) = post(
        &p,
        "/sandbox/enter-code",
        json!({"clientId": "rotating", "code": code.trim()}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    b.wait_text("#session-status", |t| t == "connected").await;

    // A receiver that refuses: the event is a dead letter; the button
    // delivers it again once the receiver takes it. The webhook takes
    // texts only, which the session's health then names.
    rx.set_default(parley_tests::receiver::Behaviour::Status(400));
    type_into(&b, "#webhook-url", &rx.url).await;
    type_into(&b, "#webhook-token", HOOK_TOKEN).await;
    type_into(&b, "#webhook-types", "text, receipt").await;
    click(&b, "#webhook-submit").await;
    b.wait_text("#webhook-result", |t| t.starts_with("Saved"))
        .await;
    let (status, page) = get(&p, "/sessions?clientId=rotating").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["sessions"][0]["webhook"]["types"],
        json!(["text", "receipt"]),
        "{page}"
    );
    b.wait_text("#session-health", |t| t.contains("text, receipt"))
        .await;
    // The account's presence, set from the page.
    b.wait_css("#presence-state")
        .await
        .select_by_value("unavailable")
        .await
        .expect("select unavailable");
    click(&b, "#presence-submit").await;
    b.wait_text("#presence-result", |t| t.contains("unavailable"))
        .await;
    let (_, page) = get(&p, "/sessions?clientId=rotating").await;
    assert_eq!(page["sessions"][0]["presence"], "unavailable", "{page}");
    // Calls rejected as they come, with a reply, set from the page.
    b.wait_css("#calls-mode")
        .await
        .select_by_value("reject")
        .await
        .expect("select reject");
    type_into(&b, "#calls-reply", "Please write instead.").await;
    click(&b, "#calls-submit").await;
    b.wait_text("#calls-result", |t| t.contains("rejected"))
        .await;
    let (_, page) = get(&p, "/sessions?clientId=rotating").await;
    assert_eq!(
        page["sessions"][0]["calls"],
        json!({"reject": true, "replyText": "Please write instead."}),
        "{page}"
    );
    b.wait_text("#session-health", |t| t.contains("rejected, with a reply"))
        .await;
    let (status, _) = post(
        &p,
        "/sandbox/contacts",
        json!({"phone": CONTACT, "name": "Carla"}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = post(
        &p,
        "/sandbox/messages",
        json!({"clientId": "rotating", "from": CONTACT, "type": "text", "body": "refused once"}),
    )
    .await;
    assert_eq!(status, 200);
    b.wait_text("#dead-table tbody", |t| t.contains("refused once"))
        .await;
    // A text status to every contact the session knows: the one who wrote.
    type_into(&b, "#status-body", "Open until 8 tonight").await;
    click(&b, "#status-submit").await;
    b.wait_text("#status-result", |t| t.contains("to 1 contact."))
        .await;
    let (_, outbox) = get(&p, "/sandbox/outbox?clientId=rotating").await;
    let posted = outbox["messages"].as_array().is_some_and(|m| {
        m.iter().any(|m| {
            m["to"] == "status@broadcast"
                && m["payload"]["body"] == "Open until 8 tonight"
                && m["payload"]["backgroundColor"] == "#FF1E6E4F"
        })
    });
    assert!(posted, "{outbox}");
    // Deleted from the page, for the contact it was shown to.
    click(&b, "#status-delete").await;
    b.wait_text("#status-result", |t| t.starts_with("Deleted"))
        .await;
    let (_, outbox) = get(&p, "/sandbox/outbox?clientId=rotating").await;
    let deleted = outbox["messages"].as_array().is_some_and(|m| {
        m.iter()
            .any(|m| m["to"] == "status@broadcast" && m["kind"] == "revoke")
    });
    assert!(deleted, "{outbox}");
    // A label created from the page, listed on it, seen by the phone.
    type_into(&b, "#label-name", "Wholesale").await;
    click(&b, "#label-submit").await;
    b.wait_text("#label-result", |t| t.starts_with("Created label 1"))
        .await;
    b.wait_text("#label-list", |t| {
        t.contains("Wholesale (1, colour 0, 0 chats)")
    })
    .await;
    let (_, outbox) = get(&p, "/sandbox/outbox?clientId=rotating").await;
    let labelled = outbox["messages"].as_array().is_some_and(|m| {
        m.iter()
            .any(|m| m["kind"] == "label" && m["payload"]["name"] == "Wholesale")
    });
    assert!(labelled, "{outbox}");
    rx.set_default(parley_tests::receiver::Behaviour::Status(200));
    click(&b, "#redeliver-all").await;
    b.wait_text("#redeliver-result", |t| t.contains("Queued 1"))
        .await;
    let again = loop {
        let req = rx.next(Duration::from_secs(10)).await;
        if req.json()["body"] == "refused once" && req.status == Some(200) {
            break req;
        }
    };
    assert!(again.header("webhook-id").is_some());
    b.wait_text("#dead-table tbody", |t| !t.contains("refused once"))
        .await;
    // A proxy of the session's own, set and removed from the page: shown
    // without its credentials, which never reach the page again.
    let proxy = ForwardProxy::start(Some(("op", "console-proxy-pw"))).await;
    type_into(&b, "#proxy-url", &proxy.url()).await;
    click(&b, "#proxy-submit").await;
    let shown = format!("http://127.0.0.1:{}", proxy.port());
    b.wait_text("#proxy-result", |t| t.contains("reconnects through"))
        .await;
    b.wait_text("#session-health", |t| {
        t.contains(&format!("{shown} (with credentials)"))
    })
    .await;
    assert!(!page_text(&b).await.contains("console-proxy-pw"));
    let (_, page) = get(&p, "/sessions?clientId=rotating").await;
    assert_eq!(
        page["sessions"][0]["proxy"],
        json!({"url": shown, "credentials": true}),
        "{page}"
    );
    eventually(30, "connected through the proxy", || async {
        let (_, page) = get(&p, "/sessions?clientId=rotating").await;
        (page["sessions"][0]["connected"] == true && proxy.tunnels() >= 1).then_some(())
    })
    .await;
    click(&b, "#proxy-remove").await;
    b.wait_text("#proxy-result", |t| t.contains("Removed"))
        .await;
    let (_, page) = get(&p, "/sessions?clientId=rotating").await;
    assert_eq!(page["sessions"][0]["proxy"], Value::Null, "{page}");
    b.stop().await;
}

#[tokio::test]
async fn thirty_idle_minutes_sign_the_tab_out() {
    if !browser::available("console pages") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = gateway(dir.path()).await;
    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    sign_in(&b, &p, TOKEN, None).await;
    shown(&b, "#page-sessions").await;
    // The last activity 31 minutes ago, as if the tab had been left alone.
    js(
        &b,
        "sessionStorage.setItem('parley.console.lastActivity', String(Date.now() - 31 * 60 * 1000)); return 1",
    )
    .await;
    b.client.refresh().await.unwrap();
    let note = b.wait_text("#signin-note", |t| !t.is_empty()).await;
    assert!(note.contains("30 minutes"), "{note}");
    assert_eq!(
        js(&b, "return sessionStorage.length").await,
        0,
        "token cleared"
    );
    b.stop().await;
}
