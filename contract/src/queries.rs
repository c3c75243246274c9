//! Contact and group operations the API asks a session owner to carry out on
//! the network (lookups, profile pictures, groups), and their answers. The
//! answers are the HTTP bodies themselves.
use serde::{Deserialize, Serialize};

use crate::wire::contacts::{OwnerLid, ProfilePicture, UserInfo};
use crate::wire::groups::{Group, GroupCreated, GroupInviteLink, GroupMembersUpdated};
use crate::wire::inbox::RefreshedAvatars;
use parley_model::address::{Jid, PhoneNumber};
use parley_model::recipients::Recipient;

/// What `/update-group-members` does to each participant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemberAction {
    Add,
    Remove,
    Promote,
    Demote,
}

impl MemberAction {
    pub const ALL: [MemberAction; 4] = [
        MemberAction::Add,
        MemberAction::Remove,
        MemberAction::Promote,
        MemberAction::Demote,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemberAction::Add => "add",
            MemberAction::Remove => "remove",
            MemberAction::Promote => "promote",
            MemberAction::Demote => "demote",
        }
    }

    pub fn parse(raw: &str) -> Option<MemberAction> {
        let raw = raw.trim();
        MemberAction::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(raw))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "kebab-case")]
pub enum Query {
    /// `/user-info` of a user (not a group).
    UserInfo {
        user: Recipient,
    },
    /// `/check-owner-lid`: the session's identity, and `number` (digits) checked.
    CheckNumber {
        number: Option<PhoneNumber>,
    },
    /// `/profile-picture` of a user or group.
    ProfilePicture {
        who: Recipient,
        preview: bool,
        refresh: bool,
    },
    /// Every group the session's phone is in.
    Groups,
    /// One group (`<id>@g.us`) with its participants.
    Group {
        group: Jid,
    },
    CreateGroup {
        subject: String,
        participants: Vec<Recipient>,
    },
    UpdateMembers {
        group: Jid,
        action: MemberAction,
        participants: Vec<Recipient>,
    },
    InviteLink {
        group: Jid,
        reset: bool,
    },
    LeaveGroup {
        group: Jid,
    },
    /// `/refresh-avatars`: look the hosted-inbox rooms' pictures up again.
    RefreshAvatars {
        force: bool,
    },
}

impl Query {
    /// The operation's name in traces.
    pub fn name(&self) -> &'static str {
        match self {
            Query::UserInfo { .. } => "user-info",
            Query::CheckNumber { .. } => "check-owner-lid",
            Query::ProfilePicture { .. } => "profile-picture",
            Query::Groups => "get-groups",
            Query::Group { .. } => "get-group-participants",
            Query::CreateGroup { .. } => "create-group",
            Query::UpdateMembers { .. } => "update-group-members",
            Query::InviteLink { .. } => "group-invite-link",
            Query::LeaveGroup { .. } => "leave-group",
            Query::RefreshAvatars { .. } => "refresh-avatars",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", content = "body", rename_all = "kebab-case")]
pub enum Answer {
    UserInfo(UserInfo),
    Owner(OwnerLid),
    Picture(ProfilePicture),
    Groups(Vec<Group>),
    Group(Group),
    Created(GroupCreated),
    Members(GroupMembersUpdated),
    InviteLink(GroupInviteLink),
    Left,
    Avatars(RefreshedAvatars),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_actions_parse_case_insensitively() {
        for a in MemberAction::ALL {
            assert_eq!(MemberAction::parse(a.as_str()), Some(a));
            assert_eq!(
                MemberAction::parse(&a.as_str().to_ascii_uppercase()),
                Some(a)
            );
        }
        assert_eq!(MemberAction::parse(" add "), Some(MemberAction::Add));
        for bad in ["", "kick", "adds"] {
            assert_eq!(MemberAction::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn queries_and_answers_round_trip_as_json() {
        let q = Query::UpdateMembers {
            group: Jid::parse("120363000000000001@g.us").unwrap(),
            action: MemberAction::Promote,
            participants: vec![Recipient::Phone(
                PhoneNumber::from_digits("4915100000001").unwrap(),
            )],
        };
        let json = serde_json::to_string(&q).unwrap();
        assert_eq!(serde_json::from_str::<Query>(&json).unwrap(), q);
        let a = Answer::InviteLink(GroupInviteLink {
            group_jid: "1@g.us".into(),
            link: "https://chat.whatsapp.com/abc".into(),
            code: "abc".into(),
        });
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<Answer>(&json).unwrap(), a);
    }
}
