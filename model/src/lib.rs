//! The message model, defined once and used by every crate: addresses and ids
//! ([`address`], [`ids`], [`recipients`]), what a customer asks to send
//! ([`outgoing`]), what the network delivers ([`inbound`]) and the files both
//! carry ([`media`]). It depends on
//! no other crate of the gateway: the API's compose step builds it, the bus
//! carries it, the worker and the network port pass it on, and only the
//! adapters turn it into their network's structures.
pub mod address;
pub mod ids;
pub mod inbound;
pub mod invalid;
pub mod media;
pub mod outgoing;
pub mod recipients;

pub use address::{Jid, MessageId, PhoneNumber};
pub use ids::{ChatRoomId, ClientId};
pub use invalid::Invalid;
