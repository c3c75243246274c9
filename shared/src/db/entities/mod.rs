//! The sea-orm entities, one module per table, with the queries on that table.
pub mod history;
pub mod sandbox;
pub mod sessions;
