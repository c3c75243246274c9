//! One client connection from handshake to close: an unregistered client
//! is shown QR references and waits for the phone's scan; a registered one
//! logs in (`<success>`, what waited while it was offline, `<ib><offline>`),
//! then its stanzas are answered and routed until the socket closes.
use std::sync::Arc;

use anyhow::anyhow;
use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use whatsapp_rust::wacore_binary::node::Node;

use crate::Inner;
use crate::code;
use crate::faults::Fault;
use crate::handshake::{Handshaken, respond};
use crate::iq::{Asker, answer};
use crate::nodes::{attr, child, element, iq_error, iq_result, now, stream_error};
use crate::pairing::pair_device;
use crate::registry::{Control, Device, Live, device_jid};
use crate::relay::{self, Sender};
use crate::socket::Socket;

pub async fn serve(inner: Arc<Inner>, tcp: TcpStream) {
    let _ = tcp.set_nodelay(true);
    let ws = match tokio_websockets::ServerBuilder::new().accept(tcp).await {
        Ok((_request, ws)) => ws,
        Err(e) => {
            tracing::debug!(error = %e, "wire network: not a websocket");
            return;
        }
    };
    let mut socket = Socket::new(ws);
    let refuse_ik = inner.refuse_ik.load(std::sync::atomic::Ordering::SeqCst);
    let shaken = match respond(&mut socket, &inner.keys, refuse_ik).await {
        Ok(shaken) => shaken,
        Err(e) => {
            tracing::debug!(error = %e, "wire network: handshake failed");
            return;
        }
    };
    inner.note_pattern(shaken.pattern);
    socket.transcoder = inner.transcoder(socket.header[3]);
    if socket.transcoder.is_some() {
        // Baileys installs its transport keys in a task it does not await
        // after sending its handshake's last message: a node sent back at
        // once on loopback can reach it first and be lost. The network's
        // round trip gives it that moment; so does this pause.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let outcome = match shaken.payload.username {
        Some(user) => {
            let device = shaken.payload.device.unwrap_or(0) as u16;
            let push_name = shaken.payload.push_name.clone().unwrap_or_default();
            login(
                &inner,
                &mut socket,
                &shaken,
                user.to_string(),
                device,
                push_name,
            )
            .await
        }
        None => pair(&inner, &mut socket, &shaken).await,
    };
    if let Err(e) = outcome {
        tracing::debug!(error = %e, "wire network: connection ended");
    }
    socket.close().await;
}

/// An unregistered client: QR references, then the phone's pair-success, the
/// client's signature, and the 515 that sends it to log in.
async fn pair(inner: &Inner, socket: &mut Socket, shaken: &Handshaken) -> anyhow::Result<()> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ours = tx.downgrade();
    inner.registry().pairing.insert(shaken.client_static, tx);
    let refs: Vec<String> = (0..6)
        .map(|_| format!("2@{}", BASE64_STANDARD.encode(rand10::random::<[u8; 24]>())))
        .collect();
    let result = async {
        socket.write_node(&pair_device(&refs)).await?;
        let mut pending: Option<crate::pairing::Pending> = None;
        loop {
            tokio::select! {
                node = socket.read_node() => {
                    let Some(node) = node? else { return Ok(()) };
                    if node.tag != "iq" {
                        continue;
                    }
                    if let Some(sign) = child(&node, "pair-device-sign") {
                        let offer = pending.take().ok_or_else(|| anyhow!("a signature nobody asked for"))?;
                        let identity = match offer.check(sign) {
                            Ok(identity) => identity,
                            Err(e) => {
                                // Nobody is linked; the client hears why and the socket ends.
                                let id = attr(&node, "id").unwrap_or_default();
                                socket.write_node(&iq_error(&id, 401, "not-authorized")).await?;
                                return Err(e.context("pair-device-sign refused"));
                            }
                        };
                        inner.link(&offer.user, offer.device, shaken.client_static, Some(identity));
                        socket.write_node(&stream_error(Some(515), None)).await?;
                        return Ok(());
                    }
                    if let Some(stage) = code::stage(&node) {
                        let answer = link_code(inner, shaken, &node, stage);
                        socket.write_node(&answer).await?;
                        continue;
                    }
                    if attr(&node, "type").as_deref() == Some("error") && pending.is_some() {
                        return Err(anyhow!("the client refused the pairing"));
                    }
                    if attr(&node, "type").as_deref() == Some("get")
                        && let Some(id) = attr(&node, "id")
                    {
                        socket.write_node(&iq_result(&id, vec![])).await?;
                    }
                }
                control = rx.recv() => match control {
                    Some(Control::Pair { node, pending: offer }) => {
                        pending = Some(offer);
                        socket.write_node(&node).await?;
                    }
                    Some(Control::Send(node)) => socket.write_node(&node).await?,
                    Some(Control::End(node)) => {
                        socket.write_node(&node).await?;
                        return Ok(());
                    }
                    Some(Control::Drop) | None => return Ok(()),
                },
            }
        }
    }
    .await;
    // Unless a newer socket of the same install took the place meanwhile.
    let mut reg = inner.registry();
    if let Some(ours) = ours.upgrade()
        && reg
            .pairing
            .get(&shaken.client_static)
            .is_some_and(|tx| tx.same_channel(&ours))
    {
        reg.pairing.remove(&shaken.client_static);
    }
    result
}

/// Records a code-pairing stage of the companion on `shaken`'s socket; the
/// IQ's answer.
fn link_code(
    inner: &Inner,
    shaken: &Handshaken,
    iq: &Node,
    stage: anyhow::Result<code::Stage>,
) -> Node {
    let id = attr(iq, "id").unwrap_or_default();
    let answer = match stage {
        Ok(code::Stage::Hello { .. }) if inner.faults.take_code(&shaken.client_static) => {
            iq_error(&id, 500, "internal-server-error")
        }
        Ok(code::Stage::Hello { phone, wrapped }) => {
            let reference = BASE64_STANDARD
                .encode(rand10::random::<[u8; 12]>())
                .into_bytes();
            inner.registry().codes.insert(
                phone,
                code::CodeRequest {
                    noise: shaken.client_static,
                    reference: reference.clone(),
                    wrapped_ephemeral: wrapped,
                    finish: None,
                },
            );
            code::hello_result(&id, &reference)
        }
        Ok(code::Stage::Finish {
            phone,
            bundle,
            identity,
        }) => match inner.registry().codes.get_mut(&phone) {
            Some(request) if request.noise == shaken.client_static => {
                request.finish = Some((bundle, identity));
                iq_result(&id, vec![])
            }
            _ => iq_error(&id, 404, "item-not-found"),
        },
        Err(e) => {
            tracing::debug!(error = %e, "wire network: a code-pairing IQ it cannot read");
            iq_error(&id, 400, "bad-request")
        }
    };
    inner.changed.notify_waiters();
    answer
}

/// How long a login waits for the device's older socket to end by itself.
const OLDER_SOCKET_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// A registered client: checks its keys, says `<success>`, then serves it.
async fn login(
    inner: &Inner,
    socket: &mut Socket,
    shaken: &Handshaken,
    phone: String,
    device: u16,
    push_name: String,
) -> anyhow::Result<()> {
    let key = (phone.clone(), device);
    let conn = inner.next_conn();
    let (tx, mut rx) = mpsc::unbounded_channel();
    // A client that gave its socket up and logs in again at once
    // (whatsapp-rust's `reconnect_immediately`, after a keepalive or an
    // app-state sync that timed out) can get here before this server read
    // that socket's end, on a loaded machine. The same install's older
    // socket gets a moment to end by itself before this one counts as a
    // second; one its client still holds stays open, and is replaced below
    // as the real server replaces it (at once for a new install).
    inner
        .older_socket_ended(&key, &shaken.client_static, OLDER_SOCKET_GRACE)
        .await;
    let admitted = {
        let mut reg = inner.registry();
        let known = reg
            .device(&phone, device)
            .is_some_and(|d: &mut Device| d.noise == shaken.client_static);
        if !known {
            Err(element(
                "failure",
                &[("reason", "401".into()), ("location", "wire".into())],
                vec![],
            ))
        } else if inner.faults.take(&phone, device, Fault::Login) {
            Err(element("failure", &[("reason", "503".into())], vec![]))
        } else if inner.faults.take(&phone, device, Fault::LoginRateLimited) {
            Err(element("failure", &[("reason", "429".into())], vec![]))
        } else if let Some(expire) = inner.ban_for(&phone) {
            Err(element(
                "failure",
                &[
                    ("reason", "402".into()),
                    ("code", "101".into()),
                    ("expire", expire.to_string()),
                ],
                vec![],
            ))
        } else {
            if let Some(old) = reg.go_live(
                key.clone(),
                Live {
                    conn,
                    tx,
                    noise: shaken.client_static,
                },
            ) {
                let _ = old
                    .tx
                    .send(Control::End(stream_error(None, Some("replaced"))));
            }
            let account = reg.accounts.get(&phone);
            let lid = account.map(|a| a.lid.clone()).unwrap_or_default();
            let name = account.map(|a| a.push_name.clone()).unwrap_or_default();
            let queued = reg.take_queued(&key);
            for node in &queued {
                reg.handed(&key, node);
            }
            Ok((lid, name, queued))
        }
    };
    let (lid, account_name, queued) = match admitted {
        Ok(admitted) => admitted,
        Err(failure) => {
            socket.write_node(&failure).await?;
            return Ok(());
        }
    };
    let served = async {
        let success = element(
            "success",
            &[
                ("t", now().to_string()),
                ("lid", device_jid(&lid, device, "lid")),
                ("props", "1".into()),
                ("location", "wire".into()),
            ],
            vec![],
        );
        socket.write_node(&success).await?;
        let count = queued.len();
        for mut node in queued {
            node.attrs.insert("offline", "1");
            socket.write_node(&node).await?;
        }
        let offline = element("offline", &[("count", count.to_string())], vec![]);
        socket
            .write_node(&element("ib", &[], vec![offline]))
            .await?;
        if device != 0 && !account_name.is_empty() {
            // The phone's name, as the account's settings carry it to every companion.
            let sync = element(
                "notification",
                &[
                    ("type", "account_sync".into()),
                    ("from", crate::nodes::SERVER.into()),
                    ("id", format!("account-sync-{conn}")),
                    ("t", now().to_string()),
                    ("pushname", account_name.clone()),
                ],
                vec![],
            );
            socket.write_node(&sync).await?;
        }
        let asker = Asker {
            phone: &phone,
            device,
        };
        let sender = Sender {
            phone: &phone,
            device,
            push_name: &push_name,
        };
        // Once a keepalive went unanswered (the `keepalive` fault) the path
        // is silent: nothing more reaches the client on this socket, as on
        // a half-open connection, until the client gives it up.
        let mut silent = false;
        loop {
            tokio::select! {
                node = socket.read_node() => {
                    let Some(node) = node? else { return Ok(()) };
                    let reply = handle(inner, &asker, &sender, &node);
                    silent |= reply.is_none() && is_keepalive(&node);
                    if let Some(reply) = reply.filter(|_| !silent) {
                        socket.write_node(&reply).await?;
                    }
                }
                control = rx.recv() => match control {
                    Some(Control::Send(_)) if silent => {}
                    Some(Control::Send(node)) => socket.write_node(&node).await?,
                    Some(Control::End(node)) => {
                        if !silent {
                            socket.write_node(&node).await?;
                        }
                        return Ok(());
                    }
                    Some(Control::Pair { .. }) => {}
                    Some(Control::Drop) | None => return Ok(()),
                },
            }
        }
    }
    .await;
    inner.registry().gone(&key, conn);
    served
}

/// Whether `node` is a keepalive ping (`<iq xmlns="w:p">`), which the
/// server always answers unless the `keepalive` fault holds the answer.
fn is_keepalive(node: &Node) -> bool {
    node.tag == "iq" && attr(node, "xmlns").as_deref() == Some("w:p")
}

/// One stanza of a logged-in client; the reply to write, if any.
fn handle(inner: &Inner, asker: &Asker<'_>, sender: &Sender<'_>, node: &Node) -> Option<Node> {
    if let Some(ids) = acknowledged(node) {
        let key = (sender.phone.to_string(), sender.device);
        inner.registry().acked(&key, &ids);
        inner.changed.notify_waiters();
    }
    match node.tag.as_ref() {
        "iq" => answer(inner, asker, node),
        "message" if inner.faults.take(sender.phone, sender.device, Fault::Send) => {
            relay::refused(node, crate::faults::REFUSED_MESSAGE)
        }
        "message" => {
            let ack = relay::message(inner, sender, node);
            inner.changed.notify_waiters();
            ack
        }
        "receipt" => relay::receipt(inner, sender, node),
        "chatstate" => {
            relay::chatstate(inner, sender, node);
            None
        }
        "presence" => {
            crate::presence::stanza(inner, sender, node);
            None
        }
        "call" => crate::calls::stanza(inner, sender, node),
        "ack" | "ib" => None,
        other => {
            tracing::debug!(tag = other, "wire network: stanza not served");
            None
        }
    }
}

/// The ids of the stanzas a client's stanza acknowledges: a receipt (its
/// `id` and the `<list><item id>` of an aggregate one), or a bare
/// `<ack class="message">` or `<ack class="notification">` (which
/// whatsapp-rust sends once it handled the notification).
fn acknowledged(node: &Node) -> Option<Vec<String>> {
    let receipt = node.tag == "receipt";
    let ack = node.tag == "ack"
        && matches!(
            attr(node, "class").as_deref(),
            Some("message" | "notification")
        );
    if !receipt && !ack {
        return None;
    }
    let mut ids: Vec<String> = attr(node, "id").into_iter().collect();
    if let Some(list) = crate::nodes::child(node, "list") {
        ids.extend(
            crate::nodes::children(list)
                .iter()
                .filter(|n| n.tag == "item")
                .filter_map(|n| attr(n, "id")),
        );
    }
    Some(ids)
}
