//! The network port (crate `parley-network`), re-exported where the worker's
//! code looks for it, and the sandbox adapter. The real adapter lives in its
//! own crate (`parley-network-whatsapp`); the binary picks one.
pub use parley_network::*;
pub mod sandbox;
