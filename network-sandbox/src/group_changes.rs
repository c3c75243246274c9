//! Changes of a group the session's phone is in, on the network side:
//! `POST /sandbox/groups/participants` (an admin adds, removes, promotes or
//! demotes members; all or nothing: every participant is checked first),
//! `POST /sandbox/groups/subject` and `/sandbox/groups/settings` (a member
//! changes its subject or another setting, where the group lets it). The
//! session's device is told as the network tells every member's devices (a
//! `w:gp2` notification on the real network): an inbound activity of its own
//! kind, which only sessions that turned it on deliver (a new subject names
//! the group in every session's later events).
use super::inbound::lid_jid;
use parley_contract::command::{Outcome, Reply};
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::SandboxGroupChanged;
use parley_model::inbound::{Content, GroupAction, GroupSetting, InboundMessage};
use parley_network::outgoing::new_message_id;
use parley_network::{Jid, NetworkEvent, PhoneNumber};

use super::SandboxNetwork;
use super::live::Phase;
use crate::store::PhonePatch;
use crate::store::groups::{ADMIN, MEMBER, SandboxMember};

impl SandboxNetwork {
    pub(super) async fn change_members(
        &self,
        client_id: &str,
        group: &Jid,
        by: &PhoneNumber,
        action: GroupAction,
        participants: &[PhoneNumber],
    ) -> Outcome {
        let db = self.store();
        let jid = group.as_str();
        let (found, me) = self.session_group(client_id, group).await?;
        if !found
            .member(by.as_str())
            .is_some_and(SandboxMember::is_admin)
        {
            return Err(ApiError::conflict(format!(
                "{by} is not an admin of the group"
            )));
        }
        for p in participants {
            let member = found.member(p.as_str()).is_some();
            match (action, member) {
                (GroupAction::Add, true) => {
                    return Err(ApiError::conflict(format!("{p} is a member already")));
                }
                (GroupAction::Add, false) | (_, true) => {}
                (_, false) => return Err(ApiError::conflict(format!("{p} is not a member"))),
            }
        }
        let mut lids = Vec::with_capacity(participants.len());
        for p in participants {
            let phone = db.upsert_phone(p.as_str(), PhonePatch::default()).await?;
            lids.push(lid_jid(&phone.lid)?);
            let role = match action {
                GroupAction::Remove => {
                    db.remove_sandbox_member(jid, p.as_str()).await?;
                    continue;
                }
                GroupAction::Promote => ADMIN,
                GroupAction::Add | GroupAction::Demote => MEMBER,
            };
            let member = SandboxMember {
                phone: p.to_string(),
                role: role.into(),
            };
            db.put_sandbox_member(jid, &member).await?;
        }
        let change = Content::GroupChange {
            action,
            participants: lids,
        };
        self.tell_member(client_id, group, &found.subject, by.as_str(), &me, change)
            .await?;
        let answer = SandboxGroupChanged {
            jid: jid.to_string(),
            action: action.as_str().into(),
            participants: participants.iter().map(ToString::to_string).collect(),
        };
        Ok(Reply::Controlled {
            answer: serde_json::json!(answer),
        })
    }

    /// A member (the session's phone unless `by` names another) changes a
    /// setting of `group`, a group the session's phone is in, as the network
    /// lets it: announcement and locked mode by admins only, the rest by any
    /// member unless the group is locked.
    pub(super) async fn change_setting(
        &self,
        client_id: &str,
        group: &Jid,
        setting: GroupSetting,
        by: Option<PhoneNumber>,
    ) -> Outcome {
        let (found, me) = self.session_group(client_id, group).await?;
        let by = by.map_or_else(|| me.clone(), PhoneNumber::into_string);
        let Some(member) = found.member(&by) else {
            return Err(ApiError::conflict(format!("{by} is not a member")));
        };
        let admins_only = matches!(setting, GroupSetting::Announce(_) | GroupSetting::Locked(_))
            || found.settings.locked;
        if admins_only && !member.is_admin() {
            return Err(ApiError::conflict(format!(
                "{by} is not an admin of the group"
            )));
        }
        let db = self.store();
        let mut subject = found.subject.clone();
        if let GroupSetting::Subject(new) = &setting {
            db.set_sandbox_group_subject(group.as_str(), new).await?;
            subject.clone_from(new);
        } else {
            let mut settings = found.settings.clone();
            settings.apply(&setting);
            db.set_sandbox_group_settings(group.as_str(), &settings)
                .await?;
        }
        let change = Content::GroupUpdate(setting);
        self.tell_member(client_id, group, &subject, &by, &me, change)
            .await?;
        Ok(Reply::Done)
    }

    /// Tells the session's device (linked to phone `me`) that `by` made
    /// `change` to `group` (now named `subject`), as a notice under a fresh
    /// id; a device that is not linked hears nothing.
    async fn tell_member(
        &self,
        client_id: &str,
        group: &Jid,
        subject: &str,
        by: &str,
        me: &str,
        change: Content,
    ) -> Result<(), ApiError> {
        let author = self.store().upsert_phone(by, PhonePatch::default()).await?;
        let notice = InboundMessage {
            sender_phone: Some(by.to_string()),
            from_me: by == me,
            push_name: author.name.clone(),
            group_subject: Some(subject.to_string()),
            ..InboundMessage::notice(
                new_message_id(),
                group.clone(),
                lid_jid(&author.lid)?,
                change,
            )
        };
        if let Some(live) = self.live(client_id) {
            let state = live.state().await;
            if matches!(state.phase, Phase::Linked) {
                state.emit(NetworkEvent::Message(Box::new(notice))).await;
            }
        }
        Ok(())
    }
}
