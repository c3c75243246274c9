//! What the simulated network records of each send in its outbox: the kind and a
//! JSON payload (text, caption, file name, mime type, byte size and SHA-256 of
//! media, poll options, buttons, coordinates, vCard, the target of a reaction
//! or edit, quoted id, mentions).
use parley_model::outgoing::Content;
use serde_json::{Map, Value, json};

use parley_model::outgoing::STATUS_FONTS;
use parley_network::{MediaFile, MediaKind, MessageId, Outgoing, StatusOut};

/// Adds a status update's audience (its JIDs, sorted) and, to a text
/// status, its background (`#AARRGGBB`) and font (by name) to `payload`.
pub fn status(payload: &mut Value, kind: &str, status: &StatusOut) {
    let Some(p) = payload.as_object_mut() else {
        return;
    };
    let mut audience: Vec<&str> = status.audience.iter().map(|j| j.as_str()).collect();
    audience.sort_unstable();
    p.insert("audience".into(), json!(audience));
    if kind != "text" {
        return;
    }
    if let Some(argb) = status.background_argb {
        p.insert("backgroundColor".into(), json!(format!("#{argb:08X}")));
    }
    if let Some(font) = status.font
        && let Some((name, _)) = STATUS_FONTS.iter().find(|(_, n)| *n == font)
    {
        p.insert("font".into(), json!(name));
    }
}

/// The outbox kind and payload of a message; a file is read through once,
/// for its digest, as the network would to upload it.
pub async fn message(msg: &Outgoing) -> std::io::Result<(&'static str, Value)> {
    let (kind, mut payload) = match &msg.content {
        Content::Text { body } => ("text", json!({ "body": body })),
        Content::Media(file) => (file.kind.as_str(), media(file).await?),
        Content::Poll {
            name,
            options,
            selectable_count,
        } => (
            "poll",
            json!({ "name": name, "options": options, "selectableCount": selectable_count }),
        ),
        Content::Interactive {
            body,
            footer,
            buttons,
        } => {
            let mut p = json!({ "body": body, "buttons": buttons });
            put(&mut p, "footer", footer.as_deref());
            ("interactive", p)
        }
        Content::Location {
            latitude,
            longitude,
            name,
            address,
        } => {
            let mut p = json!({ "latitude": latitude, "longitude": longitude });
            put(&mut p, "name", name.as_deref());
            put(&mut p, "address", address.as_deref());
            ("location", p)
        }
        Content::Contact {
            display_name,
            vcard,
        } => (
            "contact",
            json!({ "displayName": display_name, "vcard": vcard }),
        ),
        Content::Reaction {
            target_id,
            emoji,
            target_from_me,
        } => {
            let fields = json!({ "emoji": emoji, "targetFromMe": target_from_me });
            ("reaction", targeted(target_id.as_str(), fields))
        }
        Content::Edit { target_id, body } => (
            "edit",
            targeted(target_id.as_str(), json!({ "body": body })),
        ),
    };
    put(
        &mut payload,
        "quotedMessageId",
        msg.quoted_id.as_ref().map(MessageId::as_str),
    );
    if !msg.mentions.is_empty()
        && let Some(map) = payload.as_object_mut()
    {
        map.insert("mentions".into(), json!(msg.mentions));
    }
    Ok((kind, payload))
}

async fn media(file: &MediaFile) -> std::io::Result<Value> {
    let info = &file.info;
    let mut p = json!({
        "mimeType": info.mime_type,
        "bytes": file.data.len(),
        "sha256": hex::encode(file.data.sha256().await?),
    });
    for (key, value) in [("fileName", &info.file_name), ("caption", &info.caption)] {
        put(&mut p, key, Some(value.as_str()).filter(|v| !v.is_empty()));
    }
    if file.kind == MediaKind::Audio
        && let Some(map) = p.as_object_mut()
    {
        map.insert("ptt".into(), Value::Bool(info.ptt));
    }
    if info.view_once
        && let Some(map) = p.as_object_mut()
    {
        map.insert("viewOnce".into(), Value::Bool(true));
    }
    Ok(p)
}

/// Adds `key` when `value` is present.
fn put(payload: &mut Value, key: &str, value: Option<&str>) {
    if let (Some(map), Some(value)) = (payload.as_object_mut(), value) {
        map.insert(key.into(), Value::String(value.into()));
    }
}

/// Payload of an update that targets an earlier message.
pub fn targeted(target_id: &str, fields: Value) -> Value {
    let mut map = match fields {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.insert("targetId".into(), Value::String(target_id.into()));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use parley_contract::spool::FileBody;
    use parley_model::media::MediaInfo;
    use parley_model::outgoing::Button;

    use super::*;

    fn outgoing(content: Content<MediaFile>) -> Outgoing {
        Outgoing {
            to: parley_network::Jid::parse("123456789012345@lid").unwrap(),
            content,
            quoted_id: None,
            mentions: vec![],
            status: None,
        }
    }

    #[tokio::test]
    async fn text_with_envelope() {
        let mut msg = outgoing(Content::Text {
            body: "hi @491511".into(),
        });
        msg.quoted_id = MessageId::new("3EB0AB");
        msg.mentions = vec!["4915112345678".into()];
        assert_eq!(
            message(&msg).await.unwrap(),
            (
                "text",
                json!({"body": "hi @491511", "quotedMessageId": "3EB0AB", "mentions": ["4915112345678"]})
            )
        );
    }

    #[tokio::test]
    async fn media_carries_size_and_digest_never_the_bytes() {
        let file = MediaFile {
            kind: MediaKind::Audio,
            data: FileBody::from_bytes(&b"abc"[..]),
            info: MediaInfo {
                mime_type: "audio/ogg".into(),
                file_name: "v.ogg".into(),
                caption: String::new(),
                ptt: true,
                view_once: false,
            },
        };
        let (kind, payload) = message(&outgoing(Content::Media(file))).await.unwrap();
        assert_eq!(kind, "audio");
        assert_eq!(
            payload,
            json!({
                "mimeType": "audio/ogg",
                "bytes": 3,
                "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                "fileName": "v.ogg",
                "ptt": true,
            })
        );
    }

    #[tokio::test]
    async fn polls_buttons_locations_contacts() {
        let (kind, p) = message(&outgoing(Content::Poll {
            name: "Lunch?".into(),
            options: vec!["Pizza".into(), "Sushi".into()],
            selectable_count: 1,
        }))
        .await
        .unwrap();
        assert_eq!(kind, "poll");
        assert_eq!(
            p,
            json!({"name": "Lunch?", "options": ["Pizza", "Sushi"], "selectableCount": 1})
        );
        let (kind, p) = message(&outgoing(Content::Interactive {
            body: "Pick".into(),
            footer: None,
            buttons: vec![Button::CtaUrl {
                display_text: "Open".into(),
                url: "https://example.com".into(),
            }],
        }))
        .await
        .unwrap();
        assert_eq!(kind, "interactive");
        assert_eq!(
            p["buttons"],
            json!([{"type": "cta_url", "displayText": "Open", "url": "https://example.com"}])
        );
        let (kind, p) = message(&outgoing(Content::Location {
            latitude: 52.5,
            longitude: -13.25,
            name: Some("Office".into()),
            address: None,
        }))
        .await
        .unwrap();
        assert_eq!(
            (kind, p),
            (
                "location",
                json!({"latitude": 52.5, "longitude": -13.25, "name": "Office"})
            )
        );
        let (kind, _) = message(&outgoing(Content::Contact {
            display_name: "Ann".into(),
            vcard: "BEGIN:VCARD\nEND:VCARD".into(),
        }))
        .await
        .unwrap();
        assert_eq!(kind, "contact");
    }

    #[tokio::test]
    async fn reactions_and_edits_name_their_target() {
        let target_id = MessageId::new("3EB0").unwrap();
        let reaction = outgoing(Content::Reaction {
            target_id: target_id.clone(),
            emoji: "👍".into(),
            target_from_me: false,
        });
        assert_eq!(
            message(&reaction).await.unwrap(),
            (
                "reaction",
                json!({"emoji": "👍", "targetFromMe": false, "targetId": "3EB0"})
            )
        );
        let edit = outgoing(Content::Edit {
            target_id,
            body: "fixed".into(),
        });
        assert_eq!(
            message(&edit).await.unwrap(),
            ("edit", json!({"body": "fixed", "targetId": "3EB0"}))
        );
    }
}
