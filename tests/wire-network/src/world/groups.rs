//! `/sandbox/groups` on the test network: a group the session's phone is in,
//! created by one of its people with a real `w:g2` create. The sandbox makes
//! the first admin the owner and the session's phone a plain member unless
//! it is listed; here the owner (an admin by the network's rules) is the
//! first admin, or the first participant when none is named.
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
        let owner = admins
            .first()
            .or_else(|| phones.get(1))
            .cloned()
            .unwrap_or_else(|| session.phone.clone());
        let mut members = Vec::new();
        for phone in phones.iter().filter(|p| **p != owner) {
            self.phone(phone).await?;
            members.push(GroupParticipantOptions::new(jid(phone)?));
        }
        let creator = self.phone(&owner).await?;
        let created = creator
            .client
            .groups()
            .create_group(GroupCreateOptions::new(subject).with_participants(members))
            .await
            .map_err(failed)?;
        let group = created.metadata.id.clone();
        let promoted: Vec<Jid> = admins
            .iter()
            .filter(|a| **a != owner)
            .map(|a| jid(a))
            .collect::<Result<_, _>>()?;
        if !promoted.is_empty() {
            creator
                .client
                .groups()
                .promote_participants(group.clone(), &promoted)
                .await
                .map_err(failed)?;
        }
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
