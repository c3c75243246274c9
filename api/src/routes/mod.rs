//! Registers every route in one place, so the OpenAPI document and the route
//! inventory come from the same calls that build the router.
mod avatars;
mod calls;
mod contacts;
mod events;
mod feed;
mod groups;
pub(crate) mod health;
mod inbox;
mod labels;
pub(crate) mod lifecycle;
mod media;
mod media_files;
mod media_send;
mod messages;
mod meta;
mod overview;
mod presence;
mod prometheus;
pub(crate) mod proxies;
mod receipts;
pub(crate) mod sessions;
mod settings;
mod statuses;
mod updates;

use actix_web::dev::{ServiceFactory, ServiceRequest};
use utoipa_actix_web::UtoipaApp;

use crate::Surface;
use crate::extension::RouteSet;

/// The API's routes for `surface`, with `extra`'s (an adapter's own).
pub fn register<T>(app: UtoipaApp<T>, surface: Surface, extra: &RouteSet) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    if surface == Surface::Operations {
        return app.service(prometheus::metrics);
    }
    let app = app
        .service(health::health)
        .service(health::live)
        .service(health::ready)
        .service(health::clients);
    // An adapter's routes served everywhere (the sandbox's picture links,
    // whichever server of the deployment made them).
    let app = app.configure(extra.everywhere);
    if surface == Surface::ProbesOnly {
        return app;
    }
    let app = app.configure(extra.gateway);
    app.service(meta::config)
        .service(sessions::clients)
        .service(overview::sessions)
        .service(overview::session_history)
        .service(overview::cluster)
        .service(sessions::check_state)
        .service(sessions::set_api_secret)
        .service(lifecycle::start)
        .service(lifecycle::qr)
        .service(lifecycle::pair_phone)
        .service(lifecycle::disconnect)
        .service(settings::set_webhook)
        .service(settings::set_webhook_types)
        .service(settings::set_org_id)
        .service(settings::set_enable_group_ai)
        .service(settings::set_events)
        .service(settings::set_send_pacing)
        .service(presence::set_presence)
        .service(calls::set_call_rejection)
        .service(calls::reject_call)
        .service(proxies::set_proxy)
        .service(statuses::send_status)
        .service(statuses::delete_status)
        .service(messages::send_message)
        .service(media_send::send_media)
        .service(messages::send_poll)
        .service(messages::send_interactive)
        .service(updates::send_reaction)
        .service(updates::edit_message)
        .service(messages::send_location)
        .service(messages::send_contact)
        .service(updates::send_typing)
        .service(updates::delete_message)
        .service(receipts::mark_read)
        .service(receipts::mark_unread)
        .service(labels::labels)
        .service(labels::set_label)
        .service(labels::delete_label)
        .service(labels::set_chat_label)
        .service(events::events)
        .service(feed::feed)
        .service(events::dead_letters)
        .service(events::redeliver)
        .service(inbox::chat_rooms)
        .service(inbox::messages)
        .service(inbox::media_url)
        .service(inbox::read)
        .service(avatars::refresh_avatars)
        .service(media_files::media_files)
        .service(media_files::media_file_url)
        .service(contacts::user_info)
        .service(contacts::check_owner_lid)
        .service(contacts::profile_picture)
        .service(contacts::subscribe_presence)
        .service(groups::get_groups)
        .service(groups::get_group_participants)
        .service(groups::create_group)
        .service(groups::update_group_members)
        .service(groups::group_invite_link)
        .service(groups::leave_group)
        .service(meta::openapi_json)
        .service(media::public_file)
}

/// Operations of a session's account need it paired: 404 for a session
/// that does not exist or is not paired.
async fn paired(
    state: &crate::AppState,
    id: &parley_model::ids::ClientId,
) -> Result<(), parley_contract::error::ApiError> {
    let paired = state
        .ports
        .db
        .session(id.as_str())
        .await?
        .is_some_and(|s| !s.jid.is_empty());
    if paired {
        Ok(())
    } else {
        Err(parley_contract::error::ApiError::not_found(
            "unknown or unpaired clientId",
        ))
    }
}
