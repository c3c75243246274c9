//! `parley` built with the `test-network` feature, under its own name so the
//! default `parley` binary never carries the switch: it honours
//! `PARLEY_NETWORK_URL` (a loopback test network server) and skips the
//! network's certificate-chain check. For `scripts/wire-e2e.sh` only; never
//! deploy it.
#[path = "../main.rs"]
mod program;

fn main() -> std::process::ExitCode {
    program::main()
}
