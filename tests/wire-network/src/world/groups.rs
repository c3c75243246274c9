//! `/sandbox/groups` on the test network: a group the session's phone is in,
//! made with real `w:g2` requests. The sandbox's group has the listed admins
//! as admins and everyone else as plain members, the session's phone
//! included unless listed; on the network every group has a creator, a
//! superadmin, so here the network's own founding account creates it with
//! everyone in it, promotes the admins and leaves: a group whose creator
//! left, as groups on the real network often are.
use serde::{Deserialize, Serialize};
use whatsapp_rust::Jid;
use whatsapp_rust::wacore::iq::groups::{GroupCreateOptions, GroupParticipantOptions};

use super::{Refusal, SessionRef, World, failed};

/// A group as `/sandbox/groups` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub jid: String,
    pub subject: String,
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

    /// The session's phone renames `group`, a group it is in.
    pub async fn group_subject(
        &self,
        session: &SessionRef,
        group: &str,
        subject: &str,
    ) -> Result<Group, Refusal> {
        let phone = self.phone(&session.phone).await?;
        phone.set_group_subject(group, subject).await.map_err(|e| {
            Refusal::NotFound(format!("no such group with the session's phone in it: {e}"))
        })?;
        Ok(Group {
            jid: group.to_string(),
            subject: subject.to_string(),
        })
    }
}
