//! The HTTP API: authentication, validation, routing of commands to session
//! owners over the bus, hosted-inbox reads, health and configuration.
mod audit;
mod auth;
mod compose;
mod errors;
pub mod extension;
mod feed;
mod inventory;
mod lookup;
mod metrics;
mod openapi_doc;
mod openapi_rules;
mod owner;
mod presence;
mod qr;
mod routes;
mod state;
mod static_pages;
mod trace;
mod upload;

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::{App, HttpServer, web};
use parley_shared::config::Config;
use parley_shared::ports::Ports;
use utoipa_actix_web::AppExt;

pub use errors::HttpError;
pub use extension::RouteSet;
use feed::LiveFeeds;
pub use inventory::Inventory;
pub use state::AppState;

/// Largest JSON body accepted anywhere.
pub const JSON_LIMIT: usize = 1024 * 1024;
/// Largest multipart media upload.
pub const UPLOAD_LIMIT: usize = parley_shared::media::UPLOAD_MAX as usize;

/// The OpenAPI document of the gateway's routes with `extra`'s, as
/// `/openapi.json` serves it.
pub fn openapi(extra: &RouteSet) -> serde_json::Value {
    let mut doc = routes::register(App::new().into_utoipa_app(), Surface::Gateway, extra)
        .split_for_parts()
        .1;
    openapi_doc::complete(&mut doc, auth::is_public, extra);
    openapi_doc::published(&doc, extra)
}

/// The document `/openapi.json` serves.
pub struct Published(pub serde_json::Value);

/// What a listener serves: the gateway routes, only the probes (worker
/// pods), or the operations routes (`/metrics`, on `PARLEY_OPS_BIND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Gateway,
    ProbesOnly,
    Operations,
}

/// A bound, not yet running HTTP server.
pub struct Application {
    port: u16,
    server: Server,
    feeds: Arc<LiveFeeds>,
}

/// Stops a running [`Application`] from elsewhere.
#[derive(Clone)]
pub struct StopHandle {
    server: actix_web::dev::ServerHandle,
    feeds: Arc<LiveFeeds>,
}

impl StopHandle {
    /// Ends the open live feeds (their readers resume on another server),
    /// then stops the server; `graceful` lets requests under way finish.
    pub async fn stop(&self, graceful: bool) {
        self.feeds.close();
        self.server.stop(graceful).await;
    }
}

impl Application {
    /// Binds `config.bind` (port 0 picks a free port) and prepares the server.
    /// With `extra`, an adapter's own routes (`RouteSet::NONE` for none).
    pub fn build(
        config: Config,
        ports: Ports,
        surface: Surface,
        extra: &'static RouteSet,
    ) -> anyhow::Result<Application> {
        let bind = config.bind.clone();
        let state = AppState::new(config, ports, surface).with_routes(extra);
        if surface == Surface::Gateway {
            presence::spawn(state.ports.leases.clone(), state.pod_name.clone());
        }
        Self::build_on(&bind, "PARLEY_BIND", state)
    }

    /// The operations listener on `bind` (`PARLEY_OPS_BIND`, or its default).
    pub fn build_ops(bind: &str, config: Config, ports: Ports) -> anyhow::Result<Application> {
        let state = AppState::new(config, ports, Surface::Operations);
        Self::build_on(bind, "PARLEY_OPS_BIND", state)
    }

    fn build_on(bind: &str, setting: &str, state: AppState) -> anyhow::Result<Application> {
        let listener = TcpListener::bind(bind)
            .map_err(|e| anyhow::anyhow!("cannot listen on {setting}={bind}: {e}"))?;
        let port = listener.local_addr()?.port();
        let feeds = Arc::clone(&state.feeds);
        let state = web::Data::new(state);
        let server = HttpServer::new(move || app(state.clone()))
            .listen(listener)?
            .disable_signals()
            .shutdown_timeout(10)
            .run();
        Ok(Application {
            port,
            server,
            feeds,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// A handle to stop the server gracefully from elsewhere.
    pub fn handle(&self) -> StopHandle {
        StopHandle {
            server: self.server.handle(),
            feeds: Arc::clone(&self.feeds),
        }
    }

    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}

fn app(
    state: web::Data<AppState>,
) -> App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let (extra, surface) = (state.extra, state.surface);
    let (app, mut doc) =
        routes::register(App::new().into_utoipa_app(), state.surface, extra).split_for_parts();
    openapi_doc::complete(&mut doc, auth::is_public, extra);
    let inventory = web::Data::new(Inventory::from_openapi(&doc));
    app.app_data(state)
        .app_data(inventory)
        .app_data(web::Data::new(Published(openapi_doc::published(
            &doc, extra,
        ))))
        .app_data(errors::json_config())
        .app_data(errors::query_config())
        .app_data(errors::path_config())
        .app_data(web::PayloadConfig::new(JSON_LIMIT))
        .configure(|cfg| {
            if surface == Surface::Gateway {
                static_pages::configure(cfg);
            }
        })
        .default_service(web::to(errors::fallback))
        .wrap(actix_web::middleware::from_fn(auth::authenticate))
        .wrap(actix_web::middleware::from_fn(errors::json_errors))
        .wrap(actix_web::middleware::from_fn(metrics::record))
        .wrap(actix_web::middleware::from_fn(trace::span))
}
