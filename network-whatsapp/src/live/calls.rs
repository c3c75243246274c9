//! Calls. The network rings every device of the account with a `<call>`
//! holding an `<offer>` (a group call's members get an `<offer_notice>`),
//! and tells them with a `<terminate>` when the caller gave up or another
//! device answered; an offer that rang while the device was offline comes
//! after the login as a missed call (whatsapp-rust's `MissedCall`). Each is
//! a notice of its own kind, which only sessions that turned it on deliver.
//! Without its `voip` runtime whatsapp-rust still parses the signalling,
//! acknowledges an offer, and rejects a call (`voip().reject_call`): Parley
//! answers no call, so it needs no more.
use whatsapp_rust::Jid;
use whatsapp_rust::types::call::{CallAction, IncomingCall, MissedCall, MissedReason};

use super::connection::LiveConnection;
use super::errors::{failed, jid, port_jid, ready};
use parley_model::inbound::{CallNotice, CallPhase, CallRef, Content, InboundMessage};
use parley_network::{MessageId, NetworkError};

/// What a `<call>` stanza's action says, when it is news for the session:
/// an offer (video or not, the group's JID for a group call) or the end.
pub fn call_phase(action: &CallAction) -> Option<(CallPhase, bool, Option<&Jid>)> {
    Some(match action {
        CallAction::Offer {
            is_video,
            group_jid,
            ..
        } => (CallPhase::Offer, *is_video, group_jid.as_ref()),
        CallAction::OfferNotice { is_video, .. } => (CallPhase::Offer, *is_video, None),
        CallAction::Terminate { reason, .. } => (
            CallPhase::Ended {
                reason: reason.clone(),
            },
            false,
            None,
        ),
        _ => return None,
    })
}

/// The notice of a call's offer or end, from the caller (`chat_lid` its
/// LID user-part, `phone` its number when known).
pub fn call_notice(
    call: &IncomingCall,
    chat_lid: String,
    phone: Option<String>,
) -> Option<InboundMessage> {
    let (phase, video, group) = call_phase(&call.action)?;
    let creator = call.action.call_creator().to_non_ad();
    let caller = port_jid(&creator).ok()?;
    let notice = CallNotice {
        call: CallRef {
            id: call.action.call_id().to_string(),
            peer: port_jid(&call.from).ok()?,
            creator: caller.clone(),
        },
        phase,
        video,
        group: group.and_then(|g| port_jid(g).ok()),
        rejected: false,
    };
    let phone = phone.or_else(|| match &call.action {
        CallAction::Offer {
            caller_pn: Some(pn),
            ..
        } => Some(pn.user.to_string()),
        _ => None,
    });
    let id = MessageId::new(call.action.call_id())?;
    Some(InboundMessage {
        chat_lid,
        sender_phone: phone,
        push_name: call.notify.clone().unwrap_or_default(),
        timestamp: call.timestamp,
        ..InboundMessage::notice(id, caller.clone(), caller, Content::Call(notice))
    })
}

/// The end of a call that rang while the device was offline (the only
/// missed call whatsapp-rust reports without its `voip` runtime; the
/// others come as a `<terminate>`).
pub fn missed_notice(
    missed: &MissedCall,
    chat_lid: String,
    phone: Option<String>,
) -> Option<InboundMessage> {
    if !matches!(missed.reason, MissedReason::Offline) {
        return None;
    }
    let caller = port_jid(&missed.from.to_non_ad()).ok()?;
    let notice = CallNotice {
        call: CallRef {
            id: missed.call_id.clone(),
            peer: port_jid(&missed.from).ok()?,
            creator: caller.clone(),
        },
        phase: CallPhase::Ended {
            reason: Some("offline".into()),
        },
        video: false,
        group: None,
        rejected: false,
    };
    let id = MessageId::new(missed.call_id.clone())?;
    Some(InboundMessage {
        chat_lid,
        sender_phone: phone,
        timestamp: missed.timestamp,
        ..InboundMessage::notice(id, caller.clone(), caller, Content::Call(notice))
    })
}

impl LiveConnection {
    /// Rejects a call that rings the account's devices: a `<reject>` to the
    /// device that signalled it, which the network passes to the caller.
    pub async fn reject(&self, call: &CallRef) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        let peer = jid(call.peer.as_str())?;
        let creator = jid(call.creator.as_str())?;
        self.client
            .voip()
            .reject_call(&call.id, &peer, &creator)
            .await
            .map_err(|e| failed(&self.client, "call rejection", e))
    }
}
