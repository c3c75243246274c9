//! Mentions on a real (never connected) client: the stored LID <-> phone
//! mapping decides what bare user-parts are; what it does not know falls back
//! to the length rule when the number check cannot reach the network.
use whatsapp_rust::wacore::store::traits::{LidPnMappingEntry, ProtocolStore};

use super::connect::sqlite;
use super::offline_bot;
use crate::live::authors::Authors;
use crate::live::connection::LiveConnection;
use crate::store::SeaOrmDeviceStore;

const LID: &str = "123456789012345";
const PHONE: &str = "4915100000001";
const PHONE_LID: &str = "998877665544332";

#[tokio::test]
async fn mentions_resolve_through_the_stored_mapping() {
    let (db, _dir) = sqlite().await;
    let store = SeaOrmDeviceStore::new(db, "live1", 1).expect("store");
    for (lid, phone) in [(LID, "4915100000009"), (PHONE_LID, PHONE)] {
        let entry = LidPnMappingEntry {
            lid: lid.into(),
            phone_number: phone.into(),
            created_at: 1,
            updated_at: 1,
            learning_source: "usync".into(),
        };
        store.put_lid_mapping(&entry).await.expect("mapping");
    }
    let bot = offline_bot(store).await;
    let connection = LiveConnection::new(
        bot.client(),
        None,
        Authors::default(),
        crate::live::durable::Acks::default(),
        crate::live::server_acks::ServerAcks::default(),
    );

    let given: Vec<String> = [
        LID,                      // a LID the mapping knows
        PHONE,                    // a phone number the mapping knows: its LID
        "4915122223333",          // unknown, unchecked (offline): a phone number
        "12345678901234567",      // unknown, longer than any phone number: a LID
        "5550001@s.whatsapp.net", // a full JID, kept
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(
        connection.mention_jids(&given).await,
        vec![
            format!("{LID}@lid"),
            format!("{PHONE_LID}@lid"),
            "4915122223333@s.whatsapp.net".to_string(),
            "12345678901234567@lid".to_string(),
            "5550001@s.whatsapp.net".to_string(),
        ]
    );
}
