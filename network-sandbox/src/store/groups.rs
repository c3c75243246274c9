//! The sandbox network's groups: subject, invite code, members and their roles.

use super::entities::{groups, phones};
use super::state::SandboxPhone;
use parley_shared::db::DbError;

use super::Store;

pub use super::entities::groups::{
    ADMIN, GroupSettings, MEMBER, SUPERADMIN, SandboxGroup, SandboxMember,
};

impl Store {
    /// Stores a new group and its members.
    pub async fn create_sandbox_group(&self, group: &SandboxGroup) -> Result<(), DbError> {
        groups::create(&self.db, group).await
    }

    pub async fn sandbox_group(&self, jid: &str) -> Result<Option<SandboxGroup>, DbError> {
        groups::find(&self.db, jid).await
    }

    /// The groups `phone` is a member of, in JID order.
    pub async fn sandbox_groups_of(&self, phone: &str) -> Result<Vec<SandboxGroup>, DbError> {
        let mut all = Vec::new();
        for jid in groups::of_phone(&self.db, phone).await? {
            if let Some(group) = groups::find(&self.db, &jid).await? {
                all.push(group);
            }
        }
        Ok(all)
    }

    /// Adds a member to a group, or changes its role.
    pub async fn put_sandbox_member(
        &self,
        jid: &str,
        member: &SandboxMember,
    ) -> Result<(), DbError> {
        groups::put_member(&self.db, jid, member).await
    }

    /// Removes a member; `false` when `phone` was not one.
    pub async fn remove_sandbox_member(&self, jid: &str, phone: &str) -> Result<bool, DbError> {
        groups::remove_member(&self.db, jid, phone).await
    }

    /// Replaces a group's subject.
    pub async fn set_sandbox_group_subject(&self, jid: &str, subject: &str) -> Result<(), DbError> {
        groups::set_subject(&self.db, jid, subject).await
    }

    /// Replaces a group's settings.
    pub async fn set_sandbox_group_settings(
        &self,
        jid: &str,
        settings: &GroupSettings,
    ) -> Result<(), DbError> {
        groups::set_settings(&self.db, jid, settings).await
    }

    /// Replaces a group's invite code (the old link stops working).
    pub async fn set_sandbox_invite_code(&self, jid: &str, code: &str) -> Result<(), DbError> {
        groups::set_invite_code(&self.db, jid, code).await
    }

    /// The phone registered with LID user-part `lid`.
    pub async fn phone_by_lid(&self, lid: &str) -> Result<Option<SandboxPhone>, DbError> {
        phones::find_by_lid(&self.db, lid).await
    }
}
