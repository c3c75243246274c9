//! Pure conversions between whatsapp-rust's `waproto` messages and the gateway's
//! types, no I/O: `inbound` turns a received message and its envelope into the
//! port's [`InboundMessage`](parley_model::inbound::InboundMessage); `outbound`
//! builds the message the network expects for each send kind from plain request
//! structs (the API's fields). Lookups (poll secrets, LID mappings, group
//! subjects) are done by the adapter and handed in.
mod error;
pub mod inbound;
pub mod outbound;

pub use error::ConvertError;
