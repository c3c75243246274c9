//! What the gateway's pods say to each other: the commands an API pod sends a
//! session's owner and its replies, contact and group queries, the webhook
//! event envelope, `ApiError`, the HTTP API's wire types, and a file's bytes
//! as they travel (`spool`). No database, bus or network here: this crate and
//! `parley-model` are all the network port depends on.
pub mod command;
pub mod error;
pub mod event;
pub mod pacing;
pub mod queries;
pub mod redact;
pub mod spool;
pub mod wire;
