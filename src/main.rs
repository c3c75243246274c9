//! The `parley` binary: one image, the role is the subcommand (`serve` by default).
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use parley_api::{Application, RouteSet, Surface};
use parley_network_sandbox::SandboxNetwork;
use parley_network_whatsapp::live::WhatsappNetwork;
use parley_shared::config::{self, Config};
use parley_shared::ports::Ports;
use parley_worker::Adapter;

#[derive(Parser)]
#[command(
    name = "parley",
    version,
    about = "Self-hosted gateway for linked-device messaging sessions"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Clone, Copy, PartialEq, Eq)]
enum Command {
    /// Everything in one process with embedded defaults (SQLite, local files, in-process bus and leases).
    Serve,
    /// A stateless API pod (cluster): needs PostgreSQL, NATS, Redis and S3.
    Api,
    /// A worker pod that owns sessions (cluster): needs PostgreSQL, NATS, Redis and S3.
    Worker,
    /// Applies database migrations and exits.
    Migrate,
    /// Seals every stored secret again under the active store key
    /// (PARLEY_STORE_KEY_ID), then exits: the step of a key rotation between
    /// switching the active key and removing the old one.
    Rekey,
}

/// The `/sandbox/*` routes over the test network, set by the test-network
/// build's `main_with` only: every other build has none.
static TEST_NETWORK_ROUTES: std::sync::OnceLock<&'static RouteSet> = std::sync::OnceLock::new();

pub fn main() -> std::process::ExitCode {
    main_with(None)
}

/// The program, with the test-network build's `/sandbox/*` routes (served
/// with `PARLEY_NETWORK_CONTROL_URL` only).
pub fn main_with(test_network_routes: Option<&'static RouteSet>) -> std::process::ExitCode {
    if let Some(routes) = test_network_routes {
        let _ = TEST_NETWORK_ROUTES.set(routes);
    }
    // Dependencies may enable more than one rustls provider: choose one, first.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let command = Cli::parse().command.unwrap_or(Command::Serve);
    let (config, warnings) = match Config::load() {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("parley: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = config.runtime_threads(is_cluster(command), cores);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("parley: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(command, config, warnings)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("parley: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn is_cluster(command: Command) -> bool {
    matches!(command, Command::Api | Command::Worker)
}

async fn run(command: Command, config: Config, warnings: Vec<String>) -> anyhow::Result<()> {
    refuse_network_url_without_feature(&config)?;
    let cluster = is_cluster(command);
    if cluster {
        config.require_cluster()?;
    }
    let service = match command {
        Command::Serve => "parley",
        Command::Api => "parley-api",
        Command::Worker => "parley-worker",
        Command::Migrate => "parley-migrate",
        Command::Rekey => "parley-rekey",
    };
    let _telemetry = parley_shared::telemetry::init(
        service,
        config.json_logs(cluster),
        config.otlp_endpoint.as_deref(),
    )?;
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    match command {
        Command::Migrate => migrate(&config).await,
        Command::Rekey => rekey(config).await,
        Command::Serve => serve(config).await,
        Command::Api => api(config).await,
        Command::Worker => worker(config).await,
    }
}

async fn migrate(config: &Config) -> anyhow::Result<()> {
    let db = parley_shared::db::Db::connect(&config.database_url()).await?;
    db.migrate().await?;
    tracing::info!(backend = db.backend(), "migrations applied");
    Ok(())
}

/// Seals every secret under the active key. The keys are those of the
/// deployment (`serve`: its key file, unless PARLEY_STORE_KEYS is set).
async fn rekey(mut config: Config) -> anyhow::Result<()> {
    if config.store_keys.is_none() && config.database_url.is_none() {
        config.store_keys = Some(embedded_store_keys(&config.data_dir)?);
    }
    let keys = config
        .store_keys()?
        .context("PARLEY_STORE_KEYS is not set: there is no key to seal with")?;
    let active = keys.active().unwrap_or_default().to_string();
    let db = parley_shared::db::Db::connect(&config.database_url())
        .await?
        .with_keys(keys);
    db.migrate().await?;
    let sessions = db.rekey_sessions().await?;
    let device = parley_network_whatsapp::store::rekey(&db)
        .await
        .map_err(|e| anyhow::anyhow!("device state: {e}"))?;
    println!(
        "sealed again under store key {active:?}: {} webhook token(s), {} session proxy \
         URL(s), {} device key row(s), {} Signal and app-state key record(s)",
        sessions.webhook_tokens, sessions.proxy_urls, device.devices, device.records
    );
    Ok(())
}

async fn serve(mut config: Config) -> anyhow::Result<()> {
    std::fs::create_dir_all(&config.data_dir).with_context(|| {
        format!(
            "cannot create PARLEY_DATA_DIR {}",
            config.data_dir.display()
        )
    })?;
    if config.account_token.is_none() {
        config.account_token = Some(embedded_token(&config.data_dir)?);
    }
    if config.store_keys.is_none() {
        config.store_keys = Some(embedded_store_keys(&config.data_dir)?);
    }
    let ports = Ports::connect(&config).await?;
    ports.db.migrate().await?;
    let worker =
        parley_worker::start(config.clone(), ports.clone(), adapter(&config, &ports)?).await?;
    let ops = Application::build_ops(&config.ops_bind(false), config.clone(), ports.clone())?;
    let app = Application::build(
        config.clone(),
        ports,
        Surface::Gateway,
        adapter_routes(&config),
    )?;
    tracing::info!(port = app.port(), ops_port = ops.port(), network = ?config.network, "parley serve is listening");
    run_until_signal(app, ops, Some(worker)).await
}

async fn api(config: Config) -> anyhow::Result<()> {
    if config.account_token.is_none() {
        anyhow::bail!("PARLEY_ACCOUNT_TOKEN is required for the api role");
    }
    let ports = Ports::connect(&config).await?;
    let ops = Application::build_ops(&config.ops_bind(true), config.clone(), ports.clone())?;
    let routes = adapter_routes(&config);
    let app = Application::build(config, ports, Surface::Gateway, routes)?;
    tracing::info!(
        port = app.port(),
        ops_port = ops.port(),
        "parley api is listening"
    );
    run_until_signal(app, ops, None).await
}

async fn worker(config: Config) -> anyhow::Result<()> {
    let ports = Ports::connect(&config).await?;
    let worker =
        parley_worker::start(config.clone(), ports.clone(), adapter(&config, &ports)?).await?;
    let ops = Application::build_ops(&config.ops_bind(true), config.clone(), ports.clone())?;
    let routes = adapter_routes(&config);
    let app = Application::build(config, ports, Surface::ProbesOnly, routes)?;
    tracing::info!(
        port = app.port(),
        ops_port = ops.port(),
        "parley worker is running (probes on this port)"
    );
    run_until_signal(app, ops, Some(worker)).await
}

/// The adapter's own HTTP routes: the sandbox's `/sandbox/*` in test mode,
/// and over the test network in the test-network build with its control URL.
fn adapter_routes(config: &Config) -> &'static RouteSet {
    match config.network {
        config::Network::Sandbox => &parley_network_sandbox::routes::ROUTES,
        config::Network::Whatsapp => match (&config.network_control_url, TEST_NETWORK_ROUTES.get())
        {
            (Some(_), Some(routes)) => routes,
            _ => &RouteSet::NONE,
        },
    }
}

/// The network adapter `PARLEY_NETWORK` names.
fn adapter(config: &Config, ports: &Ports) -> anyhow::Result<Adapter> {
    Ok(match config.network {
        config::Network::Sandbox => {
            let sandbox = Arc::new(
                SandboxNetwork::new(
                    ports.db.clone(),
                    Duration::from_secs(config.sandbox_qr_first_secs),
                    Duration::from_secs(config.sandbox_qr_next_secs),
                )
                .with_picture_links(
                    config.public_url(),
                    Duration::from_secs(config.sandbox_picture_link_secs),
                ),
            );
            Adapter {
                network: sandbox.clone(),
                control: Some(sandbox),
            }
        }
        config::Network::Whatsapp => {
            let network = WhatsappNetwork::new(ports.db.clone(), config.network_proxy.as_deref())
                .map_err(|e| anyhow::anyhow!("invalid PARLEY_NETWORK_PROXY: {e}"))?;
            Adapter::network(Arc::new(with_network_url(network, config)?))
        }
    })
}

/// `PARLEY_NETWORK_URL` names a test network server (honoured by the
/// test-network build only, on loopback only); without it the adapter dials
/// the network, which the test-network build refuses, and so does a build
/// whose library accepts an unsigned server certificate chain.
fn with_network_url(network: WhatsappNetwork, config: &Config) -> anyhow::Result<WhatsappNetwork> {
    match config.network_url.as_deref() {
        Some(url) => network
            .with_test_network(url)
            .map_err(|e| anyhow::anyhow!("PARLEY_NETWORK_URL: {e}")),
        None => network
            .for_the_network()
            .map_err(|e| anyhow::anyhow!("refusing to start the whatsapp network: {e}")),
    }
}

/// `PARLEY_NETWORK_URL` is for tests: a build other than the test-network
/// build refuses to start with it rather than ignore it.
fn refuse_network_url_without_feature(config: &Config) -> anyhow::Result<()> {
    if config.network_url.is_some() && !parley_network_whatsapp::live::test_network_build() {
        anyhow::bail!("PARLEY_NETWORK_URL is honoured only by the test-network build (tests only)");
    }
    if config.network_control_url.is_some() {
        if TEST_NETWORK_ROUTES.get().is_none()
            || !parley_network_whatsapp::live::test_network_build()
        {
            anyhow::bail!(
                "PARLEY_NETWORK_CONTROL_URL is honoured only by the test-network build (tests only)"
            );
        }
        if config.network != config::Network::Whatsapp {
            anyhow::bail!("PARLEY_NETWORK_CONTROL_URL needs PARLEY_NETWORK=whatsapp");
        }
    }
    Ok(())
}

/// Serves until SIGINT or SIGTERM, then hands sessions over and stops the server.
async fn run_until_signal(
    app: Application,
    ops: Application,
    worker: Option<parley_worker::WorkerHandle>,
) -> anyhow::Result<()> {
    let handle = app.handle();
    let ops_handle = ops.handle();
    let server = tokio::spawn(app.run_until_stopped());
    let ops_server = tokio::spawn(ops.run_until_stopped());
    shutdown_signal().await;
    tracing::info!("shutting down");
    if let Some(worker) = worker {
        worker.shutdown().await;
    }
    handle.stop(true).await;
    ops_handle.stop(true).await;
    server.await??;
    ops_server.await??;
    Ok(())
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// The embedded account token: read from the data dir, or generated, stored
/// (owner-only) and printed once.
fn embedded_token(data_dir: &Path) -> anyhow::Result<String> {
    let path = data_dir.join("account-token");
    if let Some(token) = read_secret_file(&path) {
        return Ok(token);
    }
    let token = parley_shared::digest::random_token();
    write_secret_file(&path, &token)?;
    println!(
        "Generated account token (stored in {}):\n{token}",
        path.display()
    );
    Ok(token)
}

/// The embedded store keys: read from `<data dir>/store-keys`, or one key
/// generated into it (owner-only). Never printed.
fn embedded_store_keys(data_dir: &Path) -> anyhow::Result<String> {
    let path = data_dir.join("store-keys");
    if let Some(keys) = read_secret_file(&path) {
        return Ok(keys);
    }
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    let keys = parley_shared::store_keys::StoreKeys::generate_entry("k1");
    write_secret_file(&path, &keys)?;
    println!(
        "Generated the key that seals stored secrets: {} (back it up with the \
         database; without it the sessions must be paired again)",
        path.display()
    );
    Ok(keys)
}

fn read_secret_file(path: &Path) -> Option<String> {
    let existing = std::fs::read_to_string(path).ok()?;
    Some(existing.trim().to_string()).filter(|s| !s.is_empty())
}

fn write_secret_file(path: &Path, value: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.write_all(value.as_bytes())?;
    Ok(())
}
