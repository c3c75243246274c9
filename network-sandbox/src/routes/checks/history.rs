//! The `/sandbox/history` body's checks: a phone's past chats and labels.
use chrono::{DateTime, Utc};
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::{SandboxHistory, SandboxPastLabel, SandboxPastMessage};
use parley_model::address::{Jid, MessageId, PhoneNumber};
use parley_model::recipients::{GROUP_SERVER, Recipient};

use super::super::messages::MEDIA_TYPES;

/// Most messages of one phone's history.
pub const HISTORY_MESSAGES_MAX: usize = 1_000;

/// Longest text of a message of history (bytes).
pub const HISTORY_BODY_MAX: usize = 65_536;

/// A `/sandbox/history` body, checked and completed: the phone in digits,
/// each chat as a JID, `from` kept only where it names a group's member,
/// `type` set (`text` when not given; a file's `data` and `mimeType`
/// required, and kept only for a file), `at` in RFC 3339 (now when not
/// given), every `messageId` set (a fresh one when not given) and none
/// twice.
pub fn history(body: SandboxHistory) -> Result<SandboxHistory, ApiError> {
    let phone = PhoneNumber::parse("phone", &body.phone)?;
    if body.messages.len() > HISTORY_MESSAGES_MAX {
        return Err(ApiError::bad_request(format!(
            "messages has more than {HISTORY_MESSAGES_MAX} items"
        )));
    }
    let now = Utc::now();
    let mut seen = std::collections::HashSet::new();
    let mut messages = Vec::with_capacity(body.messages.len());
    for (i, m) in body.messages.into_iter().enumerate() {
        let m = past_message(&format!("messages[{i}]"), m, &phone, now)?;
        let id = m.message_id.clone().unwrap_or_default();
        if !seen.insert(id.clone()) {
            return Err(ApiError::bad_request(format!(
                "messages[{i}].messageId {id} is given twice"
            )));
        }
        messages.push(m);
    }
    let labels = past_labels(body.labels, &phone)?;
    Ok(SandboxHistory {
        phone: phone.into_string(),
        messages,
        labels,
    })
}

/// A chat of a phone's past: a contact's phone (another than `phone`) or a
/// group JID, as its JID; why not, after the field's name.
fn past_chat(raw: &str, phone: &PhoneNumber) -> Result<Jid, String> {
    let raw = raw.trim();
    if raw.contains('@') {
        return match Recipient::parse("chat", raw) {
            Ok(g @ Recipient::Group(_)) => Ok(g.jid()),
            _ => Err("chat must be a phone number or a group JID".into()),
        };
    }
    let contact = PhoneNumber::parse("chat", raw).map_err(|e| e.to_string())?;
    if contact == *phone {
        return Err("chat must be another phone than the history's own".into());
    }
    Ok(Jid::phone(&contact))
}

/// Most labels of one phone's past.
pub const HISTORY_LABELS_MAX: usize = 100;

/// Most chats one label of a phone's past is on.
pub const HISTORY_LABEL_CHATS_MAX: usize = 1_000;

/// The labels of a phone's past: ids distinct, names and colours as a
/// label takes them, each chat as a JID (given twice: once).
fn past_labels(
    labels: Vec<SandboxPastLabel>,
    phone: &PhoneNumber,
) -> Result<Vec<SandboxPastLabel>, ApiError> {
    use parley_model::outgoing::Label;
    if labels.len() > HISTORY_LABELS_MAX {
        return Err(ApiError::bad_request(format!(
            "labels has more than {HISTORY_LABELS_MAX} items"
        )));
    }
    let mut seen = std::collections::HashSet::new();
    let mut checked = Vec::with_capacity(labels.len());
    for (i, label) in labels.into_iter().enumerate() {
        let at = |e: parley_model::Invalid| ApiError::bad_request(format!("labels[{i}].{e}"));
        let label_id = Label::parse_id("labelId", Some(&label.label_id)).map_err(at)?;
        if !seen.insert(label_id.clone()) {
            return Err(ApiError::bad_request(format!(
                "labels[{i}].labelId {label_id} is given twice"
            )));
        }
        let name = Label::parse_name(Some(&label.name))
            .map_err(at)?
            .unwrap_or_default();
        let color = Label::parse_color(Some(label.color))
            .map_err(at)?
            .unwrap_or_default();
        if label.chats.len() > HISTORY_LABEL_CHATS_MAX {
            return Err(ApiError::bad_request(format!(
                "labels[{i}].chats has more than {HISTORY_LABEL_CHATS_MAX} items"
            )));
        }
        let mut chats: Vec<String> = Vec::with_capacity(label.chats.len());
        for (j, chat) in label.chats.iter().enumerate() {
            let chat = past_chat(chat, phone)
                .map_err(|e| ApiError::bad_request(format!("labels[{i}].chats[{j}]: {e}")))?;
            if !chats.iter().any(|c| c == chat.as_str()) {
                chats.push(chat.into_string());
            }
        }
        checked.push(SandboxPastLabel {
            label_id,
            name,
            color: i64::from(color),
            chats,
        });
    }
    Ok(checked)
}

fn past_message(
    at: &str,
    m: SandboxPastMessage,
    phone: &PhoneNumber,
    now: DateTime<Utc>,
) -> Result<SandboxPastMessage, ApiError> {
    let bad = |why: String| ApiError::bad_request(format!("{at}.{why}"));
    let kind = m
        .kind
        .as_deref()
        .map(str::trim)
        .unwrap_or("text")
        .to_string();
    let file = match kind.as_str() {
        "text" => {
            if m.body.trim().is_empty() {
                return Err(bad(format!("body must be 1 to {HISTORY_BODY_MAX} bytes")));
            }
            None
        }
        k if MEDIA_TYPES.contains(&k) => Some(past_file(&m).map_err(bad)?),
        other => {
            return Err(bad(format!(
                "type {other:?}: history takes text, image, video, audio, document and sticker"
            )));
        }
    };
    if m.body.len() > HISTORY_BODY_MAX {
        return Err(bad(format!(
            "body must be at most {HISTORY_BODY_MAX} bytes"
        )));
    }
    let chat = past_chat(&m.chat, phone).map_err(bad)?;
    let is_group = chat.as_str().ends_with(&format!("@{GROUP_SERVER}"));
    let from = match (is_group, m.from_me) {
        (true, false) => {
            let raw = m.from.as_deref().unwrap_or_default();
            let member = PhoneNumber::parse("from", raw).map_err(|e| bad(e.to_string()))?;
            Some(member.into_string())
        }
        _ => None,
    };
    let when = match m.at.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        None => now,
        Some(raw) => DateTime::parse_from_rfc3339(raw)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| bad("at must be an RFC 3339 timestamp".into()))?,
    };
    if when > now + chrono::Duration::seconds(60) {
        return Err(bad("at must not be in the future".into()));
    }
    let id = match m.message_id.as_deref() {
        None => parley_network::outgoing::new_message_id(),
        Some(raw) => MessageId::parse("messageId", Some(raw)).map_err(|e| bad(e.to_string()))?,
    };
    let (data, mime_type, file_name) = match file {
        Some(f) => (Some(f.data), Some(f.mime_type), m.file_name),
        None => (None, None, None),
    };
    Ok(SandboxPastMessage {
        chat: chat.into_string(),
        from_me: m.from_me,
        from,
        kind: Some(kind),
        body: m.body,
        data,
        mime_type,
        file_name,
        at: Some(when.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        message_id: Some(id.into_string()),
    })
}

/// A file of a phone's past, checked: its bytes (base64, as given) and
/// MIME type.
struct PastFile {
    data: String,
    mime_type: String,
}

/// The file of a past message of a file's type: `data` base64 of at least
/// one byte, `mimeType` given; why not, after the field's name.
fn past_file(m: &SandboxPastMessage) -> Result<PastFile, String> {
    let data = m.data.as_deref().map(str::trim).unwrap_or_default();
    if data.is_empty() {
        return Err("data is required for a file (base64)".into());
    }
    match crate::history::decoded_file(data) {
        Some(bytes) if !bytes.is_empty() => {}
        _ => return Err("data must be base64 of at least one byte".into()),
    }
    let mime_type = m.mime_type.as_deref().map(str::trim).unwrap_or_default();
    if mime_type.is_empty() {
        return Err("mimeType is required for a file".into());
    }
    Ok(PastFile {
        data: data.to_string(),
        mime_type: mime_type.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn past(chat: &str) -> SandboxPastMessage {
        SandboxPastMessage {
            chat: chat.into(),
            body: "hello".into(),
            ..SandboxPastMessage::default()
        }
    }

    #[test]
    fn a_file_of_the_past_keeps_its_data_and_a_text_none() {
        let file = SandboxPastMessage {
            kind: Some(" document ".into()),
            body: String::new(),
            data: Some(" aGVsbG8= ".into()),
            mime_type: Some("application/pdf".into()),
            file_name: Some("a.pdf".into()),
            ..past("4915100000002")
        };
        let text = SandboxPastMessage {
            data: Some("aGVsbG8=".into()),
            mime_type: Some("text/plain".into()),
            file_name: Some("a.txt".into()),
            ..past("4915100000003")
        };
        let body = SandboxHistory {
            phone: "4915100000001".into(),
            messages: vec![file, text],
            labels: Vec::new(),
        };
        let done = history(body).unwrap();
        let (file, text) = (&done.messages[0], &done.messages[1]);
        assert_eq!(file.kind.as_deref(), Some("document"));
        assert_eq!(
            (
                file.data.as_deref(),
                file.mime_type.as_deref(),
                file.file_name.as_deref()
            ),
            (Some("aGVsbG8="), Some("application/pdf"), Some("a.pdf"))
        );
        assert_eq!(
            crate::history::decoded_file(file.data.as_deref().unwrap()).unwrap(),
            b"hello"
        );
        assert_eq!(text.kind.as_deref(), Some("text"));
        assert_eq!(
            (&text.data, &text.mime_type, &text.file_name),
            (&None, &None, &None)
        );
    }

    #[test]
    fn a_history_is_completed_and_its_mistakes_named() {
        let body = SandboxHistory {
            phone: "+4915100000001".into(),
            messages: vec![
                past("4915100000002"),
                SandboxPastMessage {
                    from: Some("4915100000003".into()),
                    at: Some("2026-01-02T03:04:05+01:00".into()),
                    message_id: Some("ABC".into()),
                    ..past("120363000000000001@g.us")
                },
            ],
            labels: Vec::new(),
        };
        let done = history(body).unwrap();
        assert_eq!(done.phone, "4915100000001");
        assert_eq!(done.messages[0].chat, "4915100000002@s.whatsapp.net");
        assert!(
            done.messages[0]
                .message_id
                .as_deref()
                .unwrap()
                .starts_with("3EB0")
        );
        assert_eq!(done.messages[0].kind.as_deref(), Some("text"));
        assert_eq!(done.messages[1].from.as_deref(), Some("4915100000003"));
        assert_eq!(
            done.messages[1].at.as_deref(),
            Some("2026-01-02T02:04:05.000Z")
        );
        let with = |m: SandboxPastMessage| SandboxHistory {
            phone: "4915100000001".into(),
            messages: vec![m],
            labels: Vec::new(),
        };
        for (bad, names) in [
            (past("4915100000001"), "messages[0].chat"),
            (past("nobody@lid"), "messages[0].chat"),
            (past("120363000000000001@g.us"), "messages[0].from"),
            (
                SandboxPastMessage {
                    kind: Some("location".into()),
                    ..past("4915100000002")
                },
                "messages[0].type",
            ),
            (
                SandboxPastMessage {
                    kind: Some("image".into()),
                    mime_type: Some("image/png".into()),
                    ..past("4915100000002")
                },
                "messages[0].data",
            ),
            (
                SandboxPastMessage {
                    kind: Some("image".into()),
                    data: Some("not base64!".into()),
                    mime_type: Some("image/png".into()),
                    ..past("4915100000002")
                },
                "messages[0].data",
            ),
            (
                SandboxPastMessage {
                    kind: Some("document".into()),
                    data: Some("aGVsbG8=".into()),
                    ..past("4915100000002")
                },
                "messages[0].mimeType",
            ),
            (
                SandboxPastMessage {
                    body: " ".into(),
                    ..past("4915100000002")
                },
                "body",
            ),
            (
                SandboxPastMessage {
                    at: Some("2999-01-01T00:00:00Z".into()),
                    ..past("4915100000002")
                },
                "future",
            ),
            (
                SandboxPastMessage {
                    message_id: Some("a b".into()),
                    ..past("4915100000002")
                },
                "messageId",
            ),
        ] {
            let e = history(with(bad.clone())).unwrap_err();
            assert_eq!(e.status, 400, "{bad:?}");
            assert!(e.message.contains(names), "{bad:?}: {}", e.message);
        }
        let twice = SandboxPastMessage {
            message_id: Some("X1".into()),
            ..past("4915100000002")
        };
        let body = SandboxHistory {
            phone: "4915100000001".into(),
            messages: vec![twice.clone(), twice],
            labels: Vec::new(),
        };
        assert!(history(body).unwrap_err().message.contains("twice"));
    }

    #[test]
    fn a_historys_labels_are_checked_and_their_chats_named_as_jids() {
        let label = |id: &str| SandboxPastLabel {
            label_id: id.into(),
            name: " Paid ".into(),
            color: 3,
            chats: vec![
                "+4915100000002".into(),
                "120363000000000001@g.us".into(),
                "4915100000002".into(),
            ],
        };
        let with = |labels: Vec<SandboxPastLabel>| SandboxHistory {
            phone: "4915100000001".into(),
            messages: Vec::new(),
            labels,
        };
        let done = history(with(vec![label("1"), label("2")])).unwrap();
        assert_eq!(
            done.labels[0],
            SandboxPastLabel {
                label_id: "1".into(),
                name: "Paid".into(),
                color: 3,
                chats: vec![
                    "4915100000002@s.whatsapp.net".into(),
                    "120363000000000001@g.us".into(),
                ],
            }
        );
        assert_eq!(done.contacts(), ["4915100000002"].into_iter().collect());
        for (bad, names) in [
            (
                vec![label("1"), label("1")],
                "labels[1].labelId 1 is given twice",
            ),
            (vec![label("a b")], "labels[0].labelId"),
            (
                vec![SandboxPastLabel {
                    name: " ".into(),
                    ..label("1")
                }],
                "labels[0].name",
            ),
            (
                vec![SandboxPastLabel {
                    color: 20,
                    ..label("1")
                }],
                "labels[0].color",
            ),
            (
                vec![SandboxPastLabel {
                    chats: vec!["nobody".into()],
                    ..label("1")
                }],
                "labels[0].chats[0]",
            ),
            (
                (0..=HISTORY_LABELS_MAX)
                    .map(|i| label(&i.to_string()))
                    .collect(),
                "labels has more than",
            ),
        ] {
            let e = history(with(bad)).unwrap_err();
            assert_eq!(e.status, 400, "{names}");
            assert!(e.message.contains(names), "{names}: {}", e.message);
        }
    }
}
