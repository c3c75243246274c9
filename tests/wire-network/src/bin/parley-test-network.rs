//! `parley` built with the adapter's `test-network` feature, under its own
//! name and in this workspace of its own, so no build of the root workspace
//! carries the switch: it honours `PARLEY_NETWORK_URL` (a loopback test
//! network server), skips the network's certificate-chain check and refuses
//! to dial the network. For the wire-level tests only; never deploy it.
#[path = "../../../../src/main.rs"]
mod program;

fn main() -> std::process::ExitCode {
    program::main()
}
