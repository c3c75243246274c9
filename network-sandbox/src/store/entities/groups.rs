//! The `sandbox_groups` and `sandbox_group_members` entities: groups on the
//! simulated network, their members (phones) and roles.
use sea_orm::ActiveValue::Set;
use sea_orm::QueryOrder;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use chrono::{DateTime, Utc};
use parley_model::inbound::GroupSetting;
use parley_shared::db::{Db, DbError};
use serde::{Deserialize, Serialize};

/// Roles of a group member, as the network names them.
pub const MEMBER: &str = "member";
pub const ADMIN: &str = "admin";
pub const SUPERADMIN: &str = "superadmin";

/// A group on the simulated network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxGroup {
    /// `<id>@g.us`.
    pub jid: String,
    pub subject: String,
    /// The creator's phone; empty when none.
    pub owner_phone: String,
    pub invite_code: String,
    pub created_at: DateTime<Utc>,
    /// In phone order.
    pub members: Vec<SandboxMember>,
    pub settings: GroupSettings,
}

/// A group's own settings, stored as JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GroupSettings {
    /// Empty: none.
    pub description: String,
    /// Only admins may send messages.
    pub announce: bool,
    /// Only admins may change the subject, description and disappearing messages.
    pub locked: bool,
    /// 0: messages do not disappear.
    pub ephemeral_seconds: u32,
}

impl GroupSettings {
    /// Sets what `setting` changes (the subject is the group's own column).
    pub fn apply(&mut self, setting: &GroupSetting) {
        match setting {
            GroupSetting::Subject(_) => {}
            GroupSetting::Description(text) => self.description = text.clone(),
            GroupSetting::Announce(on) => self.announce = *on,
            GroupSetting::Locked(on) => self.locked = *on,
            GroupSetting::Ephemeral(seconds) => self.ephemeral_seconds = *seconds,
        }
    }
}

impl SandboxGroup {
    /// The member record of `phone`.
    pub fn member(&self, phone: &str) -> Option<&SandboxMember> {
        self.members.iter().find(|m| m.phone == phone)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxMember {
    pub phone: String,
    /// [`MEMBER`], [`ADMIN`] or [`SUPERADMIN`].
    pub role: String,
}

impl SandboxMember {
    pub fn is_admin(&self) -> bool {
        self.role == ADMIN || self.role == SUPERADMIN
    }
}

pub mod group {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "sandbox_groups")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub jid: String,
        #[sea_orm(column_type = "Text")]
        pub subject: String,
        #[sea_orm(column_type = "Text")]
        pub owner_phone: String,
        #[sea_orm(column_type = "Text")]
        pub invite_code: String,
        pub created_at: DateTimeUtc,
        /// [`super::GroupSettings`] as JSON.
        #[sea_orm(column_type = "Text")]
        pub settings: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod member {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "sandbox_group_members")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub group_jid: String,
        #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
        pub phone: String,
        #[sea_orm(column_type = "Text")]
        pub role: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// Stores a new group with its members, in one transaction.
pub async fn create(db: &Db, g: &SandboxGroup) -> Result<(), DbError> {
    let txn = db.begin_write().await?;
    group::Entity::insert(group::ActiveModel {
        jid: Set(g.jid.clone()),
        subject: Set(g.subject.clone()),
        owner_phone: Set(g.owner_phone.clone()),
        invite_code: Set(g.invite_code.clone()),
        created_at: Set(g.created_at),
        settings: Set(settings_json(&g.settings)),
    })
    .exec_without_returning(&txn)
    .await?;
    for m in &g.members {
        put_member_in(&txn, &g.jid, m).await?;
    }
    txn.commit().await?;
    Ok(())
}

async fn put_member_in(
    conn: &impl ConnectionTrait,
    jid: &str,
    m: &SandboxMember,
) -> Result<(), DbError> {
    member::Entity::insert(member::ActiveModel {
        group_jid: Set(jid.to_string()),
        phone: Set(m.phone.clone()),
        role: Set(m.role.clone()),
    })
    .on_conflict(
        OnConflict::columns([member::Column::GroupJid, member::Column::Phone])
            .update_column(member::Column::Role)
            .to_owned(),
    )
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

pub async fn find(db: &Db, jid: &str) -> Result<Option<SandboxGroup>, DbError> {
    let Some(row) = group::Entity::find_by_id(jid).one(db.conn()).await? else {
        return Ok(None);
    };
    let members = member::Entity::find()
        .filter(member::Column::GroupJid.eq(jid))
        .order_by_asc(member::Column::Phone)
        .all(db.conn())
        .await?
        .into_iter()
        .map(|m| SandboxMember {
            phone: m.phone,
            role: m.role,
        })
        .collect();
    Ok(Some(SandboxGroup {
        jid: row.jid,
        subject: row.subject,
        owner_phone: row.owner_phone,
        invite_code: row.invite_code,
        created_at: row.created_at,
        members,
        // Settings a later version wrote in a shape this one does not read
        // are taken as none rather than failing the group.
        settings: serde_json::from_str(&row.settings).unwrap_or_default(),
    }))
}

/// The JIDs of the groups `phone` is a member of, in JID order.
pub async fn of_phone(db: &Db, phone: &str) -> Result<Vec<String>, DbError> {
    Ok(member::Entity::find()
        .filter(member::Column::Phone.eq(phone))
        .order_by_asc(member::Column::GroupJid)
        .all(db.conn())
        .await?
        .into_iter()
        .map(|m| m.group_jid)
        .collect())
}

/// Adds `m` to group `jid` or changes its role.
pub async fn put_member(db: &Db, jid: &str, m: &SandboxMember) -> Result<(), DbError> {
    put_member_in(db.conn(), jid, m).await
}

/// Removes `phone` from group `jid`; `false` when it was not a member.
pub async fn remove_member(db: &Db, jid: &str, phone: &str) -> Result<bool, DbError> {
    let done = member::Entity::delete_by_id((jid.to_string(), phone.to_string()))
        .exec(db.conn())
        .await?;
    Ok(done.rows_affected > 0)
}

pub async fn set_invite_code(db: &Db, jid: &str, code: &str) -> Result<(), DbError> {
    group::Entity::update_many()
        .col_expr(group::Column::InviteCode, Expr::value(code))
        .filter(group::Column::Jid.eq(jid))
        .exec(db.conn())
        .await?;
    Ok(())
}

pub async fn set_settings(db: &Db, jid: &str, settings: &GroupSettings) -> Result<(), DbError> {
    group::Entity::update_many()
        .col_expr(
            group::Column::Settings,
            Expr::value(settings_json(settings)),
        )
        .filter(group::Column::Jid.eq(jid))
        .exec(db.conn())
        .await?;
    Ok(())
}

/// Plain fields: their JSON cannot fail.
fn settings_json(settings: &GroupSettings) -> String {
    serde_json::json!(settings).to_string()
}

pub async fn set_subject(db: &Db, jid: &str, subject: &str) -> Result<(), DbError> {
    group::Entity::update_many()
        .col_expr(group::Column::Subject, Expr::value(subject))
        .filter(group::Column::Jid.eq(jid))
        .exec(db.conn())
        .await?;
    Ok(())
}
