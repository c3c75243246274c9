#!/usr/bin/env bash
# Runs the real network adapter end to end on Parley's wire-level test
# network (tests/wire-network) with cargo nextest: the wire workspace's own
# tests, then the root's end-to-end suite over the test network (a subset,
# see below). Builds what it needs (nothing when scripts/test.sh built it
# already) and ends with nextest's summaries.
#
# tests/wire-network is a workspace of its own: its whatsapp-rust has the
# certificate-chain check off (`danger-skip-cert-chain-verify`), which no
# build of the root workspace may see.
#
#   scripts/wire-e2e.sh [TEST-FILTER...]
#
# Brings up the test services through scripts/with-services.sh when they are
# not given (PARLEY_TEST_*).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/parley-target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
export RUST_LOG=${RUST_LOG:-warn}

# The cluster test needs PostgreSQL, Redis, NATS and S3: run inside the test
# services unless the caller (scripts/test.sh) already provides them.
if [ -z "${PARLEY_TEST_POSTGRES_URL:-}" ]; then
  exec scripts/with-services.sh "$0" "$@"
fi

# The independent client (Baileys, on Node.js) for the cross-check.
# shellcheck source=lib/services.sh
(source scripts/lib/services.sh && node_packages) || exit

# `parley serve` with the real adapter runs this workspace's own build of the
# program, `parley-test-network`, which cargo builds with the tests.
# A failed test's output tells how far its devices got: the test network's
# own steps and the client library's app-state sync (nextest prints what a
# test logged only when it fails).
RUST_LOG=${WIRE_RUST_LOG:-warn,parley_wire_network=debug,Client/AppState=debug} \
  cargo nextest run --manifest-path tests/wire-network/Cargo.toml --locked --profile ci "$@"

# The end-to-end suite of the root workspace over the test network
# (PARLEY_E2E_NETWORK=wire, docs/sandbox.md): the tests of WIRE_E2E, which
# pass there, one at a time. With filter arguments (a run of some wire tests
# by hand) it is left out; PARLEY_WIRE_E2E=all runs the whole suite instead.
[ $# -eq 0 ] || exit 0
WIRE_E2E=(
  events::every_inbound_type_arrives_signed_with_its_envelope
  events::sandbox_messages_reject_bad_input
  events::groups_only_when_enabled_and_broadcasts_and_channels_never
  events::subjects::group_events_name_the_subject_on_serve
  events::subjects::group_events_name_the_subject_on_a_cluster
  events::delivery::pause_resume_and_token_rotation_apply_to_the_next_event
  events::avatars::rooms_and_events_carry_mirrored_avatars_and_refreshes_count_them
  pacing::sends_keep_the_sessions_pace_on_serve
  traces::a_send_is_one_trace_from_the_api_to_the_webhook
  metrics::counters_follow_a_session_through_pairing_sending_and_a_drop
  inbox::hosted_inbox_routes_read_what_history_stored
  events::history_sync::the_phones_chats_fill_the_hosted_inbox_at_linking_and_reach_no_webhook
  events::history_sync::on_a_cluster_the_phones_chats_are_imported_once_and_stay_through_a_move
  events::group_changes::group_member_changes_are_events_only_for_sessions_that_turned_them_on
  events::group_settings::group_settings_change_as_the_network_lets_them_and_are_events
  events::receipts::receipts_of_sent_messages_are_events_once_turned_on
  events::typing::a_contact_typing_is_an_event_once_turned_on
  events::presence::a_contacts_presence_is_an_event_once_subscribed_and_turned_on
  events::log::a_session_without_a_webhook_logs_its_events_and_pushes_none
  events::selection::a_webhook_takes_the_types_it_selected_on_serve
  events::selection::a_webhook_takes_the_types_it_selected_on_a_cluster_through_a_move
  events::own_presence::a_session_says_its_presence_to_subscribers_on_serve
  events::own_presence::a_session_says_its_presence_again_after_a_move_on_a_cluster
  events::statuses::a_contacts_status_is_an_event_once_turned_on
  events::status_posts::a_session_posts_statuses_to_the_contacts_named_or_all
  events::status_posts::a_status_posted_before_a_move_is_deleted_after_it_on_a_cluster
  events::calls::calls_ring_as_events_and_are_rejected_on_serve
  events::calls::calls_are_rejected_as_they_come_after_a_move_on_a_cluster
  events::calls::a_call_rings_an_account_for_its_contacts_once_the_session_wrote_to_the_caller
  proxies::a_sessions_proxy_carries_its_connection_on_serve
  proxies::a_sessions_proxy_carries_its_connection_after_a_move_on_a_cluster
  full_disk::a_full_disk_refuses_writes_clearly_loses_nothing_and_recovers
  events::labels::labels_are_kept_on_chats_and_filter_the_inbox_on_serve
  events::labels::labels_are_kept_on_chats_and_filter_the_inbox_through_a_move_on_a_cluster
  events::labels::labels_made_on_the_phone_are_kept_and_are_events_when_turned_on_on_serve
  events::labels::labels_made_on_the_phone_are_kept_and_are_events_when_turned_on_on_a_cluster
  events::labels::labels_the_phone_had_before_the_link_are_kept_without_events_on_serve
  events::labels::labels_the_phone_had_before_the_link_are_kept_without_events_on_a_cluster
  contacts::unknown_sessions_are_404_unconnected_409_and_the_lookup_fault_502
  contacts::a_picture_for_contacts_only_shows_once_the_contact_wrote
  security::mirror::serve_mirrors_files_up_to_the_cap_and_says_why_not_beyond
  security::files_from_contacts_are_stored_inert_in_the_bucket
  security::at_rest::serve_seals_webhook_tokens_with_a_key_file_of_its_own_and_rekeys
  sends::cluster::sends_reach_the_network_through_api_and_worker_processes
  sends::media::media_by_url_is_typed_named_and_digested
  sends::media::multipart_uploads_round_trip_and_leave_nothing_behind
  events::from_me_events_come_from_the_phone_and_from_api_sends_with_meta
)
filter=()
if [ "${PARLEY_WIRE_E2E:-}" != all ]; then
  expr=$(printf ' | test(=%s)' "${WIRE_E2E[@]}")
  filter=(-E "${expr# | }" --test-threads 1)
fi
PARLEY_E2E_NETWORK=wire exec cargo nextest run --workspace --locked --profile wire-e2e --test e2e "${filter[@]}"
