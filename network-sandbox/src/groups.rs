//! Groups on the simulated network: listing, metadata, creation, member
//! changes answered per participant (as the real network does), invite links
//! and leaving. The session acts as its linked phone; changes need an admin.
use crate::store::groups::{ADMIN, MEMBER, SUPERADMIN, SandboxGroup, SandboxMember};
use chrono::Utc;
use parley_model::recipients::{GROUP_SERVER, PHONE_SERVER, lid_jid};

use super::connection::SandboxConnection;
use super::{codes, unreachable};
use parley_network::{
    CreatedGroup, GroupMetadata, GroupParticipant, Jid, NetworkError, ParticipantAction,
    ParticipantChange, QueryError,
};

/// A JID the simulated network stored (it stores only well-formed ones).
fn stored(raw: &str, server: &str) -> Result<Jid, NetworkError> {
    let jid = if raw.contains('@') {
        Jid::parse(raw)
    } else {
        Jid::new(raw, server)
    };
    jid.ok_or_else(|| NetworkError::Unreachable(format!("a malformed stored JID: {raw:?}")))
}

/// The network's per-participant codes.
const NOT_FOUND: u16 = 404;
const ALREADY_MEMBER: u16 = 409;

/// Invite links.
pub const INVITE_PREFIX: &str = "https://chat.whatsapp.com/";

impl SandboxConnection {
    /// The phone this session is linked as.
    pub(super) async fn own_phone(&self) -> Result<String, NetworkError> {
        self.ensure_linked().await?;
        let device = self
            .network()
            .store()
            .sandbox_device(&self.live().client_id)
            .await
            .map_err(unreachable)?
            .ok_or(NetworkError::NotPaired)?;
        Ok(device.phone)
    }

    /// The group `jid` with the session's phone in it, and that phone.
    async fn my_group(&self, jid: &Jid) -> Result<(SandboxGroup, String), QueryError> {
        let me = self.own_phone().await?;
        let group = self
            .network()
            .store()
            .sandbox_group(jid.as_str())
            .await
            .map_err(unreachable)?
            .filter(|g| g.member(&me).is_some())
            .ok_or_else(|| {
                QueryError::NotFound(format!("no group {jid} with this account in it"))
            })?;
        Ok((group, me))
    }

    /// Refuses a message to a group without this session's phone in it, or
    /// to one in announcement mode where it is not an admin, as the network
    /// does (it relays it to no one).
    pub(super) async fn check_may_send_to(&self, chat: &Jid) -> Result<(), NetworkError> {
        if !chat.is_group() {
            return Ok(());
        }
        match self.my_group(chat).await {
            Ok((group, me))
                if group.settings.announce
                    && !group.member(&me).is_some_and(SandboxMember::is_admin) =>
            {
                Err(NetworkError::Rejected(parley_network::ADMINS_ONLY.into()))
            }
            Ok(_) => Ok(()),
            Err(QueryError::Network(e)) => Err(e),
            Err(_) => Err(NetworkError::Rejected(parley_network::NOT_A_MEMBER.into())),
        }
    }

    /// [`Self::my_group`] where the session's phone is an admin.
    async fn admin_group(&self, jid: &Jid) -> Result<(SandboxGroup, String), QueryError> {
        let (group, me) = self.my_group(jid).await?;
        if !group.member(&me).is_some_and(SandboxMember::is_admin) {
            return Err(QueryError::NotAllowed(
                "this account is not an admin of the group".into(),
            ));
        }
        Ok((group, me))
    }

    /// The group as the network describes it (participants by LID).
    async fn metadata(&self, group: &SandboxGroup) -> Result<GroupMetadata, NetworkError> {
        let db = self.network().store();
        let mut participants = Vec::with_capacity(group.members.len());
        for m in &group.members {
            let lid = db
                .phone(&m.phone)
                .await
                .map_err(unreachable)?
                .map(|p| p.lid);
            let jid = match lid.as_deref().and_then(lid_jid) {
                Some(jid) => jid,
                None => stored(&m.phone, PHONE_SERVER)?,
            };
            participants.push(GroupParticipant {
                jid,
                lid,
                phone: Some(m.phone.clone()),
                role: m.role.clone(),
            });
        }
        Ok(GroupMetadata {
            jid: stored(&group.jid, GROUP_SERVER)?,
            subject: group.subject.clone(),
            owner: Some(group.owner_phone.as_str())
                .filter(|p| !p.is_empty())
                .map(|p| stored(p, PHONE_SERVER))
                .transpose()?,
            created_at: Some(group.created_at.timestamp()),
            participants,
        })
    }

    pub(super) async fn list_groups(&self) -> Result<Vec<GroupMetadata>, QueryError> {
        let me = self.own_phone().await?;
        let groups = self
            .network()
            .store()
            .sandbox_groups_of(&me)
            .await
            .map_err(unreachable)?;
        let mut all = Vec::with_capacity(groups.len());
        for g in &groups {
            all.push(self.metadata(g).await?);
        }
        Ok(all)
    }

    pub(super) async fn group_info(&self, jid: &Jid) -> Result<GroupMetadata, QueryError> {
        let (group, _) = self.my_group(jid).await?;
        Ok(self.metadata(&group).await?)
    }

    pub(super) async fn new_group(
        &self,
        subject: &str,
        participants: &[Jid],
    ) -> Result<CreatedGroup, QueryError> {
        let me = self.own_phone().await?;
        let mut members = vec![SandboxMember {
            phone: me.clone(),
            role: SUPERADMIN.into(),
        }];
        let mut changes = Vec::with_capacity(participants.len());
        for jid in participants {
            let error = match self.registered(jid).await? {
                None => Some(NOT_FOUND),
                Some(p) if members.iter().any(|m| m.phone == p.phone) => Some(ALREADY_MEMBER),
                Some(p) => {
                    members.push(SandboxMember {
                        phone: p.phone,
                        role: MEMBER.into(),
                    });
                    None
                }
            };
            changes.push(ParticipantChange {
                jid: jid.clone(),
                error,
            });
        }
        let group = SandboxGroup {
            jid: codes::group_jid(),
            subject: subject.to_string(),
            owner_phone: me,
            invite_code: codes::invite_code(),
            created_at: Utc::now(),
            members,
            settings: Default::default(),
        };
        self.network()
            .store()
            .create_sandbox_group(&group)
            .await
            .map_err(unreachable)?;
        Ok(CreatedGroup {
            group: self.metadata(&group).await?,
            participants: changes,
        })
    }

    pub(super) async fn change_participants(
        &self,
        group_jid: &Jid,
        action: ParticipantAction,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantChange>, QueryError> {
        let (mut group, _) = self.admin_group(group_jid).await?;
        let jid = group_jid.as_str();
        let db = self.network().store();
        let mut changes = Vec::with_capacity(participants.len());
        for who in participants {
            let phone = self.registered(who).await?.map(|p| p.phone);
            let current = phone.as_deref().and_then(|p| group.member(p)).cloned();
            let error = match (phone, current, action) {
                (None, _, _) => Some(NOT_FOUND),
                (Some(_), Some(_), ParticipantAction::Add) => Some(ALREADY_MEMBER),
                (Some(phone), None, ParticipantAction::Add) => {
                    let m = SandboxMember {
                        phone,
                        role: MEMBER.into(),
                    };
                    db.put_sandbox_member(jid, &m).await.map_err(unreachable)?;
                    group.members.push(m);
                    None
                }
                (Some(_), None, _) => Some(NOT_FOUND),
                (Some(phone), Some(_), ParticipantAction::Remove) => {
                    db.remove_sandbox_member(jid, &phone)
                        .await
                        .map_err(unreachable)?;
                    group.members.retain(|m| m.phone != phone);
                    None
                }
                (Some(phone), Some(_), promote_or_demote) => {
                    let role = if promote_or_demote == ParticipantAction::Promote {
                        ADMIN
                    } else {
                        MEMBER
                    };
                    let m = SandboxMember {
                        phone,
                        role: role.into(),
                    };
                    db.put_sandbox_member(jid, &m).await.map_err(unreachable)?;
                    if let Some(stored) = group.members.iter_mut().find(|x| x.phone == m.phone) {
                        stored.role = m.role;
                    }
                    None
                }
            };
            changes.push(ParticipantChange {
                jid: who.clone(),
                error,
            });
        }
        Ok(changes)
    }

    pub(super) async fn group_invite(&self, jid: &Jid, reset: bool) -> Result<String, QueryError> {
        let (group, _) = self.admin_group(jid).await?;
        let code = if reset || group.invite_code.is_empty() {
            let code = codes::invite_code();
            self.network()
                .store()
                .set_sandbox_invite_code(jid.as_str(), &code)
                .await
                .map_err(unreachable)?;
            code
        } else {
            group.invite_code
        };
        Ok(format!("{INVITE_PREFIX}{code}"))
    }

    pub(super) async fn leave(&self, jid: &Jid) -> Result<(), QueryError> {
        let (_, me) = self.my_group(jid).await?;
        self.network()
            .store()
            .remove_sandbox_member(jid.as_str(), &me)
            .await
            .map_err(unreachable)?;
        Ok(())
    }
}
