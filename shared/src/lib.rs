//! The contract between the API and the workers, and the ports with their adapters.
//! The message model (addresses, ids, content) is the `parley-model` crate.
pub mod bus;
pub mod command;
pub mod config;
pub mod db;
pub mod digest;
pub mod egress;
pub mod error;
pub mod event;
pub mod event_stream;
pub mod lease;
pub mod media;
pub mod metrics;
pub mod pacing;
pub mod picture_links;
pub mod ports;
pub mod queries;
pub mod redact;
pub mod store_keys;
pub mod telemetry;
pub mod urls;
pub mod wire;
