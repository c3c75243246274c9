//! The network port's contract suite over the real whatsapp-rust adapter, on
//! the wire-level test network: a test phone scans, takes a typed code and
//! unlinks, a test contact writes and reads; device keys in SQLite.
mod support;

use parley_network::contract;
use support::{fixture, subject};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_pairs_by_qr_and_reconnects_without_a_scan() {
    let f = fixture("w1").await;
    contract::pairs_by_qr_and_reconnects_without_a_scan(subject(&f, "w1")).await;
    assert!(
        f.wire.net.handshakes("IK") >= 1,
        "the reconnect resumed with IK"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_the_phones_past_arrives_after_linking() {
    let f = fixture("w11").await;
    contract::the_phones_past_arrives_after_linking(subject(&f, "w11")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_texts_go_out_and_come_in() {
    let f = fixture("w2").await;
    contract::texts_go_out_and_come_in(subject(&f, "w2")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_unlinking_logs_out_and_forgetting_pairs_anew() {
    let f = fixture("w3").await;
    contract::unlinking_logs_out_and_forgetting_pairs_anew(subject(&f, "w3")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_pairs_by_code_and_reconnects_without_one() {
    let f = fixture("w4").await;
    contract::pairs_by_code_and_reconnects_without_one(subject(&f, "w4")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_looks_up_numbers_people_and_pictures() {
    let f = fixture("w5").await;
    contract::looks_up_numbers_people_and_pictures(subject(&f, "w5")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_a_picture_for_contacts_shows_once_its_owner_wrote() {
    let f = fixture("w12").await;
    contract::a_picture_for_contacts_shows_once_its_owner_wrote(subject(&f, "w12")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_a_refused_send_is_an_error() {
    let f = fixture("w6").await;
    contract::a_refused_send_is_an_error(subject(&f, "w6")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_a_message_without_a_privacy_token_is_refused_naming_it() {
    let f = fixture("w10").await;
    contract::a_message_without_a_privacy_token_is_refused_naming_it(subject(&f, "w10")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_a_send_to_a_group_left_is_refused() {
    let f = fixture("w7").await;
    contract::a_send_to_a_group_left_is_refused(subject(&f, "w7")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_a_sessions_proxy_carries_its_connection() {
    let f = fixture("w13").await;
    contract::a_sessions_proxy_carries_its_connection(subject(&f, "w13")).await;
}
