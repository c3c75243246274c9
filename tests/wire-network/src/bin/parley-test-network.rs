//! `parley` built in this workspace of its own, where whatsapp-rust's
//! certificate-chain check is off (`danger-skip-cert-chain-verify`), under its
//! own name, so no build of the root workspace carries the switch: it honours
//! `PARLEY_NETWORK_URL` (a loopback test network server) and refuses to dial
//! the network; with `PARLEY_NETWORK_CONTROL_URL` it also serves the
//! sandbox's `/sandbox/*` routes over that test network
//! (`parley_wire_network::sandbox_routes`). For tests only; never deploy it.
#[path = "../../../../src/main.rs"]
#[allow(dead_code)] // its `main` is the shipped build's; this one passes its routes
mod program;

fn main() -> std::process::ExitCode {
    program::main_with(Some(&parley_wire_network::sandbox_routes::ROUTES))
}
