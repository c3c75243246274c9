//! The network side of a session: connecting, reconnecting with backoff, and
//! turning the network's events into recorded state.
use std::sync::Arc;

use chrono::Utc;
use parley_shared::db::StatePatch;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::time::{Instant, timeout};

use super::actor::{Actor, CONNECTED, End, Flow, INITIALIZING, Link, QR};
use super::output::Reply;
use crate::events::Activity;
use crate::network::{DisconnectReason, Identity, NetworkError, NetworkEvent, SessionContext};
use crate::send::Me;
use parley_model::inbound::Content;

/// `lastDisconnect` when the network cannot be reached.
pub const UNREACHABLE: &str = "network-unreachable";

impl Actor {
    /// Connects to the network; on failure records why and schedules a retry.
    #[tracing::instrument(skip_all, fields(client_id = %self.id))]
    pub(super) async fn connect(&mut self) -> Flow {
        self.retry_at = None;
        let proxy = match self.own_proxy().await {
            Ok(proxy) => proxy,
            Err(e) => return self.not_connected(NetworkError::Proxy(e)).await,
        };
        let ctx = SessionContext {
            client_id: self.id.clone(),
            fence: self.lease.fence,
            pod_name: self.deps.pod_name.clone(),
            proxy,
        };
        let attempt = timeout(
            self.deps.timing.network_timeout,
            self.deps.network.connect(ctx),
        )
        .await;
        let error = match attempt {
            Ok(Ok((connection, events))) => {
                let connection = connection.into();
                self.live.opened(&connection);
                self.link = Some(Link { connection, events });
                return Ok(());
            }
            Ok(Err(e)) => e,
            Err(_) => NetworkError::Unreachable("connecting timed out".into()),
        };
        self.not_connected(error).await
    }

    /// Records why a connect failed and schedules a retry.
    async fn not_connected(&mut self, error: NetworkError) -> Flow {
        let reason = match &error {
            NetworkError::Unreachable(_) => UNREACHABLE,
            NetworkError::Rejected(_) => "network-rejected",
            NetworkError::NotPaired => "not-paired",
            NetworkError::Proxy(e) => e.fault.reason(),
        };
        tracing::warn!(error = %error, "cannot connect to the network; retrying with backoff");
        if self.last_disconnect != reason {
            let patch = StatePatch {
                status: Some(INITIALIZING.into()),
                connected: Some(false),
                last_disconnect: Some(reason.into()),
                ..StatePatch::default()
            };
            self.write(patch).await?;
            reason.clone_into(&mut self.last_disconnect);
        }
        self.set_status(INITIALIZING);
        self.schedule_reconnect();
        Ok(())
    }

    /// Handles one network event; `None`: the connection's events ended.
    #[tracing::instrument(skip_all, fields(client_id = %self.id))]
    pub(super) async fn on_event(&mut self, event: Option<NetworkEvent>) -> Flow {
        match event {
            Some(NetworkEvent::Qr { code }) => self.on_qr(code).await,
            Some(NetworkEvent::Paired(identity)) => self.on_linked(identity, false).await,
            Some(NetworkEvent::Connected(identity)) => self.on_linked(identity, true).await,
            Some(NetworkEvent::Disconnected(reason)) => self.on_disconnected(reason).await,
            Some(NetworkEvent::Message(mut msg)) => {
                if let Content::Call(call) = &mut msg.content {
                    self.on_call(call);
                }
                if let Content::Label(label) = &msg.content
                    && !self.on_label(label).await
                {
                    return Ok(());
                }
                let (chat, id) = (msg.chat.clone(), msg.id.clone());
                // A notice (a receipt, a member change) is acknowledged by
                // the network's client as it arrives: no answer is awaited.
                let notice = msg.content.is_notice();
                let activity = Activity {
                    msg: *msg,
                    meta: None,
                    file: None,
                    connection: self.link.as_ref().map(|l| Arc::clone(&l.connection)),
                    stored_type: None,
                    sent: false,
                };
                let reply = match (self.persisting.as_mut(), self.link.as_ref()) {
                    // A sandbox operation answers once its messages are logged.
                    (Some(waiting), _) => {
                        let (reply, persisted) = Reply::waiter();
                        waiting.push(persisted);
                        reply
                    }
                    // The network acknowledges the message once it is logged.
                    (None, Some(link)) if !notice => {
                        Reply::network(Arc::clone(&link.connection), chat, id)
                    }
                    (None, _) => Reply::nobody(),
                };
                self.output.received(activity, reply).await;
                Ok(())
            }
            Some(NetworkEvent::History(messages)) => {
                self.output.history(messages).await;
                Ok(())
            }
            Some(NetworkEvent::ContactNames(names)) => {
                self.output.contact_names(names).await;
                Ok(())
            }
            None => self.on_disconnected(DisconnectReason::ConnectionLost).await,
        }
    }

    /// Handles the events already waiting, so an answer reflects them.
    pub(super) async fn drain_events(&mut self) -> Flow {
        loop {
            let Some(link) = self.link.as_mut() else {
                return Ok(());
            };
            match link.events.try_recv() {
                Ok(event) => self.on_event(Some(event)).await?,
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => return self.on_event(None).await,
            }
        }
    }

    async fn on_qr(&mut self, code: String) -> Flow {
        self.qr = code;
        self.paired = false;
        if self.current_status() != QR {
            let patch = StatePatch {
                status: Some(QR.into()),
                ..StatePatch::default()
            };
            self.write(patch).await?;
            self.set_status(QR);
        }
        Ok(())
    }

    /// The session is linked as `identity`: paired (the QR scanned or the
    /// code entered), or online (`Connected`). After a pairing the network's
    /// client logs in again before it is online, so the session stays
    /// `initializing` until `Connected`; a send meanwhile waits for it
    /// (`held`) rather than meet a client that is not connected.
    async fn on_linked(&mut self, identity: Identity, online: bool) -> Flow {
        let status = if online { CONNECTED } else { INITIALIZING };
        let patch = StatePatch {
            status: Some(status.into()),
            jid: Some(identity.jid.to_string()),
            lid: Some(identity.lid.clone()),
            connected: Some(online),
            logged_in: Some(true),
            connected_at: online.then(|| Some(Utc::now())),
            ..StatePatch::default()
        };
        self.write(patch).await?;
        self.qr.clear();
        self.paired = true;
        self.row.jid = identity.jid.to_string();
        self.me = Some(Me {
            jid: identity.jid,
            push_name: identity.push_name,
        });
        self.row.lid = identity.lid;
        self.output.apply(&self.id, &self.row);
        self.set_status(status);
        if !online {
            tracing::info!(jid = %self.row.jid, "session paired; online once it logs in");
            return Ok(());
        }
        self.online_since.get_or_insert_with(Instant::now);
        tracing::info!(jid = %self.row.jid, "session online");
        self.say_presence();
        Ok(())
    }

    /// Says again the presence the session set (`/set-presence`), as the
    /// network forgets it with the connection (and the network's client
    /// may say `available` by itself at login).
    fn say_presence(&self) {
        let Some(available) = self.row.presence_set() else {
            return;
        };
        let Some(link) = &self.link else { return };
        let connection = Arc::clone(&link.connection);
        let client_id = self.id.clone();
        tokio::spawn(async move {
            if let Err(e) = connection.set_presence(available).await {
                tracing::warn!(%client_id, available, error = %e, "the presence set was not said again");
            }
        });
    }

    async fn on_disconnected(&mut self, reason: DisconnectReason) -> Flow {
        if let Some(link) = self.link.take() {
            self.close(link).await;
        }
        let online_since = self.online_since.take();
        self.qr.clear();
        self.set_status(INITIALIZING);
        if reason.is_terminal() {
            // The device no longer exists after a logout; a ban keeps it.
            let logged_out = reason == DisconnectReason::LoggedOut;
            let patch = StatePatch {
                status: Some(INITIALIZING.into()),
                connected: Some(false),
                logged_in: Some(false),
                desired: Some(false),
                last_disconnect: Some(reason.as_str().into()),
                jid: logged_out.then(String::new),
                lid: logged_out.then(String::new),
                ..StatePatch::default()
            };
            self.write(patch).await?;
            tracing::warn!(reason = reason.as_str(), "the network ended the session");
            return Err(End::Terminal);
        }
        if online_since.is_some_and(|t| t.elapsed() >= self.deps.timing.stable_after) {
            self.backoff.reset();
        }
        let patch = StatePatch {
            status: Some(INITIALIZING.into()),
            connected: Some(false),
            reconnects_add: 1,
            last_disconnect: Some(reason.as_str().into()),
            ..StatePatch::default()
        };
        self.write(patch).await?;
        parley_shared::metrics::metrics().reconnects.inc();
        reason.as_str().clone_into(&mut self.last_disconnect);
        tracing::info!(reason = reason.as_str(), "connection ended; reconnecting");
        self.schedule_reconnect();
        Ok(())
    }
}
