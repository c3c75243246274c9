//! The sea-orm entities of the device store's tables (`migrations/src/m0010_device_store.rs`),
//! one module per table, grouped by the storage trait that owns them.
pub mod app_sync;
pub mod device;
pub mod messages;
pub mod protocol;
pub mod signal;
