//! Contacts and groups on the live connection: usync user info and
//! is-on-network checks, profile pictures, and the group operations.
use whatsapp_rust::features::{GroupMetadata as LibGroup, GroupParticipant as LibParticipant};
use whatsapp_rust::usync::{
    UsyncContext, UsyncMode, UsyncOutcome, UsyncProtocol, UsyncProtocolKind, UsyncProtocolResult,
    UsyncQuery, UsyncUser,
};
use whatsapp_rust::wacore::iq::groups::{GroupCreateOptions, GroupParticipantOptions};
use whatsapp_rust::{Jid, ParticipantChangeResponse};

use super::connection::LiveConnection;
use super::errors::{
    IqCause, IqMeaning, failed, group_failed, jid, meaning, port_jid, query_failed, ready,
};
use parley_network::{
    CreatedGroup, GroupMetadata, GroupParticipant, Jid as PortJid, NetworkError, NumberCheck,
    ParticipantAction, ParticipantChange, PhoneNumber, Picture, PictureFile, PictureLookup,
    QueryError, UserInfo,
};

fn user(j: &Jid) -> String {
    j.user.to_string()
}

/// The port's group of the library's (a member whose JID is not well-formed
/// is left out, and said so in the log).
pub fn group(meta: &LibGroup) -> Result<GroupMetadata, NetworkError> {
    let participants = meta
        .participants
        .iter()
        .filter_map(|p| match participant(p) {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::warn!(group = %meta.id, error = %e, "group member left out");
                None
            }
        })
        .collect();
    Ok(GroupMetadata {
        jid: port_jid(&meta.id)?,
        subject: meta.subject.clone(),
        owner: meta
            .creator_pn
            .as_ref()
            .or(meta.creator.as_ref())
            .and_then(|j| port_jid(j).ok()),
        created_at: meta.creation_time.and_then(|t| i64::try_from(t).ok()),
        participants,
    })
}

fn participant(p: &LibParticipant) -> Result<GroupParticipant, NetworkError> {
    let lid = p.lid.as_ref().or(p.jid.is_lid().then_some(&p.jid));
    let phone = p.phone_number.as_ref().or(p.jid.is_pn().then_some(&p.jid));
    let role = if p.is_super_admin() {
        "superadmin"
    } else if p.is_admin() {
        "admin"
    } else {
        "member"
    };
    Ok(GroupParticipant {
        jid: port_jid(&p.jid)?,
        lid: lid.map(user),
        phone: phone.map(user),
        role: role.into(),
    })
}

/// The port's answer for one participant of a change (the network's code, if any).
pub fn change(r: &ParticipantChangeResponse) -> Result<ParticipantChange, NetworkError> {
    Ok(ParticipantChange {
        jid: port_jid(&r.jid)?,
        error: r.error.as_deref().map(|code| code.parse().unwrap_or(500)),
    })
}

impl LiveConnection {
    async fn admit(&self) -> Result<(), QueryError> {
        ready(&self.client).await.map_err(QueryError::from)
    }

    pub async fn user(&self, who: &PortJid) -> Result<Option<UserInfo>, QueryError> {
        self.admit().await?;
        let who = jid(who.as_str())?;
        let mut found = self
            .client
            .contacts()
            .get_user_info(std::slice::from_ref(&who))
            .await
            .map_err(|e| query_failed(&self.client, "user info", e))?;
        // Every account has its phone (device 0): a user the network lists
        // no device of has none.
        let Some((_, info)) = found
            .drain()
            .find(|(_, info)| !info.devices.is_empty() || info.devices_error.is_some())
        else {
            return Ok(None);
        };
        let lid = info.lid.as_ref().or(info.jid.is_lid().then_some(&info.jid));
        let username = self.username(&info.jid).await?;
        Ok(Some(UserInfo {
            lid: lid.map(user),
            phone: info.jid.is_pn().then(|| user(&info.jid)),
            status: info.status.clone(),
            picture_id: info.picture_id.clone(),
            username,
            verified_name: info.verified_name.as_ref().and_then(|v| v.name.clone()),
            devices: info.devices.clone(),
        }))
    }

    pub async fn number(&self, phone: &PhoneNumber) -> Result<NumberCheck, QueryError> {
        self.admit().await?;
        let pn = jid(PortJid::phone(phone).as_str())?;
        let answers = self
            .client
            .contacts()
            .is_on_whatsapp(std::slice::from_ref(&pn))
            .await
            .map_err(|e| query_failed(&self.client, "number check", e))?;
        let Some(answer) = answers.first() else {
            return Ok(NumberCheck::default());
        };
        let username = if answer.is_registered {
            self.username(answer.lid.as_ref().unwrap_or(&pn)).await?
        } else {
            None
        };
        Ok(NumberCheck {
            registered: answer.is_registered,
            lid: answer.lid.as_ref().map(user),
            username,
        })
    }

    /// The handle `who` can be found by: usync's `username` part, which the
    /// library's user info does not ask. `None` without one, or when the
    /// network will not say (a per-user error).
    async fn username(&self, who: &Jid) -> Result<Option<String>, QueryError> {
        let query = UsyncQuery::new(
            UsyncMode::Query,
            UsyncContext::Interactive,
            vec![UsyncProtocol::Username],
            vec![UsyncUser::from_jid(who.to_non_ad())],
        )
        .map_err(|e| QueryError::Network(failed(&self.client, "username", e)))?;
        let answer = self
            .client
            .query_usync(query)
            .await
            .map_err(|e| query_failed(&self.client, "username", e))?;
        Ok(answer
            .users
            .iter()
            .find_map(|u| match u.protocol(UsyncProtocolKind::Username) {
                Some(UsyncProtocolResult::Username(UsyncOutcome::Value(Some(name))))
                    if !name.is_empty() =>
                {
                    Some(name.to_string())
                }
                _ => None,
            }))
    }

    pub async fn picture(&self, who: &PortJid, preview: bool) -> Result<PictureLookup, QueryError> {
        self.admit().await?;
        let who = jid(who.as_str())?;
        match self
            .client
            .contacts()
            .get_profile_picture(&who, preview)
            .await
        {
            Ok(Some(p)) => Ok(PictureLookup::Found(Picture {
                id: p.id,
                url: p.url,
            })),
            Ok(None) => Ok(PictureLookup::NoPicture),
            Err(e) => match e.iq().map(meaning) {
                Some(IqMeaning::NotAllowed) => Ok(PictureLookup::Hidden),
                Some(IqMeaning::NotFound) => Ok(PictureLookup::NoPicture),
                _ => Err(query_failed(&self.client, "profile picture", e)),
            },
        }
    }

    /// Fetches a picture's bytes through the session's HTTP client (and proxy).
    pub async fn picture_file(&self, picture: &Picture) -> Result<PictureFile, QueryError> {
        let url = url::Url::parse(&picture.url)
            .ok()
            .filter(|u| u.scheme() == "https")
            .ok_or_else(|| QueryError::NotFound("the picture link is no https URL".into()))?;
        let request = whatsapp_rust::http::HttpRequest::get(url.as_str());
        let response = self
            .client
            .http_client
            .execute(request)
            .await
            .map_err(|e| query_failed(&self.client, "picture download", e))?;
        match response.status_code {
            200 => Ok(PictureFile {
                content_type: "image/jpeg".into(),
                data: bytes::Bytes::from(response.body),
            }),
            404 | 410 | 403 => Err(QueryError::NotFound(format!(
                "the picture link answered {}",
                response.status_code
            ))),
            other => Err(QueryError::Network(failed(
                &self.client,
                "picture download",
                format!("HTTP {other}"),
            ))),
        }
    }

    pub async fn all_groups(&self) -> Result<Vec<GroupMetadata>, QueryError> {
        self.admit().await?;
        let groups = self
            .client
            .groups()
            .get_participating()
            .await
            .map_err(|e| query_failed(&self.client, "groups", e))?;
        let mut out = groups
            .values()
            .map(group)
            .collect::<Result<Vec<GroupMetadata>, _>>()?;
        out.sort_by(|a, b| a.jid.cmp(&b.jid));
        Ok(out)
    }

    pub async fn one_group(&self, raw: &PortJid) -> Result<GroupMetadata, QueryError> {
        self.admit().await?;
        let meta = self
            .client
            .groups()
            .get_metadata(&jid(raw.as_str())?)
            .await
            .map_err(|e| group_failed(&self.client, "group", e))?;
        Ok(group(&meta)?)
    }

    pub async fn new_group(
        &self,
        subject: &str,
        participants: &[PortJid],
    ) -> Result<CreatedGroup, QueryError> {
        self.admit().await?;
        let members = participants
            .iter()
            .map(|p| jid(p.as_str()).map(GroupParticipantOptions::new))
            .collect::<Result<Vec<_>, _>>()?;
        let created = self
            .client
            .groups()
            .create_group(GroupCreateOptions::new(subject).with_participants(members))
            .await
            .map_err(|e| query_failed(&self.client, "create group", e))?;
        let group = group(&created.metadata)?;
        // Whoever the created group lists was added; the others were not.
        let listed: Vec<&str> = group
            .participants
            .iter()
            .flat_map(|p| [Some(p.jid.as_str()), p.phone.as_deref(), p.lid.as_deref()])
            .flatten()
            .collect();
        let changes = participants
            .iter()
            .map(|p| {
                let added = listed.iter().any(|l| *l == p.as_str() || *l == p.user());
                ParticipantChange {
                    jid: p.clone(),
                    error: (!added).then_some(409),
                }
            })
            .collect();
        Ok(CreatedGroup {
            group,
            participants: changes,
        })
    }

    pub async fn members(
        &self,
        raw: &PortJid,
        action: ParticipantAction,
        participants: &[PortJid],
    ) -> Result<Vec<ParticipantChange>, QueryError> {
        self.admit().await?;
        let group_jid = jid(raw.as_str())?;
        let jids = participants
            .iter()
            .map(|p| jid(p.as_str()))
            .collect::<Result<Vec<_>, _>>()?;
        let groups = self.client.groups();
        let answers = match action {
            ParticipantAction::Add => groups.add_participants(group_jid, &jids).await,
            ParticipantAction::Remove => groups.remove_participants(group_jid, &jids).await,
            ParticipantAction::Promote => groups.promote_participants(group_jid, &jids).await,
            ParticipantAction::Demote => groups.demote_participants(group_jid, &jids).await,
        }
        .map_err(|e| group_failed(&self.client, "group members", e))?;
        Ok(answers.iter().map(change).collect::<Result<_, _>>()?)
    }

    pub async fn invite(&self, raw: &PortJid, reset: bool) -> Result<String, QueryError> {
        self.admit().await?;
        let code = self
            .client
            .groups()
            .get_invite_link(jid(raw.as_str())?, reset)
            .await
            .map_err(|e| group_failed(&self.client, "invite link", e))?;
        Ok(if code.starts_with("https://") {
            code
        } else {
            format!("https://chat.whatsapp.com/{code}")
        })
    }

    pub async fn leave(&self, raw: &PortJid) -> Result<(), QueryError> {
        self.admit().await?;
        self.client
            .groups()
            .leave(jid(raw.as_str())?)
            .await
            .map_err(|e| group_failed(&self.client, "leave group", e))
    }
}
