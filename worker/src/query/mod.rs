//! Carries out one contact or group query on a live connection: resolves the
//! user (a `+phone` through the learned mapping, then the network), calls the
//! network port within a deadline, learns every LID <-> phone pair the answer
//! reveals and shapes the HTTP body (409 not connected, 404 nothing found,
//! 403 not allowed, 502 the network failed).
mod avatars;
pub mod book;
mod groups;
mod picture;
pub mod room_avatars;

use std::sync::Arc;
use std::time::Duration;

use parley_contract::command::{Outcome, Reply};
use parley_contract::error::ApiError;
use parley_contract::queries::{Answer, Query};
use parley_contract::wire::contacts::{OwnerLid, UserInfo};
use parley_model::address::{Jid, PhoneNumber};
use parley_model::recipients::{Recipient, lid_jid};
use parley_shared::media::MediaStore;
use tokio::time::timeout;

use self::book::Book;
use self::room_avatars::Avatars;
use crate::network::{Connection, QueryError};
use crate::network_errors::{Operation, to_api};

/// What a query needs; cloned into the task that runs it.
#[derive(Clone)]
pub struct Querier {
    pub connection: Arc<dyn Connection>,
    pub book: Book,
    /// Where profile pictures are mirrored.
    pub media: Arc<dyn MediaStore>,
    /// The hosted inbox's room avatars, when this deployment keeps one.
    pub avatars: Option<Arc<Avatars>>,
    /// The session's own JID and LID user-part.
    pub my_jid: String,
    pub my_lid: String,
    pub network_timeout: Duration,
}

impl Querier {
    pub async fn run(&self, query: Query) -> Outcome {
        let answer = match query {
            Query::UserInfo { user } => Answer::UserInfo(self.user_info(&user).await?),
            Query::CheckNumber { number } => Answer::Owner(self.check_number(number).await?),
            Query::ProfilePicture {
                who,
                preview,
                refresh,
            } => Answer::Picture(self.profile_picture(&who, preview, refresh).await?),
            Query::Groups => Answer::Groups(self.groups().await?),
            Query::Group { group } => Answer::Group(self.group(&group).await?),
            Query::CreateGroup {
                subject,
                participants,
            } => Answer::Created(self.create_group(&subject, &participants).await?),
            Query::UpdateMembers {
                group,
                action,
                participants,
            } => Answer::Members(self.update_members(&group, action, &participants).await?),
            Query::InviteLink { group, reset } => {
                Answer::InviteLink(self.invite_link(&group, reset).await?)
            }
            Query::RefreshAvatars { force } => Answer::Avatars(self.refresh_avatars(force).await?),
            Query::LeaveGroup { group } => {
                self.network("leave", self.connection.leave_group(&group))
                    .await?;
                Answer::Left
            }
        };
        Ok(Reply::Answer(answer))
    }

    /// The JID to ask the network about for a user: a LID or phone JID as
    /// given; a `+phone` as its learned LID, else as the network resolves it
    /// (`None`: not on the network).
    async fn user_jid(&self, who: &Recipient) -> Result<Option<Jid>, ApiError> {
        match who {
            Recipient::Phone(phone) => {
                if let Some(lid) = self.book.lid_jid_for(phone).await {
                    return Ok(Some(lid));
                }
                let check = self
                    .network("number check", self.connection.check_number(phone))
                    .await?;
                if !check.registered {
                    return Ok(None);
                }
                Ok(Some(match check.lid.as_deref().and_then(lid_jid) {
                    Some(jid) => {
                        self.book.learn(jid.user(), phone.as_str()).await;
                        jid
                    }
                    None => Jid::phone(phone),
                }))
            }
            other => Ok(Some(other.jid())),
        }
    }

    async fn user_info(&self, user: &Recipient) -> Result<UserInfo, ApiError> {
        let no_info = || ApiError::not_found("no info for that user");
        let jid = self.user_jid(user).await?.ok_or_else(no_info)?;
        let info = self
            .network("user info lookup", self.connection.user_info(&jid))
            .await?
            .ok_or_else(no_info)?;
        let phone = info
            .phone
            .clone()
            .or_else(|| user.phone().map(|p| p.to_string()));
        if let Some(lid) = &info.lid {
            self.book.learn(lid, phone.as_deref().unwrap_or("")).await;
        }
        Ok(UserInfo {
            jid: info
                .lid
                .as_deref()
                .and_then(lid_jid)
                .unwrap_or(jid)
                .into_string(),
            username: info.username.unwrap_or_default(),
            status: info.status.unwrap_or_default(),
            picture_id: info.picture_id.unwrap_or_default(),
            devices: u32::try_from(info.devices.len()).unwrap_or(u32::MAX),
            verified_name: info.verified_name.unwrap_or_default(),
        })
    }

    async fn check_number(&self, number: Option<PhoneNumber>) -> Result<OwnerLid, ApiError> {
        let mut answer = OwnerLid {
            my_lid: self.my_lid.clone(),
            my_jid: self.my_jid.clone(),
            number: String::new(),
            is_on_whatsapp: false,
            number_jid: String::new(),
            number_lid: String::new(),
            username: String::new(),
        };
        let Some(number) = number else {
            return Ok(answer);
        };
        let check = self
            .network("number check", self.connection.check_number(&number))
            .await?;
        if let Some(lid) = &check.lid {
            self.book.learn(lid, number.as_str()).await;
        }
        answer.is_on_whatsapp = check.registered;
        if check.registered {
            answer.number_jid = Jid::phone(&number).into_string();
        }
        answer.number_lid = check.lid.unwrap_or_default();
        answer.username = check.username.unwrap_or_default();
        answer.number = number.into_string();
        Ok(answer)
    }

    /// Awaits a network operation within the usual deadline.
    async fn network<T>(
        &self,
        what: &str,
        op: impl Future<Output = Result<T, QueryError>>,
    ) -> Result<T, ApiError> {
        match timeout(self.network_timeout, op).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(to_api(Operation::Query(what), e)),
            Err(_) => Err(ApiError::bad_gateway(format!(
                "the network did not answer the {what} in time; retry"
            ))),
        }
    }
}
