//! The library's connection events as the port's: QR codes, pairing, online,
//! and the ways a connection ends. Pure: the session's identity is handed in.
use whatsapp_rust::types::events::Event;
use whatsapp_rust::wacore::store::Device;

use parley_network::{DisconnectReason, Identity, Jid, NetworkEvent};

/// The identity a linked device has (`None` before pairing).
pub fn identity_of(device: &Device) -> Option<Identity> {
    let pn = device.pn.as_ref()?;
    Some(Identity {
        jid: own_jid(pn.to_string())?,
        lid: device
            .lid
            .as_ref()
            .map(|l| l.user.to_string())
            .unwrap_or_default(),
        push_name: device.push_name.clone(),
    })
}

/// The session's own phone JID as the network named it; a malformed one
/// (never seen: the server writes `<phone>:<device>@s.whatsapp.net`) is logged.
fn own_jid(raw: String) -> Option<Jid> {
    let jid = Jid::parse(&raw);
    if jid.is_none() {
        tracing::error!(jid = %raw, "the network named this session by a malformed JID");
    }
    jid
}

/// The port event for a connection event of the library; `None` for events
/// that are no connection change (messages are converted elsewhere).
///
/// `me` is the session's identity as stored now (read only when needed).
pub fn lifecycle(event: &Event, me: impl FnOnce() -> Option<Identity>) -> Option<NetworkEvent> {
    match event {
        Event::PairingQrCode(qr) => Some(NetworkEvent::Qr {
            code: qr.code.clone(),
        }),
        Event::PairSuccess(paired) => {
            let push_name = me().map(|i| i.push_name).unwrap_or_default();
            Some(NetworkEvent::Paired(Identity {
                jid: own_jid(paired.id.to_string())?,
                lid: paired.lid.user.to_string(),
                push_name,
            }))
        }
        Event::Connected(_) => me().map(NetworkEvent::Connected),
        Event::LoggedOut(_) => Some(NetworkEvent::Disconnected(DisconnectReason::LoggedOut)),
        Event::StreamReplaced(_) => {
            Some(NetworkEvent::Disconnected(DisconnectReason::StreamReplaced))
        }
        Event::TemporaryBan(_) => Some(NetworkEvent::Disconnected(DisconnectReason::TemporaryBan)),
        Event::Disconnected(_) => {
            Some(NetworkEvent::Disconnected(DisconnectReason::ConnectionLost))
        }
        _ => None,
    }
}
