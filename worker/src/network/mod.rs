//! The network port (crate `parley-network`), re-exported where the worker's
//! code looks for it. The adapters live in crates of their own
//! (`parley-network-sandbox`, `parley-network-whatsapp`); the binary picks one.
pub use parley_network::*;
