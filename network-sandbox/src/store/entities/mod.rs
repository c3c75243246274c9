//! The sandbox network's entities, one module per table, with their queries
//! (functions over the gateway's [`Db`](parley_shared::db::Db)).
pub mod connections;
pub mod devices;
pub mod faults;
pub mod groups;
pub mod history;
pub mod keys;
pub mod media;
pub mod outbox;
pub mod pair_codes;
pub mod phones;
pub mod qr;
pub mod tokens;
