//! The `sandbox_phones` entity: simulated phones, their LIDs and profiles.
use chrono::Utc;
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::ExprTrait;
use sha2::{Digest, Sha256};

use chrono::DateTime;
use parley_shared::db::{Db, DbError};

/// A phone registered on the simulated network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPhone {
    pub phone: String,
    /// LID user-part: 15 digits, stable per phone.
    pub lid: String,
    pub name: String,
    pub username: String,
    /// `false`: the number is not registered on the network.
    pub on_network: bool,
    /// `"none"`, `"hidden"` or a base64 image.
    pub avatar: String,
    /// Who sees the picture: [`EVERYONE`], or [`CONTACTS`] (the phones
    /// holding a privacy token this one issued them).
    pub avatar_privacy: String,
    /// Who may call the account: [`EVERYONE`], or [`CONTACTS`] (the phones
    /// holding a privacy token this one issued them).
    pub call_privacy: String,
    pub about: String,
    /// Stable id of the current avatar picture; empty without a visible picture.
    pub picture_id: String,
    pub created_at: DateTime<Utc>,
}

impl SandboxPhone {
    /// The phone's user JID, `<phone>@s.whatsapp.net`.
    pub fn jid(&self) -> String {
        format!("{}@s.whatsapp.net", self.phone)
    }

    /// The current profile picture with its content type; `None` without a
    /// visible one.
    pub fn picture(&self) -> Option<(&'static str, Vec<u8>)> {
        use base64::Engine;
        if self.picture_id.is_empty() || matches!(self.avatar.as_str(), "none" | "hidden" | "") {
            return None;
        }
        let data = base64::engine::general_purpose::STANDARD
            .decode(self.avatar.as_bytes())
            .ok()?;
        let content_type = if data.starts_with(b"\x89PNG") {
            "image/png"
        } else {
            "image/jpeg"
        };
        Some((content_type, data))
    }
}

/// Who sees a phone's picture: everyone...
pub const EVERYONE: &str = "everyone";
/// ...or the phones it issued a privacy token (it wrote to them).
pub const CONTACTS: &str = "contacts";

/// Changes to a phone's profile. `None` leaves a field as it is (or at its default
/// for a new phone).
#[derive(Debug, Clone, Default)]
pub struct PhonePatch {
    pub name: Option<String>,
    pub username: Option<String>,
    pub on_network: Option<bool>,
    pub avatar: Option<String>,
    pub avatar_privacy: Option<String>,
    pub call_privacy: Option<String>,
    pub about: Option<String>,
}

/// The LID user-part of `phone` at `attempt` (0 first; later attempts resolve the
/// rare collision): 15 digits from SHA-256, the first one non-zero.
pub fn derive_lid(phone: &str, attempt: u32) -> String {
    let seed = if attempt == 0 {
        phone.to_string()
    } else {
        format!("{phone}#{attempt}")
    };
    let digest = Sha256::digest(seed.as_bytes());
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    const LOW: u64 = 100_000_000_000_000;
    let value = LOW + u64::from_be_bytes(head) % (9 * LOW);
    value.to_string()
}

/// How many LIDs to try for one phone before giving up (collisions are rare).
const LID_ATTEMPTS: u32 = 16;

/// The avatars without a visible picture.
const NO_PICTURE: [&str; 2] = ["none", "hidden"];

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_phones")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub phone: String,
    #[sea_orm(column_type = "Text", unique)]
    pub lid: String,
    #[sea_orm(column_type = "Text")]
    pub name: String,
    #[sea_orm(column_type = "Text")]
    pub username: String,
    pub on_network: bool,
    #[sea_orm(column_type = "Text")]
    pub avatar: String,
    #[sea_orm(column_type = "Text")]
    pub avatar_privacy: String,
    #[sea_orm(column_type = "Text")]
    pub call_privacy: String,
    #[sea_orm(column_type = "Text")]
    pub about: String,
    #[sea_orm(column_type = "Text")]
    pub picture_id: String,
    /// How many devices this phone has linked so far.
    pub links: i64,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl From<Model> for SandboxPhone {
    fn from(m: Model) -> Self {
        SandboxPhone {
            phone: m.phone,
            lid: m.lid,
            name: m.name,
            username: m.username,
            on_network: m.on_network,
            avatar: m.avatar,
            avatar_privacy: m.avatar_privacy,
            call_privacy: m.call_privacy,
            about: m.about,
            picture_id: m.picture_id,
            created_at: m.created_at,
        }
    }
}

pub async fn find(db: &Db, phone: &str) -> Result<Option<SandboxPhone>, DbError> {
    Ok(Entity::find_by_id(phone)
        .one(db.conn())
        .await?
        .map(SandboxPhone::from))
}

pub async fn find_by_lid(db: &Db, lid: &str) -> Result<Option<SandboxPhone>, DbError> {
    Ok(Entity::find()
        .filter(Column::Lid.eq(lid))
        .one(db.conn())
        .await?
        .map(SandboxPhone::from))
}

/// Inserts the phone with defaults when absent, then applies the patch.
pub async fn upsert(db: &Db, phone: &str, patch: PhonePatch) -> Result<SandboxPhone, DbError> {
    if find(db, phone).await?.is_none() {
        insert_default(db, phone).await?;
    }
    let picture_id = patch.avatar.as_deref().map(|a| picture_id(phone, a));
    let changes = ActiveModel {
        name: set_some(patch.name),
        username: set_some(patch.username),
        on_network: set_some(patch.on_network),
        avatar: set_some(patch.avatar),
        avatar_privacy: set_some(patch.avatar_privacy),
        call_privacy: set_some(patch.call_privacy),
        about: set_some(patch.about),
        picture_id: set_some(picture_id),
        ..Default::default()
    };
    Entity::update_many()
        .set(changes)
        .filter(Column::Phone.eq(phone))
        .exec(db.conn())
        .await?;
    find(db, phone)
        .await?
        .ok_or_else(|| DbError::Conflict(format!("phone {phone} was deleted while being updated")))
}

/// `INSERT ... ON CONFLICT (phone) DO NOTHING`, deriving the LID again when it
/// collides with another phone's.
async fn insert_default(db: &Db, phone: &str) -> Result<(), DbError> {
    for attempt in 0..LID_ATTEMPTS {
        let row = ActiveModel {
            phone: Set(phone.to_string()),
            lid: Set(derive_lid(phone, attempt)),
            on_network: Set(true),
            avatar: Set("none".to_string()),
            avatar_privacy: Set(EVERYONE.to_string()),
            call_privacy: Set(EVERYONE.to_string()),
            created_at: Set(Utc::now()),
            ..Default::default()
        };
        match Entity::insert(row)
            .on_conflict_do_nothing_on([Column::Phone])
            .exec_without_returning(db.conn())
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) => match DbError::from(e) {
                DbError::Conflict(_) => continue,
                other => return Err(other),
            },
        }
    }
    Err(DbError::Conflict(format!("no free LID for phone {phone}")))
}

/// Adds one to the phone's link count in a transaction and returns the new count.
pub async fn next_device_number(db: &Db, phone: &str) -> Result<i32, DbError> {
    let txn = db.begin_write().await?;
    Entity::update_many()
        .col_expr(Column::Links, Expr::col(Column::Links).add(1))
        .filter(Column::Phone.eq(phone))
        .exec(&txn)
        .await?;
    let row = Entity::find_by_id(phone).one(&txn).await?;
    txn.commit().await?;
    let links = row
        .ok_or_else(|| DbError::Conflict(format!("phone {phone} is not registered")))?
        .links;
    i32::try_from(links).map_err(|_| DbError::Unavailable(format!("{links} links overflow")))
}

/// A stable id of the picture `avatar` of `phone`: it changes with the avatar.
fn picture_id(phone: &str, avatar: &str) -> String {
    if NO_PICTURE.contains(&avatar) {
        return String::new();
    }
    let digest = Sha256::new()
        .chain_update(phone.as_bytes())
        .chain_update(b":")
        .chain_update(avatar.as_bytes())
        .finalize();
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    (1_000_000_000 + u64::from_be_bytes(head) % 9_000_000_000).to_string()
}

/// `Set` for a change, `NotSet` (left as stored) for `None`.
fn set_some<T: Into<Value>>(v: Option<T>) -> sea_orm::ActiveValue<T> {
    v.map_or(sea_orm::ActiveValue::NotSet, Set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picture_ids_follow_the_avatar() {
        assert_eq!(picture_id("4915112345678", "none"), "");
        assert_eq!(picture_id("4915112345678", "hidden"), "");
        let a = picture_id("4915112345678", "aGVsbG8=");
        assert_eq!(a.len(), 10);
        assert_eq!(a, picture_id("4915112345678", "aGVsbG8="));
        assert_ne!(a, picture_id("4915112345678", "d29ybGQ="));
    }
}
