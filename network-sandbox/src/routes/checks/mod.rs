//! The checks of the `/sandbox/*` request bodies, whichever test network is
//! behind the routes: one contract, one set of 400s.
use crate::store::entities::phones::{CONTACTS, EVERYONE};
use chrono::{DateTime, Utc};
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::{SandboxCall, SandboxCallEnd, SandboxLabel};
use parley_contract::wire::sandbox::{
    SandboxEnterCode, SandboxFault, SandboxGroupMembers, SandboxGroupRequest, SandboxGroupSettings,
    SandboxGroupSubject, SandboxPresence, SandboxReceipt, SandboxTyping,
};
use parley_model::address::{Jid, MessageId, PhoneNumber};
use parley_model::inbound::{GroupAction, GroupSetting, ReceiptStatus, TypingState};
use parley_model::recipients::{GROUP_SERVER, Recipient};
use parley_network::test_network::NewGroup;
use parley_network::test_network::{
    CALL_END_REASONS, CallEnd, MembersChange, NewCall, NewReceipt, NewTyping, SettingChange,
};
use parley_network::test_network::{PhoneLabel, PhoneLabelChange};

mod history;
pub use history::{
    HISTORY_BODY_MAX, HISTORY_LABEL_CHATS_MAX, HISTORY_LABELS_MAX, HISTORY_MESSAGES_MAX, history,
};

/// Fault kinds of the sandbox contract.
pub const FAULT_OPS: &[&str] = &[
    "send",
    "pair-code",
    "logout",
    "lookup",
    "receipt",
    "privacy-token",
    "drop",
];

/// Most participants of one sandbox group.
pub const GROUP_PARTICIPANTS_MAX: usize = 1024;

/// A fault's `count` (default 1), once its `op` is a known one.
pub fn fault(body: &SandboxFault) -> Result<u32, ApiError> {
    if !FAULT_OPS.contains(&body.op.as_str()) {
        return Err(ApiError::bad_request(format!(
            "op must be one of {}",
            FAULT_OPS.join(", ")
        )));
    }
    match body.count.unwrap_or(1) {
        count @ 1..=10_000 => Ok(count),
        _ => Err(ApiError::bad_request("count must be 1 to 10000")),
    }
}

/// The pairing code typed in, trimmed.
pub fn code(body: &SandboxEnterCode) -> Result<String, ApiError> {
    match body.code.trim() {
        "" => Err(ApiError::bad_request("code is required")),
        code => Ok(code.to_string()),
    }
}

/// A contact's `avatar`: `none`, `hidden`, or a base64 PNG or JPEG.
pub fn avatar(raw: Option<&str>) -> Result<(), ApiError> {
    use base64::Engine;
    let Some(raw) = raw.filter(|a| !matches!(*a, "none" | "hidden")) else {
        return Ok(());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(raw)
        .map_err(|_| ApiError::bad_request("avatar must be none, hidden or a base64 PNG/JPEG"))?;
    if bytes.starts_with(b"\x89PNG") || bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Ok(())
    } else {
        Err(ApiError::bad_request("avatar must be a PNG or JPEG image"))
    }
}

/// Who may see a contact's picture (`avatarPrivacy`), when given.
pub fn avatar_privacy(raw: Option<&str>) -> Result<(), ApiError> {
    match raw {
        None | Some(EVERYONE | CONTACTS) => Ok(()),
        Some(_) => Err(ApiError::bad_request(
            "avatarPrivacy must be everyone or contacts",
        )),
    }
}

/// Who may call a phone's account (`callPrivacy`), when given.
pub fn call_privacy(raw: Option<&str>) -> Result<(), ApiError> {
    match raw {
        None | Some(EVERYONE | CONTACTS) => Ok(()),
        Some(_) => Err(ApiError::bad_request(
            "callPrivacy must be everyone or contacts",
        )),
    }
}

/// The outbox's `since` filter (RFC 3339), when given.
pub fn since(raw: Option<&str>) -> Result<Option<DateTime<Utc>>, ApiError> {
    raw.map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            DateTime::parse_from_rfc3339(s)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| ApiError::bad_request("since must be an RFC 3339 timestamp"))
        })
        .transpose()
}

/// The subject, participants and admins of a `/sandbox/groups` request.
pub fn group(body: SandboxGroupRequest) -> Result<NewGroup, ApiError> {
    let subject = parley_api::extension::subject(Some(body.subject))?;
    if body.participants.len() > GROUP_PARTICIPANTS_MAX {
        return Err(ApiError::bad_request(format!(
            "participants has more than {GROUP_PARTICIPANTS_MAX} items"
        )));
    }
    let phones = |field: &str, raw: &[String]| -> Result<Vec<PhoneNumber>, ApiError> {
        raw.iter()
            .map(|p| Ok(PhoneNumber::parse(field, p)?))
            .collect()
    };
    Ok(NewGroup {
        subject,
        participants: phones("participants", &body.participants)?,
        admins: phones("admins", &body.admins)?,
    })
}

/// The group and the change of a `/sandbox/groups/participants` request.
pub fn group_members(body: SandboxGroupMembers) -> Result<(Jid, MembersChange), ApiError> {
    let jid = group_jid(&body.jid)?;
    let action = GroupAction::parse(body.action.trim()).ok_or_else(|| {
        ApiError::bad_request("action must be one of add, remove, promote, demote")
    })?;
    if body.participants.is_empty() || body.participants.len() > GROUP_PARTICIPANTS_MAX {
        return Err(ApiError::bad_request(format!(
            "participants must have 1 to {GROUP_PARTICIPANTS_MAX} items"
        )));
    }
    let participants = body
        .participants
        .iter()
        .map(|p| Ok(PhoneNumber::parse("participants", p)?))
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok((
        jid,
        MembersChange {
            by: PhoneNumber::parse("by", &body.by)?,
            action,
            participants,
        },
    ))
}

/// Most messages one receipt names.
pub const RECEIPT_IDS_MAX: usize = 100;

/// A `/sandbox/receipts` request: a phone, a status, 1 to 100 message ids.
pub fn receipt(body: SandboxReceipt) -> Result<NewReceipt, ApiError> {
    let from = PhoneNumber::parse("from", &body.from)?;
    let status = ReceiptStatus::parse(body.status.trim())
        .ok_or_else(|| ApiError::bad_request("status must be one of delivered, read, played"))?;
    if body.message_ids.is_empty() || body.message_ids.len() > RECEIPT_IDS_MAX {
        return Err(ApiError::bad_request(format!(
            "messageIds must have 1 to {RECEIPT_IDS_MAX} items"
        )));
    }
    let message_ids = body
        .message_ids
        .iter()
        .map(|id| Ok(MessageId::parse("messageIds", Some(id))?))
        .collect::<Result<Vec<_>, ApiError>>()?;
    let group = body.group.as_deref().map(group_jid).transpose()?;
    Ok(NewReceipt {
        from,
        status,
        message_ids,
        group,
    })
}

/// A `/sandbox/presence` request: the contact, and whether it comes online.
pub fn presence(body: &SandboxPresence) -> Result<(PhoneNumber, bool), ApiError> {
    let from = PhoneNumber::parse("from", &body.from)?;
    match body.state.trim() {
        "available" => Ok((from, true)),
        "unavailable" => Ok((from, false)),
        _ => Err(ApiError::bad_request(
            "state must be available or unavailable",
        )),
    }
}

/// A `/sandbox/typing` request: a phone, a chat state, and a group if any.
pub fn typing(body: SandboxTyping) -> Result<NewTyping, ApiError> {
    let from = PhoneNumber::parse("from", &body.from)?;
    let state = TypingState::parse(body.state.trim()).ok_or_else(|| {
        ApiError::bad_request("state must be one of composing, recording, paused")
    })?;
    let group = body.group.as_deref().map(group_jid).transpose()?;
    Ok(NewTyping { from, state, group })
}

/// A `/sandbox/calls` request: the caller, and the group of a group call.
pub fn call(body: SandboxCall) -> Result<NewCall, ApiError> {
    Ok(NewCall {
        from: PhoneNumber::parse("from", &body.from)?,
        video: body.video,
        group: body.group.as_deref().map(group_jid).transpose()?,
    })
}

/// A `/sandbox/labels` request: on a chat (or off it), deleted, or saved.
pub fn label(body: SandboxLabel) -> Result<PhoneLabel, ApiError> {
    use parley_model::outgoing::Label;
    let label_id = Label::parse_id("labelId", body.label_id.as_deref())?;
    let change = if let Some(chat) = body.chat.as_deref() {
        PhoneLabelChange::Chat {
            chat: Recipient::parse("chat", chat)?,
            labeled: body.labeled.unwrap_or(true),
        }
    } else if body.deleted == Some(true) {
        PhoneLabelChange::Deleted
    } else {
        PhoneLabelChange::Saved {
            name: Label::parse_name(body.name.as_deref())?
                .ok_or_else(|| ApiError::bad_request("name is required"))?,
            color: Label::parse_color(body.color)?.unwrap_or(0),
        }
    };
    Ok(PhoneLabel { label_id, change })
}

/// A `/sandbox/calls/end` request: the caller, the call, and why it ends.
pub fn call_end(body: SandboxCallEnd) -> Result<CallEnd, ApiError> {
    let from = PhoneNumber::parse("from", &body.from)?;
    let call_id = MessageId::parse("callId", Some(&body.call_id))?.into_string();
    let reason = match body.reason.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(r) if CALL_END_REASONS.contains(&r) => Some(r.to_string()),
        Some(r) => {
            return Err(ApiError::bad_request(format!(
                "reason: {r:?} is not one of {}",
                CALL_END_REASONS.join(", ")
            )));
        }
    };
    Ok(CallEnd {
        from,
        call_id,
        reason,
    })
}

/// A group's JID as a control names it (`jid`); 400 for anything else.
fn group_jid(raw: &str) -> Result<Jid, ApiError> {
    match Recipient::parse("jid", raw.trim()) {
        Ok(g @ Recipient::Group(_)) if raw.contains('@') => Ok(g.jid()),
        _ => Err(ApiError::bad_request(format!(
            "jid must be a group JID ending in @{GROUP_SERVER}"
        ))),
    }
}

/// The group, its new subject and who renames it (`None`: the session's
/// phone) of a `/sandbox/groups/subject` request.
pub fn group_subject(
    body: SandboxGroupSubject,
) -> Result<(Jid, String, Option<PhoneNumber>), ApiError> {
    let jid = group_jid(&body.jid)?;
    let subject = parley_api::extension::subject(Some(body.subject))?;
    Ok((jid, subject, member_phone(body.by.as_deref())?))
}

/// How long messages may stay before they disappear, in seconds: the
/// durations the apps offer (0: they do not disappear).
pub const EPHEMERAL_SECONDS: [u32; 4] = [0, 86_400, 604_800, 7_776_000];

/// The longest group description, in characters.
pub const DESCRIPTION_MAX: usize = 2_048;

/// The group, the one setting and who changes it (`None`: the session's
/// phone) of a `/sandbox/groups/settings` request.
pub fn group_settings(body: SandboxGroupSettings) -> Result<(Jid, SettingChange), ApiError> {
    let jid = group_jid(&body.jid)?;
    let by = member_phone(body.by.as_deref())?;
    let given = [
        body.description.map(GroupSetting::Description),
        body.announce.map(GroupSetting::Announce),
        body.locked.map(GroupSetting::Locked),
        body.ephemeral_seconds.map(GroupSetting::Ephemeral),
    ];
    let mut given = given.into_iter().flatten();
    let (Some(setting), None) = (given.next(), given.next()) else {
        return Err(ApiError::bad_request(
            "give exactly one of description, announce, locked, ephemeralSeconds",
        ));
    };
    match &setting {
        GroupSetting::Description(text) if text.chars().count() > DESCRIPTION_MAX => {
            return Err(ApiError::bad_request(format!(
                "description is longer than {DESCRIPTION_MAX} characters"
            )));
        }
        GroupSetting::Ephemeral(seconds) if !EPHEMERAL_SECONDS.contains(seconds) => {
            return Err(ApiError::bad_request(
                "ephemeralSeconds must be 0, 86400, 604800 or 7776000",
            ));
        }
        _ => {}
    }
    Ok((jid, SettingChange { setting, by }))
}

/// The member a group control names (`by`), if it names one.
fn member_phone(by: Option<&str>) -> Result<Option<PhoneNumber>, ApiError> {
    Ok(by.map(|by| PhoneNumber::parse("by", by)).transpose()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault_of(op: &str, count: Option<u32>) -> SandboxFault {
        SandboxFault {
            client_id: "c".into(),
            op: op.into(),
            count,
        }
    }

    #[test]
    fn faults_take_known_ops_and_bounded_counts() {
        assert_eq!(fault(&fault_of("send", None)).unwrap(), 1);
        assert_eq!(fault(&fault_of("drop", Some(10_000))).unwrap(), 10_000);
        for bad in [
            fault_of("melt", None),
            fault_of("send", Some(0)),
            fault_of("send", Some(10_001)),
        ] {
            assert_eq!(fault(&bad).unwrap_err().status, 400);
        }
    }

    #[test]
    fn avatars_are_none_hidden_or_an_image() {
        use base64::Engine;
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n");
        let text = base64::engine::general_purpose::STANDARD.encode(b"hello");
        for ok in [None, Some("none"), Some("hidden"), Some(png.as_str())] {
            assert!(avatar(ok).is_ok(), "{ok:?}");
        }
        for bad in [Some("not base64!"), Some(text.as_str())] {
            assert_eq!(avatar(bad).unwrap_err().status, 400, "{bad:?}");
        }
    }

    #[test]
    fn since_is_rfc_3339_or_nothing() {
        assert_eq!(since(None).unwrap(), None);
        assert_eq!(since(Some("  ")).unwrap(), None);
        assert!(since(Some("2026-11-27T10:00:00Z")).unwrap().is_some());
        assert_eq!(since(Some("yesterday")).unwrap_err().status, 400);
    }
}
