//! `/sandbox/groups` on the test network: a group the session's phone is in,
//! made with real `w:g2` requests. The sandbox's group has the listed admins
//! as admins and everyone else as plain members, the session's phone
//! included unless listed; on the network every group has a creator, a
//! superadmin, so here the network's own founding account creates it with
//! everyone in it, promotes the admins and leaves: a group whose creator
//! left, as groups on the real network often are.
use parley_model::inbound::GroupSetting;
use serde::{Deserialize, Serialize};
use whatsapp_rust::Jid;
use whatsapp_rust::wacore::iq::groups::{GroupCreateOptions, GroupParticipantOptions};
use whatsapp_rust::{GroupError, IqError};

use super::{Refusal, SessionRef, World, failed};

/// A group as `/sandbox/groups` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub jid: String,
    pub subject: String,
}

/// A change of members as `/sandbox/groups/participants` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changed {
    pub jid: String,
    pub action: String,
    pub participants: Vec<String>,
}

/// The test network's own account that founds `/sandbox/groups`' groups.
pub const FOUNDER: &str = "4930990000001";

fn jid(phone: &str) -> Result<Jid, Refusal> {
    format!("{phone}@s.whatsapp.net").parse().map_err(failed)
}

impl World {
    /// A group of the session's phone and `participants`; `admins` (phones
    /// among them, or the session's) are its admins.
    pub async fn create_group(
        &self,
        session: &SessionRef,
        subject: &str,
        participants: &[String],
        admins: &[String],
    ) -> Result<Group, Refusal> {
        let mut phones = vec![session.phone.clone()];
        for p in participants {
            if !phones.contains(p) {
                phones.push(p.clone());
            }
        }
        if let Some(stranger) = admins.iter().find(|a| !phones.contains(a)) {
            return Err(Refusal::Invalid(format!(
                "admin {stranger} is not a participant"
            )));
        }
        let mut members = Vec::new();
        for phone in &phones {
            self.phone(phone).await?;
            members.push(GroupParticipantOptions::new(jid(phone)?));
        }
        let founder = self.phone(FOUNDER).await?;
        let groups = founder.client.groups();
        let created = groups
            .create_group(GroupCreateOptions::new(subject).with_participants(members))
            .await
            .map_err(failed)?;
        let group = created.metadata.id.clone();
        let promoted: Vec<Jid> = admins.iter().map(|a| jid(a)).collect::<Result<_, _>>()?;
        if !promoted.is_empty() {
            groups
                .promote_participants(group.clone(), &promoted)
                .await
                .map_err(failed)?;
        }
        groups.leave(group.clone()).await.map_err(failed)?;
        Ok(Group {
            jid: group.to_string(),
            subject: subject.to_string(),
        })
    }

    /// `by`, a member of `group` (the session's phone when `None`), changes
    /// `setting` of it, a group the session's phone is in, with a real
    /// `w:g2` request; the network refuses a member who is not an admin
    /// where only admins may (409 here, as the sandbox answers).
    pub async fn group_setting(
        &self,
        session: &SessionRef,
        group: &str,
        by: Option<&str>,
        setting: &GroupSetting,
    ) -> Result<(), Refusal> {
        let members = self.session_group_members(session, group)?;
        let by = by.unwrap_or(&session.phone);
        if !members.iter().any(|(p, _)| p == by) {
            return Err(Refusal::Conflict(format!("{by} is not a member")));
        }
        let phone = self.phone(by).await?;
        match phone.set_group_setting(group, setting).await {
            Err(GroupError::Iq(IqError::ServerError { code: 401, .. })) => Err(Refusal::Conflict(
                format!("{by} is not an admin of the group"),
            )),
            other => other.map_err(failed),
        }
    }

    /// The members (phone, admin) of `group` (a `@g.us` JID), a group the
    /// session's phone is in; 404 for another, as the sandbox answers.
    pub fn session_group_members(
        &self,
        session: &SessionRef,
        group: &str,
    ) -> Result<Vec<(String, bool)>, Refusal> {
        let gid = group.strip_suffix("@g.us").unwrap_or(group);
        self.net
            .group_members(gid)
            .filter(|m| m.iter().any(|(p, _)| *p == session.phone))
            .ok_or_else(|| Refusal::NotFound("no such group with the session's phone in it".into()))
    }

    /// `by`, an admin of `group` (a group the session's phone is in),
    /// `action`s `participants` (phones) with a real `w:g2` request; the
    /// server tells the members' devices. All or nothing, as the sandbox:
    /// the group is read first.
    pub async fn change_members(
        &self,
        session: &SessionRef,
        group: &str,
        by: &str,
        action: &str,
        participants: &[String],
    ) -> Result<Changed, Refusal> {
        let members = self.session_group_members(session, group)?;
        if !members.iter().any(|(p, admin)| p == by && *admin) {
            return Err(Refusal::Conflict(format!(
                "{by} is not an admin of the group"
            )));
        }
        for p in participants {
            let member = members.iter().any(|(m, _)| m == p);
            match (action, member) {
                ("add", true) => {
                    return Err(Refusal::Conflict(format!("{p} is a member already")));
                }
                ("add", false) | (_, true) => {}
                (_, false) => return Err(Refusal::Conflict(format!("{p} is not a member"))),
            }
        }
        let mut jids = Vec::with_capacity(participants.len());
        for p in participants {
            self.phone(p).await?;
            jids.push(jid(p)?);
        }
        let admin = self.phone(by).await?;
        let groups = admin.client.groups();
        let target: Jid = group.parse().map_err(failed)?;
        let answers = match action {
            "add" => groups.add_participants(target, &jids).await,
            "remove" => groups.remove_participants(target, &jids).await,
            "promote" => groups.promote_participants(target, &jids).await,
            "demote" => groups.demote_participants(target, &jids).await,
            other => return Err(Refusal::Invalid(format!("unknown action {other}"))),
        }
        .map_err(failed)?;
        if let Some(refused) = answers.iter().find(|a| !a.is_ok()) {
            return Err(Refusal::Failed(format!(
                "the network refused {} for {}: {:?}",
                action, refused.jid, refused.error
            )));
        }
        Ok(Changed {
            jid: group.to_string(),
            action: action.to_string(),
            participants: participants.to_vec(),
        })
    }
}
