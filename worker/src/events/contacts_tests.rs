//! The contact book against a real SQLite store: what it remembers answers
//! for the store until the session is forgotten, and what it learns moves a
//! phone the way the store moves it.
use parley_model::ids::ClientId;
use parley_shared::db::Db;

use super::ContactBook;

async fn store() -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("parley.db").display());
    let db = Db::connect(&url).await.expect("sqlite");
    db.migrate().await.expect("migrations");
    (db, dir)
}

/// The name stored for `lid` of session `c1`.
async fn stored_name(db: &Db, lid: &str) -> String {
    parley_shared::db::entities::contacts::by_lid(db, "c1", lid)
        .await
        .expect("read")
        .expect("the contact")
        .name
}

fn session() -> ClientId {
    ClientId::from_stored("c1".into())
}

#[tokio::test]
async fn a_pair_read_once_answers_from_memory_until_the_session_is_forgotten() {
    let (db, _dir) = store().await;
    let book = ContactBook::new(db.clone());
    let c = session();
    assert_eq!(book.lid(&c, "491").await, None, "nothing learned yet");
    db.learn_contact("c1", "100", "491", "")
        .await
        .expect("write");
    assert_eq!(book.lid(&c, "491").await.as_deref(), Some("100"));
    // Another worker owning the session meanwhile moves the phone.
    db.learn_contact("c1", "200", "491", "")
        .await
        .expect("write");
    assert_eq!(
        book.lid(&c, "491").await.as_deref(),
        Some("100"),
        "read from memory, not the store"
    );
    book.forget(&c);
    assert_eq!(book.lid(&c, "491").await.as_deref(), Some("200"));
}

#[tokio::test]
async fn a_phone_an_event_gives_another_lid_leaves_the_first_for_sends_and_events() {
    let (db, _dir) = store().await;
    let book = ContactBook::new(db.clone());
    let c = session();
    book.met(&c, "100", "491").await;
    assert_eq!(book.lid(&c, "491").await.as_deref(), Some("100"));
    assert_eq!(book.phone(&c, "100").await.as_deref(), Some("491"));
    book.learn(&c, "200", "491", "Ana").await;
    assert_eq!(book.lid(&c, "491").await.as_deref(), Some("200"));
    assert_eq!(book.phone(&c, "100").await, None, "the first LID lost it");
    book.forget(&c);
    assert_eq!(
        book.lid(&c, "491").await.as_deref(),
        Some("200"),
        "as stored"
    );
    assert_eq!(book.phone(&c, "100").await, None, "as stored");
}

#[tokio::test]
async fn a_name_that_comes_after_a_send_looked_the_contact_up_is_stored_once() {
    let (db, _dir) = store().await;
    let book = ContactBook::new(db.clone());
    let c = session();
    book.met(&c, "100", "491").await;
    book.learn(&c, "100", "491", "Ana").await;
    assert_eq!(
        stored_name(&db, "100").await,
        "Ana",
        "the name is written though the pair was known"
    );
    // The same name again writes nothing: a store that changed behind the
    // book's back keeps what it has.
    db.learn_contact("c1", "100", "491", "Other")
        .await
        .expect("write");
    book.learn(&c, "100", "491", "Ana").await;
    assert_eq!(
        stored_name(&db, "100").await,
        "Other",
        "a name already written is not written again"
    );
}
