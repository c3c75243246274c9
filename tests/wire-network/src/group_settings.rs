//! A group's own settings (`w:g2` requests to the group): its description,
//! announcement mode (only admins send), locked mode (only admins change the
//! group's subject, description and disappearing messages), and
//! disappearing messages. Each change reaches the members' devices as a
//! `w:gp2` notification; the group's metadata shows the settings.
//!
//! Taken from wacore 0.7 (`iq/groups.rs`: `SetGroupDescriptionIq`,
//! `SetGroupLockedIq`, `SetGroupAnnouncementIq`, `SetGroupEphemeralIq`, and
//! the `<group>` parser; `stanza/groups.rs`: the notification's actions) and
//! whatsapp-rust 0.7 (`features/groups.rs`: `set_description` and its
//! `prev` token, 409 a conflict). Our choices, where the sources do not say:
//! who may change what (announcement and locked mode: admins; the rest: any
//! member unless the group is locked) answered 401 otherwise, as the
//! member changes are; disappearing messages only for the durations the
//! apps offer (1, 7 or 90 days), 400 otherwise.
use whatsapp_rust::wacore_binary::node::Node;

use crate::groups::Group;
use crate::nodes::{attr, child, element, leaf_bytes, now, text};

/// Durations the apps offer for disappearing messages, in seconds.
pub const EPHEMERAL_DURATIONS: [u32; 3] = [86_400, 604_800, 7_776_000];

/// The longest description the network takes, in characters.
const DESCRIPTION_MAX: usize = 2_048;

/// A group's description: its id (the `prev` token of the next change), its
/// text, who set it and when.
#[derive(Debug, Clone)]
pub struct Description {
    pub id: String,
    pub text: String,
    pub by: String,
    pub t: u64,
}

/// The settings of a group the server keeps.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub description: Option<Description>,
    pub announce: bool,
    pub locked: bool,
    /// Seconds; 0: messages do not disappear.
    pub ephemeral: u32,
}

/// A change a member asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A new description (`None`: removed) under a new `id`, replacing the
    /// one named `prev`.
    Description {
        id: String,
        prev: Option<String>,
        text: Option<String>,
    },
    Announce(bool),
    Locked(bool),
    Ephemeral(u32),
}

impl Change {
    /// The change an IQ to a group asks for, if it asks for one.
    pub fn requested(iq: &Node) -> Option<Change> {
        if let Some(d) = child(iq, "description") {
            let removed = attr(d, "delete").as_deref() == Some("true");
            return Some(Change::Description {
                id: attr(d, "id").unwrap_or_default(),
                prev: attr(d, "prev"),
                text: (!removed).then(|| child(d, "body").and_then(text).unwrap_or_default()),
            });
        }
        let toggles = [
            ("announcement", Change::Announce(true)),
            ("not_announcement", Change::Announce(false)),
            ("locked", Change::Locked(true)),
            ("unlocked", Change::Locked(false)),
            ("not_ephemeral", Change::Ephemeral(0)),
        ];
        if let Some((_, change)) = toggles
            .into_iter()
            .find(|(tag, _)| child(iq, tag).is_some())
        {
            return Some(change);
        }
        let seconds = child(iq, "ephemeral").and_then(|e| attr(e, "expiration"))?;
        Some(Change::Ephemeral(seconds.parse().unwrap_or(u32::MAX)))
    }

    /// Whether only an admin may make this change to `group`.
    pub fn needs_admin(&self, group: &Group) -> bool {
        matches!(self, Change::Announce(_) | Change::Locked(_)) || group.settings.locked
    }

    /// Applies the change by `by` to `group`: the notification's action, or
    /// the error (code, text) the request gets.
    pub fn apply(self, group: &mut Group, by: &str) -> Result<Node, (u16, &'static str)> {
        let s = &mut group.settings;
        Ok(match self {
            Change::Description { id, prev, text } => {
                if prev != s.description.as_ref().map(|d| d.id.clone()) {
                    return Err((409, "conflict"));
                }
                if id.is_empty()
                    || text
                        .as_ref()
                        .is_some_and(|t| t.chars().count() > DESCRIPTION_MAX)
                {
                    return Err((400, "bad-request"));
                }
                s.description = text.clone().map(|text| Description {
                    id: id.clone(),
                    text,
                    by: by.to_string(),
                    t: now(),
                });
                let body = match text {
                    Some(t) => leaf_bytes("body", t.into_bytes()),
                    None => element("delete", &[], vec![]),
                };
                element("description", &[("id", id)], vec![body])
            }
            Change::Announce(on) => {
                s.announce = on;
                element(
                    if on {
                        "announcement"
                    } else {
                        "not_announcement"
                    },
                    &[],
                    vec![],
                )
            }
            Change::Locked(on) => {
                s.locked = on;
                element(if on { "locked" } else { "unlocked" }, &[], vec![])
            }
            Change::Ephemeral(0) => {
                s.ephemeral = 0;
                element("not_ephemeral", &[], vec![])
            }
            Change::Ephemeral(seconds) => {
                if !EPHEMERAL_DURATIONS.contains(&seconds) {
                    return Err((400, "bad-request"));
                }
                s.ephemeral = seconds;
                element("ephemeral", &[("expiration", seconds.to_string())], vec![])
            }
        })
    }
}

impl Settings {
    /// The `<group>` node's children that show the settings; `owner` names
    /// a member as the group names it (by LID).
    pub fn nodes(&self, owner: impl Fn(&str) -> [(&'static str, String); 2]) -> Vec<Node> {
        let mut nodes = Vec::new();
        if let Some(d) = &self.description {
            let mut attrs = vec![("id", d.id.clone()), ("t", d.t.to_string())];
            attrs.extend(owner(&d.by));
            let body = leaf_bytes("body", d.text.clone().into_bytes());
            nodes.push(element("description", &attrs, vec![body]));
        }
        if self.announce {
            nodes.push(element("announcement", &[], vec![]));
        }
        if self.locked {
            nodes.push(element("locked", &[], vec![]));
        }
        if self.ephemeral > 0 {
            let expiration = [("expiration", self.ephemeral.to_string())];
            nodes.push(element("ephemeral", &expiration, vec![]));
        }
        nodes
    }
}
