//! The checks of the `/sandbox/*` request bodies, whichever test network is
//! behind the routes: one contract, one set of 400s.
use chrono::{DateTime, Utc};
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::{
    SandboxEnterCode, SandboxFault, SandboxGroupRequest, SandboxGroupSubject,
};
use parley_model::address::{Jid, PhoneNumber};
use parley_model::recipients::{GROUP_SERVER, Recipient};
use parley_network::test_network::NewGroup;

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

/// The group and its new subject of a `/sandbox/groups/subject` request.
pub fn group_subject(body: SandboxGroupSubject) -> Result<(Jid, String), ApiError> {
    let jid = match Recipient::parse("jid", body.jid.trim()) {
        Ok(g @ Recipient::Group(_)) if body.jid.contains('@') => g.jid(),
        _ => {
            return Err(ApiError::bad_request(format!(
                "jid must be a group JID ending in @{GROUP_SERVER}"
            )));
        }
    };
    let subject = parley_api::extension::subject(Some(body.subject))?;
    Ok((jid, subject))
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
