//! Infrastructure: configuration, the bus and lease ports with their NATS,
//! Redis and in-process adapters, the database, the media store, egress and
//! telemetry. What pods say to each other is the `parley-contract` crate; the
//! message model (addresses, ids, content) is the `parley-model` crate.
pub mod bus;
pub mod config;
pub mod db;
pub mod digest;
pub mod egress;
pub mod event_stream;
pub mod lease;
pub mod media;
pub mod metrics;
pub mod picture_links;
pub mod ports;
pub mod store_keys;
pub mod telemetry;
pub mod urls;
