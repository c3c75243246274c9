//! The test network as a process of its own, with its people: the server
//! real whatsapp-rust clients pair with and message through, a primary
//! device for every phone that acts on it, and the control API the
//! test-network build's `/sandbox/*` routes drive (docs/sandbox.md, "The
//! sandbox over the test network"). One of it serves every gateway process
//! of a test, and outlives their restarts. For tests only.
//!
//! Prints one JSON line once it listens: `{"network": <ws URL>, "control":
//! <http URL>}`; runs until SIGINT/SIGTERM (or, with `--exit-with-stdin`,
//! until its standard input closes: the process that started it is gone).
use std::net::SocketAddr;
use std::sync::Arc;

use clap::Parser;
use parley_wire_network::WireNetwork;
use parley_wire_network::world::{World, control};

#[derive(Parser)]
#[command(
    name = "parley-wire-network",
    about = "Parley's wire-level test network (tests only)"
)]
struct Args {
    /// Where clients dial the network (websocket), on loopback.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Where the control API listens, on loopback.
    #[arg(long, default_value = "127.0.0.1:0")]
    control: SocketAddr,
    /// Stop when standard input closes.
    #[arg(long)]
    exit_with_stdin: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    for addr in [args.listen, args.control] {
        anyhow::ensure!(addr.ip().is_loopback(), "{addr} is not a loopback address");
    }
    let net = WireNetwork::start_on(args.listen).await?;
    let network = net.url();
    let world = Arc::new(World::new(net));
    let (control, server) = control::serve(world, args.control)?;
    let server_handle = server.handle();
    tokio::spawn(server);
    println!(
        "{}",
        serde_json::json!({ "network": network, "control": format!("http://{control}") })
    );
    let stdin_closed = async {
        if args.exit_with_stdin {
            let mut sink = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
        _ = stdin_closed => {}
    }
    server_handle.stop(false).await;
    Ok(())
}
