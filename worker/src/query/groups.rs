//! The group queries: list, one group, create, member updates (answered per
//! participant), invite link. Every member list teaches the session's
//! LID <-> phone mapping.
use chrono::DateTime;
use parley_contract::error::ApiError;
use parley_contract::queries::MemberAction;
use parley_contract::wire::groups::{
    Group, GroupCreated, GroupInviteLink, GroupMember, GroupMembersUpdated, ParticipantResult,
};
use parley_model::address::Jid;
use parley_model::recipients::Recipient;

use super::Querier;
use crate::network::{GroupMetadata, ParticipantChange};

impl Querier {
    pub(super) async fn groups(&self) -> Result<Vec<Group>, ApiError> {
        let all = self.network("group list", self.connection.groups()).await?;
        let mut groups = Vec::with_capacity(all.len());
        for g in all {
            groups.push(self.shape(g).await);
        }
        Ok(groups)
    }

    pub(super) async fn group(&self, jid: &Jid) -> Result<Group, ApiError> {
        let g = self
            .network("group lookup", self.connection.group_metadata(jid))
            .await?;
        Ok(self.shape(g).await)
    }

    pub(super) async fn create_group(
        &self,
        subject: &str,
        participants: &[Recipient],
    ) -> Result<GroupCreated, ApiError> {
        let jids = self.participant_jids(participants).await;
        let created = self
            .network(
                "group creation",
                self.connection.create_group(subject, &jids),
            )
            .await?;
        let group = self.shape(created.group).await;
        Ok(GroupCreated {
            group_jid: group.group_jid,
            subject: group.subject,
            participants: results(
                participants,
                &jids,
                &created.participants,
                MemberAction::Add,
            ),
        })
    }

    pub(super) async fn update_members(
        &self,
        group: &Jid,
        action: MemberAction,
        participants: &[Recipient],
    ) -> Result<GroupMembersUpdated, ApiError> {
        let jids = self.participant_jids(participants).await;
        let changes = self
            .network(
                "group member update",
                self.connection.update_participants(group, action, &jids),
            )
            .await?;
        Ok(GroupMembersUpdated {
            group_jid: group.to_string(),
            action: action.as_str().to_string(),
            participants: results(participants, &jids, &changes, action),
        })
    }

    pub(super) async fn invite_link(
        &self,
        group: &Jid,
        reset: bool,
    ) -> Result<GroupInviteLink, ApiError> {
        let link = self
            .network("invite link", self.connection.invite_link(group, reset))
            .await?;
        Ok(GroupInviteLink {
            group_jid: group.to_string(),
            code: invite_code(&link).to_string(),
            link,
        })
    }

    /// The JIDs to hand the network: a `+phone` as its learned LID, else its
    /// phone JID (the network answers for it per participant).
    async fn participant_jids(&self, participants: &[Recipient]) -> Vec<Jid> {
        let mut jids = Vec::with_capacity(participants.len());
        for p in participants {
            jids.push(match p {
                Recipient::Phone(phone) => match self.book.lid_jid_for(phone).await {
                    Some(lid) => lid,
                    None => Jid::phone(phone),
                },
                other => other.jid(),
            });
        }
        jids
    }

    /// The HTTP shape of a group; its members' LID <-> phone pairs are learned.
    async fn shape(&self, g: GroupMetadata) -> Group {
        let mut participants = Vec::with_capacity(g.participants.len());
        for p in g.participants {
            let lid = p.lid.unwrap_or_default();
            let phone = p.phone.unwrap_or_default();
            self.book.learn(&lid, &phone).await;
            participants.push(GroupMember {
                jid: p.jid.into_string(),
                lid,
                phone,
                role: p.role,
            });
        }
        Group {
            group_jid: g.jid.into_string(),
            subject: g.subject,
            owner: g.owner.map(Jid::into_string).unwrap_or_default(),
            created_at: g
                .created_at
                .and_then(|t| DateTime::from_timestamp(t, 0))
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                .unwrap_or_default(),
            participants,
        }
    }
}

/// One result per asked participant, in request order: the network's answer
/// for its JID (a participant the network did not mention counts as refused).
fn results(
    asked: &[Recipient],
    jids: &[Jid],
    changes: &[ParticipantChange],
    action: MemberAction,
) -> Vec<ParticipantResult> {
    asked
        .iter()
        .zip(jids)
        .map(|(who, jid)| {
            let error = match changes.iter().find(|c| &c.jid == jid) {
                Some(change) => change.error,
                None => Some(500),
            };
            ParticipantResult {
                participant: who.to_string(),
                jid: jid.to_string(),
                ok: error.is_none(),
                status: error.unwrap_or(200),
                error: error.map(|code| explain(code, action)).unwrap_or_default(),
            }
        })
        .collect()
}

/// Words for the network's per-participant codes.
pub fn explain(code: u16, action: MemberAction) -> String {
    match (code, action) {
        (403, _) => "refused by the network (privacy settings or permissions)".into(),
        (404, MemberAction::Add) => "not on the network".into(),
        (404, _) => "not a member of the group".into(),
        (408, _) => "recently left the group; cannot be added yet".into(),
        (409, _) => "already a member of the group".into(),
        (500, _) => "the network did not answer for this participant".into(),
        (other, _) => format!("refused by the network (code {other})"),
    }
}

/// The code at the end of an invite link.
pub fn invite_code(link: &str) -> &str {
    link.rsplit('/').next().unwrap_or(link)
}

#[cfg(test)]
mod tests {
    use parley_model::address::PhoneNumber;

    use super::*;

    #[test]
    fn results_follow_the_request_order() {
        let asked = vec![
            Recipient::Phone(PhoneNumber::from_digits("4915100000001").unwrap()),
            Recipient::Lid("123456789012345".into()),
            Recipient::Lid("123456789012346".into()),
        ];
        let jids: Vec<Jid> = [
            "4915100000001@s.whatsapp.net",
            "123456789012345@lid",
            "123456789012346@lid",
        ]
        .into_iter()
        .map(|j| Jid::parse(j).unwrap())
        .collect();
        let changes = vec![
            ParticipantChange {
                jid: jids[1].clone(),
                error: None,
            },
            ParticipantChange {
                jid: jids[0].clone(),
                error: Some(404),
            },
        ];
        let r = results(&asked, &jids, &changes, MemberAction::Add);
        assert_eq!(r.len(), 3);
        assert_eq!(
            (
                r[0].participant.as_str(),
                r[0].ok,
                r[0].status,
                r[0].error.as_str()
            ),
            ("+4915100000001", false, 404, "not on the network")
        );
        assert_eq!((r[1].ok, r[1].status, r[1].error.as_str()), (true, 200, ""));
        assert_eq!((r[2].ok, r[2].status), (false, 500));
        assert_eq!(
            explain(404, MemberAction::Remove),
            "not a member of the group"
        );
        assert_eq!(
            explain(409, MemberAction::Add),
            "already a member of the group"
        );
    }

    #[test]
    fn invite_codes_end_the_link() {
        assert_eq!(invite_code("https://chat.whatsapp.com/AbCd123"), "AbCd123");
        assert_eq!(invite_code("AbCd123"), "AbCd123");
    }
}
