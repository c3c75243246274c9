//! Health probes: liveness, readiness with dependency flags and session counts,
//! and per-session health of this node.
use std::time::Duration;

use actix_web::{HttpResponse, get, web};
use parley_contract::wire::health::{ClientHealth, Clients, Live, Ready, SessionCounts};
use parley_shared::db::sessions::Health;

use crate::{AppState, HttpError, Surface};

/// How long one dependency check may take before it counts as down.
const CHECK_BUDGET: Duration = Duration::from_secs(2);

#[utoipa::path(tag = "health", responses((status = 200, description = "The process is up")))]
#[get("/health")]
pub async fn health(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok", "podName": state.pod_name }))
}

#[utoipa::path(tag = "health", responses((status = 200, body = Live)))]
#[get("/health/live")]
pub async fn live(state: web::Data<AppState>) -> web::Json<Live> {
    web::Json(Live {
        status: "ok".into(),
        pod_name: state.pod_name.clone(),
        uptime: format_uptime(state.started.elapsed()),
    })
}

#[utoipa::path(tag = "health", responses(
    (status = 200, body = Ready),
    (status = 503, body = Ready, description = "The database is unreachable"),
))]
#[get("/health/ready")]
pub async fn ready(state: web::Data<AppState>) -> HttpResponse {
    let Checks {
        database,
        storage,
        bus,
        leases,
        events,
    } = checks(&state).await;
    let sessions = if database {
        counts(&state).await.unwrap_or_default()
    } else {
        SessionCounts::default()
    };
    let status = if !database {
        "unavailable"
    } else if storage && bus && leases && events {
        "ok"
    } else {
        "degraded"
    };
    let body = Ready {
        status: status.into(),
        pod_name: state.pod_name.clone(),
        database,
        storage,
        bus,
        leases,
        events,
        proxy: state.config.network_proxy.is_some(),
        alerts: false,
        sessions,
    };
    if database {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}

/// Whether each dependency answers now, each within [`CHECK_BUDGET`].
pub(crate) struct Checks {
    pub database: bool,
    pub storage: bool,
    pub bus: bool,
    pub leases: bool,
    /// The event log takes events: the database, and in the cluster the
    /// stream of bodies.
    pub events: bool,
}

pub(crate) async fn checks(state: &AppState) -> Checks {
    let ports = &state.ports;
    let within = |f| async move { tokio::time::timeout(CHECK_BUDGET, f).await.unwrap_or(false) };
    let (database, storage, bus, leases, stream) = tokio::join!(
        within(Box::pin(ports.db.ping()) as std::pin::Pin<Box<dyn Future<Output = bool> + Send>>),
        within(Box::pin(ports.media.healthy())),
        within(Box::pin(ports.bus.healthy())),
        within(Box::pin(ports.leases.healthy())),
        within(Box::pin(stream_healthy(&ports.db))),
    );
    Checks {
        database,
        storage,
        bus,
        leases,
        events: database && stream,
    }
}

/// Whether the cluster's event stream answers (true without one).
async fn stream_healthy(db: &parley_shared::db::Db) -> bool {
    match db.event_stream() {
        Some(stream) => stream.check().await.is_ok(),
        None => true,
    }
}

async fn counts(state: &AppState) -> Result<SessionCounts, HttpError> {
    let mut c = SessionCounts::default();
    for row in state.ports.db.sessions().await? {
        c.total += 1;
        match row.health() {
            Health::Connected => c.connected += 1,
            Health::Down => c.down += 1,
            Health::Terminal => c.terminal += 1,
            Health::Pairing => {}
        }
    }
    Ok(c)
}

#[utoipa::path(tag = "health", responses((status = 200, body = Clients)))]
#[get("/health/clients")]
pub async fn clients(state: web::Data<AppState>) -> Result<web::Json<Clients>, HttpError> {
    let rows = state.ports.db.sessions().await?;
    // API pods front every session; a worker reports the sessions it owns.
    let mine = |pod: &str| state.surface == Surface::Gateway || pod == state.pod_name;
    let mut failed_count = 0;
    let clients = rows
        .into_iter()
        .filter(|r| mine(&r.pod_name))
        .map(|r| {
            if matches!(r.health(), Health::Down | Health::Terminal) {
                failed_count += 1;
            }
            ClientHealth {
                client_id: r.client_id,
                jid: r.jid,
                status: r.status,
                connected: r.connected,
                logged_in: r.logged_in,
                enable_group_ai: r.enable_group_ai,
                reconnects: r.reconnects,
                connected_at: r.connected_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
                last_disconnect: r.last_disconnect,
            }
        })
        .collect();
    Ok(web::Json(Clients {
        pod_name: state.pod_name.clone(),
        failed_count,
        clients,
    }))
}

fn format_uptime(d: Duration) -> String {
    let s = d.as_secs();
    let (h, m, s) = (s / 3600, (s % 3600) / 60, s % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}
