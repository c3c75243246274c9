//! A history's contact names handed over with both halves of each
//! address, whichever chunk came first.
use std::collections::HashMap;
use std::sync::Mutex;

use whatsapp_rust::Jid;

use crate::live::history_names::{Pair, Pairs, UNPAIRED_KEPT, UnpairedNames};
use parley_network::ContactName;

const LID: &str = "924378283127736";
const PHONE: &str = "4915100000002";

/// The pairs a client knows: by LID and by phone user part.
#[derive(Default)]
struct Known(Mutex<HashMap<String, Pair>>);

impl Known {
    fn learn(&self, lid: &str, phone: &str) {
        let pair = (lid.to_string(), phone.to_string());
        let mut known = self.0.lock().unwrap();
        known.insert(lid.to_string(), pair.clone());
        known.insert(phone.to_string(), pair);
    }
}

impl Pairs for Known {
    async fn pair_of(&self, jid: &Jid) -> Option<Pair> {
        self.0.lock().unwrap().get(&jid.user.to_string()).cloned()
    }
}

fn jid(s: &str) -> Jid {
    s.parse().expect("a JID")
}

fn name(lid: &str, phone: &str, name: &str) -> ContactName {
    ContactName {
        lid: lid.into(),
        phone: phone.into(),
        name: name.into(),
    }
}

#[tokio::test]
async fn a_name_whose_pair_is_known_is_handed_over_whole_once() {
    let known = Known::default();
    known.learn(LID, PHONE);
    let unpaired = UnpairedNames::default();
    let fresh = vec![
        (jid(&format!("{LID}@lid")), "Ann Lee".to_string()),
        (jid(&format!("{PHONE}@s.whatsapp.net")), "Ann".to_string()),
    ];
    let named = unpaired.pair(fresh, &known).await;
    assert_eq!(
        named,
        [name(LID, PHONE, "Ann Lee"), name(LID, PHONE, "Ann")]
    );
    assert_eq!(unpaired.len(), 0);
    let again = unpaired.pair(Vec::new(), &known).await;
    assert!(again.is_empty(), "{again:?}");
}

#[tokio::test]
async fn a_name_before_its_pair_comes_by_lid_then_whole_once_the_pair_is_known() {
    let known = Known::default();
    let unpaired = UnpairedNames::default();
    let fresh = vec![
        (jid(&format!("{LID}@lid")), "Ann Lee".to_string()),
        // By phone alone: not handed over until its LID is known.
        (jid("4915100000003@s.whatsapp.net"), "Bo".to_string()),
    ];
    let named = unpaired.pair(fresh, &known).await;
    assert_eq!(named, [name(LID, "", "Ann Lee")]);
    assert_eq!(unpaired.len(), 2);
    // A chunk that pairs neither changes nothing.
    let named = unpaired.pair(Vec::new(), &known).await;
    assert!(named.is_empty(), "{named:?}");
    // The bootstrap's mappings arrive: each is handed over whole, once.
    known.learn(LID, PHONE);
    known.learn("777", "4915100000003");
    let named = unpaired.pair(Vec::new(), &known).await;
    assert_eq!(
        named,
        [
            name(LID, PHONE, "Ann Lee"),
            name("777", "4915100000003", "Bo")
        ]
    );
    assert_eq!(unpaired.len(), 0);
    let named = unpaired.pair(Vec::new(), &known).await;
    assert!(named.is_empty(), "{named:?}");
}

#[tokio::test]
async fn the_names_kept_waiting_are_bounded_the_oldest_going_first() {
    let known = Known::default();
    let unpaired = UnpairedNames::default();
    let fresh: Vec<(Jid, String)> = (0..UNPAIRED_KEPT + 5)
        .map(|i| (jid(&format!("49151{i:08}@s.whatsapp.net")), format!("n{i}")))
        .collect();
    let named = unpaired.pair(fresh, &known).await;
    assert!(named.is_empty());
    assert_eq!(unpaired.len(), UNPAIRED_KEPT);
    // The first five were let go; the sixth is still kept.
    known.learn("1", "4915100000000");
    known.learn("6", "4915100000005");
    let named = unpaired.pair(Vec::new(), &known).await;
    assert_eq!(named, [name("6", "4915100000005", "n5")]);
}
