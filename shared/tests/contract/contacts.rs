//! Contract of the contact queries (learned LID <-> phone mapping, picture
//! cache), run on SQLite and PostgreSQL.
use chrono::{Duration, TimeZone, Utc};
use parley_shared::db::Db;
use parley_shared::db::contacts::CachedPicture;

use crate::db::db_contract;

db_contract! {
    adapters: [sqlite, postgres],
    cases: [
        learned_contacts_map_both_ways_per_session,
        learning_never_erases_and_a_phone_moves,
        pictures_are_cached_per_session_jid_and_kind,
    ]
}

const LID: &str = "123456789012345";
const PHONE: &str = "4915100000001";

async fn learned_contacts_map_both_ways_per_session(db: &Db) {
    assert_eq!(db.lid_for_phone("a", PHONE).await.unwrap(), None);
    assert_eq!(db.phone_for_lid("a", LID).await.unwrap(), None);
    db.learn_contact("a", LID, PHONE, "Ann").await.unwrap();
    assert_eq!(
        db.lid_for_phone("a", PHONE).await.unwrap().as_deref(),
        Some(LID)
    );
    assert_eq!(
        db.phone_for_lid("a", LID).await.unwrap().as_deref(),
        Some(PHONE)
    );
    let c = db.contact("a", LID).await.unwrap().expect("contact");
    assert_eq!((c.phone.as_str(), c.name.as_str()), (PHONE, "Ann"));
    // Another session learned nothing.
    assert_eq!(db.lid_for_phone("b", PHONE).await.unwrap(), None);
    assert_eq!(db.contact("b", LID).await.unwrap(), None);
    // Nothing is learned without a LID.
    db.learn_contact("a", "", "4915100000002", "X")
        .await
        .unwrap();
    assert_eq!(db.lid_for_phone("a", "4915100000002").await.unwrap(), None);
}

async fn learning_never_erases_and_a_phone_moves(db: &Db) {
    db.learn_contact("a", LID, "", "Ann").await.unwrap();
    assert_eq!(db.phone_for_lid("a", LID).await.unwrap(), None);
    db.learn_contact("a", LID, PHONE, "").await.unwrap();
    db.learn_contact("a", LID, "", "").await.unwrap();
    let c = db.contact("a", LID).await.unwrap().expect("contact");
    assert_eq!((c.phone.as_str(), c.name.as_str()), (PHONE, "Ann"));
    // The number now belongs to another LID: the old one forgets it.
    let other = "123456789012399";
    db.learn_contact("a", other, PHONE, "").await.unwrap();
    assert_eq!(
        db.lid_for_phone("a", PHONE).await.unwrap().as_deref(),
        Some(other)
    );
    assert_eq!(db.phone_for_lid("a", LID).await.unwrap(), None);
    assert_eq!(db.contact("a", LID).await.unwrap().unwrap().name, "Ann");
}

fn picture(kind: &str, id: &str) -> CachedPicture {
    CachedPicture {
        jid: format!("{LID}@lid"),
        kind: kind.into(),
        picture_id: id.into(),
        url: format!("https://pps.example/{id}"),
        reason: String::new(),
        stored_picture_id: id.into(),
        stored_url: format!("https://store.example/{id}.jpg"),
        checked_at: Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap(),
    }
}

async fn pictures_are_cached_per_session_jid_and_kind(db: &Db) {
    let jid = format!("{LID}@lid");
    assert_eq!(db.cached_picture("a", &jid, "preview").await.unwrap(), None);
    let preview = picture("preview", "111");
    db.cache_picture("a", &preview).await.unwrap();
    assert_eq!(
        db.cached_picture("a", &jid, "preview").await.unwrap(),
        Some(preview.clone())
    );
    assert_eq!(db.cached_picture("a", &jid, "image").await.unwrap(), None);
    assert_eq!(db.cached_picture("b", &jid, "preview").await.unwrap(), None);
    // Replaced as a whole.
    let mut hidden = preview.clone();
    hidden.picture_id = String::new();
    hidden.url = String::new();
    hidden.reason = "hidden by privacy settings".into();
    hidden.checked_at = preview.checked_at + Duration::hours(1);
    db.cache_picture("a", &hidden).await.unwrap();
    assert_eq!(
        db.cached_picture("a", &jid, "preview").await.unwrap(),
        Some(hidden)
    );
}
