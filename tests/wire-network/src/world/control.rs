//! The world's control API: JSON over HTTP on loopback, for the gateway's
//! `/sandbox/*` routes (`crate::sandbox_routes`) and for tests. Each call is
//! a `World` operation; a refusal is `{error}` with the sandbox contract's
//! status. Operations run on the world's runtime, where its devices live.
use std::net::SocketAddr;
use std::sync::Arc;

use actix_web::{App, HttpResponse, HttpServer, get, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use parley_contract::wire::sandbox::{SandboxContact, SandboxHistory};
use parley_model::inbound::GroupSetting;

use super::{Refusal, SessionRef, World};

struct Ctl {
    world: Arc<World>,
    runtime: tokio::runtime::Handle,
}

/// A session's facts and what to do, as the gateway sends them.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForSession<T> {
    pub session: SessionRef,
    #[serde(flatten)]
    pub request: T,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct LinkRequest {
    pub phone: String,
    #[serde(default)]
    pub name: String,
    pub qr: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct CodeRequest {
    pub code: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct MessageRequest {
    /// The body of `/sandbox/messages`.
    pub message: Value,
    /// Whether to answer only once the session's device acknowledged the
    /// message (for one the gateway logs no event of).
    #[serde(default)]
    pub acknowledged: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct OutboxRequest {
    pub to: Option<String>,
    pub since: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct FaultRequest {
    pub op: String,
    pub count: u32,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Nothing {}

#[derive(Debug, Serialize, Deserialize)]
pub struct GroupRequest {
    pub subject: String,
    #[serde(default)]
    pub participants: Vec<String>,
    #[serde(default)]
    pub admins: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptRequest {
    pub from: String,
    pub status: String,
    pub message_ids: Vec<String>,
    #[serde(default)]
    pub group: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TypingRequest {
    pub from: String,
    pub state: String,
    #[serde(default)]
    pub group: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct MembersRequest {
    pub jid: String,
    pub by: String,
    pub action: String,
    pub participants: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SettingRequest {
    pub jid: String,
    pub setting: GroupSetting,
    /// The member who changes it (a phone); the session's phone when absent.
    #[serde(default)]
    pub by: Option<String>,
}

/// Serves the control API on `addr`; returns where it listens and the
/// server, to be run on the world's runtime.
pub fn serve(
    world: Arc<World>,
    addr: SocketAddr,
) -> anyhow::Result<(SocketAddr, actix_web::dev::Server)> {
    let ctl = web::Data::new(Ctl {
        world,
        runtime: tokio::runtime::Handle::current(),
    });
    let listener = std::net::TcpListener::bind(addr)?;
    let addr = listener.local_addr()?;
    let server = HttpServer::new(move || {
        App::new()
            .app_data(ctl.clone())
            .app_data(web::JsonConfig::default().limit(128 << 20))
            .service(ready)
            .service(link)
            .service(enter_code)
            .service(contacts)
            .service(history)
            .service(messages)
            .service(outbox)
            .service(unlink)
            .service(faults)
            .service(code_fault)
            .service(groups)
            .service(group_setting)
            .service(presence)
            .service(group_members)
            .service(receipts)
            .service(typing)
            .service(calls)
            .service(end_call)
            .service(labels)
    })
    .workers(2)
    .listen(listener)?
    .disable_signals()
    .run();
    Ok((addr, server))
}

/// Runs `op` on the world's runtime and answers its outcome.
async fn on_world<T, F>(ctl: &Ctl, op: impl FnOnce(Arc<World>) -> F) -> HttpResponse
where
    T: Serialize + Send + 'static,
    F: std::future::Future<Output = Result<T, Refusal>> + Send + 'static,
{
    let done = ctl.runtime.spawn(op(Arc::clone(&ctl.world))).await;
    match done {
        Ok(Ok(answer)) => HttpResponse::Ok().json(answer),
        Ok(Err(refusal)) => {
            let status = actix_web::http::StatusCode::from_u16(refusal.status())
                .unwrap_or(actix_web::http::StatusCode::BAD_GATEWAY);
            HttpResponse::build(status).json(json!({ "error": refusal.message() }))
        }
        Err(e) => HttpResponse::InternalServerError().json(json!({ "error": e.to_string() })),
    }
}

#[get("/health/ready")]
async fn ready() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "ok": true }))
}

#[post("/link")]
async fn link(ctl: web::Data<Ctl>, body: web::Json<LinkRequest>) -> HttpResponse {
    let b = body.into_inner();
    on_world(
        &ctl,
        |w| async move { w.link(&b.phone, &b.name, &b.qr).await },
    )
    .await
}

#[post("/enter-code")]
async fn enter_code(ctl: web::Data<Ctl>, body: web::Json<CodeRequest>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move { w.enter_code(&b.code).await }).await
}

#[post("/contacts")]
async fn contacts(ctl: web::Data<Ctl>, body: web::Json<SandboxContact>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move { w.contact(b).await }).await
}

#[post("/history")]
async fn history(ctl: web::Data<Ctl>, body: web::Json<SandboxHistory>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move { w.history(b).await }).await
}

#[post("/messages")]
async fn messages(
    ctl: web::Data<Ctl>,
    body: web::Json<ForSession<MessageRequest>>,
) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let message = serde_json::from_value(b.request.message)
            .map_err(|e| Refusal::Invalid(format!("invalid body: {e}")))?;
        let id = w.message(&b.session, message).await?;
        if b.request.acknowledged {
            w.acknowledged(&b.session, &id).await?;
        }
        Ok(json!({ "messageId": id }))
    })
    .await
}

#[post("/outbox")]
async fn outbox(ctl: web::Data<Ctl>, body: web::Json<ForSession<OutboxRequest>>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let entries = w
            .outbox(&b.session, b.request.to.as_deref(), b.request.since)
            .await;
        Ok(json!({ "messages": entries }))
    })
    .await
}

#[post("/unlink")]
async fn unlink(ctl: web::Data<Ctl>, body: web::Json<ForSession<Nothing>>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        w.unlink(&b.session)?;
        Ok(json!({ "ok": true }))
    })
    .await
}

#[post("/faults")]
async fn faults(ctl: web::Data<Ctl>, body: web::Json<ForSession<FaultRequest>>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        w.fault(&b.session, &b.request.op, b.request.count)?;
        Ok(json!({ "ok": true }))
    })
    .await
}

#[derive(Debug, Serialize, Deserialize)]
pub struct CodeFaultRequest {
    /// The QR code the session shows (it names the socket's noise key).
    pub qr: String,
    pub count: u32,
}

#[post("/code-fault")]
async fn code_fault(ctl: web::Data<Ctl>, body: web::Json<CodeFaultRequest>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        w.code_fault(&b.qr, b.count)?;
        Ok(json!({ "ok": true }))
    })
    .await
}

#[post("/groups")]
async fn groups(ctl: web::Data<Ctl>, body: web::Json<ForSession<GroupRequest>>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let r = &b.request;
        w.create_group(&b.session, &r.subject, &r.participants, &r.admins)
            .await
    })
    .await
}

#[post("/groups/setting")]
async fn group_setting(
    ctl: web::Data<Ctl>,
    body: web::Json<ForSession<SettingRequest>>,
) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let r = &b.request;
        w.group_setting(&b.session, &r.jid, r.by.as_deref(), &r.setting)
            .await?;
        Ok(json!({ "ok": true }))
    })
    .await
}

#[post("/groups/participants")]
async fn group_members(
    ctl: web::Data<Ctl>,
    body: web::Json<ForSession<MembersRequest>>,
) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let r = &b.request;
        w.change_members(&b.session, &r.jid, &r.by, &r.action, &r.participants)
            .await
    })
    .await
}

#[post("/receipts")]
async fn receipts(
    ctl: web::Data<Ctl>,
    body: web::Json<ForSession<ReceiptRequest>>,
) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let r = &b.request;
        w.receipt(
            &b.session,
            &r.from,
            &r.status,
            &r.message_ids,
            r.group.as_deref(),
        )
        .await?;
        Ok(json!({ "ok": true }))
    })
    .await
}

#[derive(Debug, Serialize, Deserialize)]
pub struct PresenceRequest {
    pub from: String,
    pub available: bool,
}

#[post("/presence")]
async fn presence(
    ctl: web::Data<Ctl>,
    body: web::Json<ForSession<PresenceRequest>>,
) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let r = &b.request;
        w.presence(&b.session, &r.from, r.available).await?;
        Ok(json!({ "ok": true }))
    })
    .await
}

#[post("/typing")]
async fn typing(ctl: web::Data<Ctl>, body: web::Json<ForSession<TypingRequest>>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let r = &b.request;
        w.typing(&b.session, &r.from, &r.state, r.group.as_deref())
            .await?;
        Ok(json!({ "ok": true }))
    })
    .await
}

#[derive(Debug, Serialize, Deserialize)]
pub struct CallRequest {
    pub from: String,
    pub video: bool,
    #[serde(default)]
    pub group: Option<String>,
}

#[post("/calls")]
async fn calls(ctl: web::Data<Ctl>, body: web::Json<ForSession<CallRequest>>) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let r = &b.request;
        let call_id = w
            .call(&b.session, &r.from, r.video, r.group.as_deref())
            .await?;
        Ok(json!({ "callId": call_id }))
    })
    .await
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallEndRequest {
    pub from: String,
    pub call_id: String,
    #[serde(default)]
    pub reason: Option<String>,
}

#[post("/calls/end")]
async fn end_call(
    ctl: web::Data<Ctl>,
    body: web::Json<ForSession<CallEndRequest>>,
) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        let r = &b.request;
        w.end_call(&b.session, &r.from, &r.call_id, r.reason.as_deref())
            .await?;
        Ok(json!({ "ok": true }))
    })
    .await
}

#[post("/labels")]
async fn labels(
    ctl: web::Data<Ctl>,
    body: web::Json<ForSession<parley_network::test_network::PhoneLabel>>,
) -> HttpResponse {
    let b = body.into_inner();
    on_world(&ctl, |w| async move {
        w.phone_label(&b.session, b.request).await?;
        Ok(json!({ "ok": true }))
    })
    .await
}
