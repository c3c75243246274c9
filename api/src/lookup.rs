//! Contact and group request fields validated before the network is asked (a
//! broken one is a 400 naming the field): users, numbers, group JIDs,
//! subjects, participant lists, member actions, query-string booleans.
use parley_contract::error::ApiError;
use parley_contract::queries::MemberAction;
use parley_model::address::{Jid, PhoneNumber};
use parley_model::recipients::{GROUP_SERVER, Recipient};

/// Longest group subject (characters).
pub const SUBJECT_MAX: usize = 100;
/// Most participants in one group request.
pub const PARTICIPANTS_MAX: usize = 256;

/// A user (LID user-part, `+phone`, user JID) or, with `groups`, a group JID.
pub fn who(field: &str, value: Option<&str>, groups: bool) -> Result<Recipient, ApiError> {
    let parsed = Recipient::parse(field, value.unwrap_or_default())?;
    if parsed.is_group() && !groups {
        return Err(ApiError::bad_request(format!(
            "{field} must name a user, not a group"
        )));
    }
    Ok(parsed)
}

/// A phone number with country code: digits, with `+`, spaces, dashes, dots
/// and parentheses allowed around them.
pub fn number(field: &str, value: Option<&str>) -> Result<Option<PhoneNumber>, ApiError> {
    let Some(raw) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let digits: String = raw
        .strip_prefix('+')
        .unwrap_or(raw)
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
        .collect();
    match PhoneNumber::from_digits(&digits) {
        Some(number) => Ok(Some(number)),
        None => Err(ApiError::bad_request(format!(
            "{field} must be a phone number with country code: 8 to 15 digits"
        ))),
    }
}

/// A group JID, `<id>@g.us`.
pub fn group_jid(value: Option<&str>) -> Result<Jid, ApiError> {
    let raw = value.map(str::trim).unwrap_or_default();
    if raw.is_empty() {
        return Err(ApiError::bad_request("groupJid is required"));
    }
    match Recipient::parse("groupJid", raw) {
        Ok(g @ Recipient::Group(_)) if raw.contains('@') => Ok(g.jid()),
        _ => Err(ApiError::bad_request(format!(
            "groupJid must be a group JID ending in @{GROUP_SERVER}"
        ))),
    }
}

/// A group subject: 1 to [`SUBJECT_MAX`] characters.
pub fn subject(value: Option<String>) -> Result<String, ApiError> {
    let subject = value.map(|s| s.trim().to_string()).unwrap_or_default();
    if subject.is_empty() {
        return Err(ApiError::bad_request("subject is required"));
    }
    if subject.chars().count() > SUBJECT_MAX {
        return Err(ApiError::bad_request(format!(
            "subject is longer than {SUBJECT_MAX} characters"
        )));
    }
    Ok(subject)
}

/// 1 to [`PARTICIPANTS_MAX`] users, duplicates dropped, order kept.
pub fn participants(value: Option<Vec<String>>) -> Result<Vec<Recipient>, ApiError> {
    let raw = value.unwrap_or_default();
    if raw.is_empty() {
        return Err(ApiError::bad_request("participants must not be empty"));
    }
    if raw.len() > PARTICIPANTS_MAX {
        return Err(ApiError::bad_request(format!(
            "participants has more than {PARTICIPANTS_MAX} items"
        )));
    }
    let mut all: Vec<Recipient> = Vec::with_capacity(raw.len());
    for one in &raw {
        let user = who("participants", Some(one), false)?;
        if !all.contains(&user) {
            all.push(user);
        }
    }
    Ok(all)
}

/// `add`, `remove`, `promote` or `demote`.
pub fn action(value: Option<&str>) -> Result<MemberAction, ApiError> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Err(ApiError::bad_request("action is required")),
        Some(raw) => MemberAction::parse(raw).ok_or_else(|| {
            ApiError::bad_request("action must be one of add, remove, promote, demote")
        }),
    }
}

/// A boolean in a query string: `true`/`false`/`1`/`0` (any case); absent or
/// empty is `default`.
pub fn query_flag(field: &str, value: Option<&str>, default: bool) -> Result<bool, ApiError> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") => Ok(default),
        Some("true" | "1") => Ok(true),
        Some("false" | "0") => Ok(false),
        Some(_) => Err(ApiError::bad_request(format!(
            "{field} must be true or false"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status<T: std::fmt::Debug>(r: Result<T, ApiError>) -> u16 {
        r.unwrap_err().status
    }

    #[test]
    fn users_and_groups() {
        assert_eq!(
            who("jid", Some("+4915100000001"), false).unwrap(),
            Recipient::Phone(PhoneNumber::from_digits("4915100000001").unwrap())
        );
        assert_eq!(
            who("jid", Some("123456789012345@lid"), false).unwrap(),
            Recipient::Lid("123456789012345".into())
        );
        assert!(who("jid", Some("120363000000000001@g.us"), true).is_ok());
        assert_eq!(
            status(who("jid", Some("120363000000000001@g.us"), false)),
            400
        );
        assert_eq!(status(who("jid", None, true)), 400);
        assert_eq!(status(who("jid", Some("abc"), true)), 400);
    }

    #[test]
    fn numbers_lose_their_punctuation() {
        assert_eq!(
            number("number", Some("+49 151-0000 (0001)"))
                .unwrap()
                .as_ref()
                .map(PhoneNumber::as_str),
            Some("4915100000001")
        );
        assert_eq!(number("number", None).unwrap(), None);
        assert_eq!(number("number", Some("  ")).unwrap(), None);
        for bad in [
            "123",
            "+49a1510000001",
            "1234567890123456",
            "++4915100000001",
        ] {
            assert_eq!(status(number("number", Some(bad))), 400, "{bad}");
        }
    }

    #[test]
    fn group_jids_need_the_group_server() {
        assert_eq!(
            group_jid(Some(" 120363000000000001@g.us "))
                .unwrap()
                .as_str(),
            "120363000000000001@g.us"
        );
        for bad in [
            None,
            Some(""),
            Some("120363000000000001"),
            Some("1@lid"),
            Some("x@g.us"),
        ] {
            assert_eq!(status(group_jid(bad)), 400, "{bad:?}");
        }
    }

    #[test]
    fn subjects_participants_and_actions() {
        assert_eq!(subject(Some(" Team ".into())).unwrap(), "Team");
        assert_eq!(status(subject(None)), 400);
        assert_eq!(status(subject(Some("x".repeat(SUBJECT_MAX + 1)))), 400);
        let p = participants(Some(vec![
            "+4915100000001".into(),
            "+4915100000001".into(),
            "123456789012345".into(),
        ]))
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(status(participants(None)), 400);
        assert_eq!(status(participants(Some(vec![]))), 400);
        assert_eq!(status(participants(Some(vec!["nope".into()]))), 400);
        assert_eq!(
            status(participants(Some(vec!["120363000000000001@g.us".into()]))),
            400
        );
        assert_eq!(
            status(participants(Some(vec![
                "+4915100000001".into();
                PARTICIPANTS_MAX + 1
            ]))),
            400
        );
        assert_eq!(action(Some("Promote")).unwrap(), MemberAction::Promote);
        assert_eq!(status(action(None)), 400);
        assert_eq!(status(action(Some("kick"))), 400);
    }

    #[test]
    fn query_flags() {
        assert!(query_flag("preview", None, true).unwrap());
        assert!(!query_flag("preview", Some("FALSE"), true).unwrap());
        assert!(query_flag("refresh", Some("1"), false).unwrap());
        assert_eq!(status(query_flag("refresh", Some("yes"), false)), 400);
    }
}
