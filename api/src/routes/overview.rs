//! The overview routes the console is built on, answered from the database
//! and the lease store: sessions searched and paged with their health and
//! webhook state, a session's state history, and the cluster at a glance.
use actix_web::{HttpRequest, get, web};
use chrono::{SecondsFormat, Utc};
use parley_contract::error::ApiError;
use parley_contract::wire::console::{
    ApiPod, CallSettings, ClusterSummary, Dependencies, EventTotals, HistoryQuery, SessionHistory,
    SessionOverview, SessionOverviewPage, SessionTotals, SessionsQuery, StateChangeItem,
    WebhookState, WorkerSummary,
};
use parley_contract::wire::inbox::Pagination;
use parley_model::ids::ClientId;
use parley_shared::db::overview::OpenEvents;
use parley_shared::db::sessions::SessionRow;

use super::events::number;
use super::health::{Checks, checks};
use super::inbox::session_for;
use crate::auth::Caller;
use crate::auth::{authorized_client, caller};
use crate::{AppState, HttpError};

/// Sessions per page: at most, and when not given.
const LIMIT_MAX: u64 = 200;
const LIMIT_DEFAULT: u64 = 50;
/// Longest search text.
const QUERY_MAX: usize = 128;

fn rfc3339(t: chrono::DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn webhook(row: &SessionRow, open: OpenEvents) -> WebhookState {
    let state = if row.webhook_url.is_empty() {
        "none"
    } else if open.dead_letters > 0 {
        "dead-letters"
    } else if open.pending > 0 {
        "retrying"
    } else {
        "ok"
    };
    WebhookState {
        url: row.webhook_url.clone(),
        poll_lookup_url: row.poll_lookup_url.clone(),
        state: state.into(),
        pending: open.pending,
        dead_letters: open.dead_letters,
        types: row.selected_types(),
    }
}

fn overview(row: SessionRow, open: OpenEvents) -> SessionOverview {
    SessionOverview {
        webhook: webhook(&row, open),
        client_id: row.client_id,
        jid: row.jid,
        status: row.status,
        connected: row.connected,
        logged_in: row.logged_in,
        pod_name: row.pod_name,
        connected_at: row.connected_at.map(rfc3339).unwrap_or_default(),
        reconnects: row.reconnects,
        last_disconnect: row.last_disconnect,
        org_id: row.org_id,
        has_secret: row.secret_hash.is_some(),
        presence: row.presence,
        calls: CallSettings {
            reject: row.reject_calls,
            reply_text: row.call_reply,
        },
        proxy: super::proxies::shown(&row.proxy_url),
        created_at: rfc3339(row.created_at),
        last_event_seq: open.last_seq,
    }
}

#[utoipa::path(tag = "sessions",
    params(("clientId" = Option<String>, Query, description = "Only this session; a session's secret must name its own"),
        ("q" = Option<String>, Query, description = "Part of a clientId, JID or orgId, any case (at most 128 characters); empty: every session"),
        ("page" = Option<u64>, Query, description = "1-based page, default 1"),
        ("limit" = Option<u64>, Query, description = "Sessions per page, 1 to 200, default 50")),
    responses((status = 200, body = SessionOverviewPage,
            description = "Ordered by clientId; with a session's secret only that session"),
        (status = 400, description = "A bad clientId, page or limit, or a search text over 128 characters")))]
#[get("/sessions")]
pub async fn sessions(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<SessionsQuery>,
) -> Result<web::Json<SessionOverviewPage>, HttpError> {
    let q = query.into_inner();
    let page = number("page", q.page.as_deref(), 1, 1, u64::from(u32::MAX))?;
    let limit = number("limit", q.limit.as_deref(), LIMIT_DEFAULT, 1, LIMIT_MAX)?;
    let text = q.q.unwrap_or_default();
    let text = text.trim();
    if text.chars().count() > QUERY_MAX {
        return Err(ApiError::bad_request(format!("q is at most {QUERY_MAX} characters")).into());
    }
    let only = match (caller(&req), q.client_id) {
        (Caller::Session(own), _) => Some(own),
        (Caller::Account, Some(raw)) => Some(ClientId::parse(&raw)?),
        (Caller::Account, None) => None,
    };
    let db = &state.ports.db;
    let found = db
        .session_page(text, only.as_ref().map(|id| id.as_str()), page, limit)
        .await?;
    let ids: Vec<String> = found.rows.iter().map(|r| r.client_id.clone()).collect();
    let mut open = db.open_events(&ids).await?;
    let sessions = found
        .rows
        .into_iter()
        .map(|row| {
            let events = open.remove(&row.client_id).unwrap_or_default();
            overview(row, events)
        })
        .collect();
    Ok(web::Json(SessionOverviewPage {
        sessions,
        pagination: Pagination {
            page,
            limit,
            total: found.total,
        },
    }))
}

#[utoipa::path(tag = "sessions",
    params(("clientId" = String, Query, description = "The session")),
    responses((status = 200, body = SessionHistory, description = "The last 50 state changes, newest first"),
        (status = 400, description = "Missing or invalid clientId"),
        (status = 404, description = "Unknown clientId")))]
#[get("/session-history")]
pub async fn session_history(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<HistoryQuery>,
) -> Result<web::Json<SessionHistory>, HttpError> {
    let raw = query.into_inner().client_id.unwrap_or_default();
    let id = authorized_client(&req, &raw)?;
    session_for(&req, &state, &id, None).await?;
    let changes = state
        .ports
        .db
        .state_changes(id.as_str())
        .await?
        .into_iter()
        .map(|c| StateChangeItem {
            at: rfc3339(c.at),
            status: c.status,
            connected: c.connected,
            reason: c.reason,
            pod_name: c.pod_name,
        })
        .collect();
    Ok(web::Json(SessionHistory {
        client_id: id.as_str().to_string(),
        changes,
    }))
}

#[utoipa::path(tag = "health",
    responses((status = 200, body = ClusterSummary,
        description = "Workers, API pods, dependencies and totals (account token only)")))]
#[get("/cluster")]
pub async fn cluster(state: web::Data<AppState>) -> Result<web::Json<ClusterSummary>, HttpError> {
    let Checks {
        database,
        storage,
        bus,
        leases,
        events,
    } = checks(&state).await;
    let db = &state.ports.db;
    let totals = db.session_totals().await?;
    let leases_port = &state.ports.leases;
    let members = leases_port.members().await.unwrap_or_default();
    let workers = members
        .into_iter()
        .map(|member| {
            let name = member.name;
            let (owns, connected) = totals.by_pod.get(&name).copied().unwrap_or_default();
            WorkerSummary {
                name,
                load: member.load,
                sessions: owns,
                connected,
            }
        })
        .collect();
    let api_pods = leases_port
        .api_pods()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|name| ApiPod { name })
        .collect();
    let open = db.open_events_total().await?;
    let hour_ago = Utc::now() - chrono::Duration::hours(1);
    Ok(web::Json(ClusterSummary {
        pod_name: state.pod_name.clone(),
        mode: if state.config.nats_url.is_some() {
            "cluster"
        } else {
            "serve"
        }
        .into(),
        api_pods,
        workers,
        dependencies: Dependencies {
            database,
            bus,
            leases,
            storage,
            events,
        },
        sessions: SessionTotals {
            total: totals.total,
            connected: totals.connected,
            failed: totals.failed,
            pairing: totals.pairing,
            reconnects: totals.reconnects,
        },
        events: EventTotals {
            pending: open.pending,
            dead_letters: open.dead_letters,
        },
        disconnects_last_hour: db.disconnects_since(hour_ago).await?,
    }))
}
