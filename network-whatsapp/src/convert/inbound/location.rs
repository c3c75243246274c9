//! Places and people: a pinned or live location, a contact card (several cards
//! in one message become one vCard text, cards one after the other).
use whatsapp_rust::waproto::whatsapp as wa;

use parley_model::inbound::Content;

pub(super) fn content(base: &wa::Message) -> Option<Content> {
    if let Some(l) = base.location_message.as_option() {
        return Some(Content::Location {
            latitude: l.degrees_latitude.unwrap_or(0.0),
            longitude: l.degrees_longitude.unwrap_or(0.0),
            name: l.name.clone().unwrap_or_default(),
            address: l.address.clone().unwrap_or_default(),
            live: l.is_live.unwrap_or(false),
        });
    }
    if let Some(l) = base.live_location_message.as_option() {
        return Some(Content::Location {
            latitude: l.degrees_latitude.unwrap_or(0.0),
            longitude: l.degrees_longitude.unwrap_or(0.0),
            name: l.caption.clone().unwrap_or_default(),
            address: String::new(),
            live: true,
        });
    }
    if let Some(c) = base.contact_message.as_option() {
        return Some(Content::Contact {
            display_name: c.display_name.clone().unwrap_or_default(),
            vcard: c.vcard.clone().unwrap_or_default(),
        });
    }
    if let Some(list) = base.contacts_array_message.as_option() {
        let display_name = list
            .display_name
            .clone()
            .filter(|n| !n.is_empty())
            .or_else(|| list.contacts.first().and_then(|c| c.display_name.clone()))
            .unwrap_or_default();
        let vcard = list
            .contacts
            .iter()
            .filter_map(|c| c.vcard.as_deref())
            .map(|v| v.trim_end_matches(['\r', '\n']))
            .collect::<Vec<_>>()
            .join("\n");
        return Some(Content::Contact {
            display_name,
            vcard,
        });
    }
    None
}
