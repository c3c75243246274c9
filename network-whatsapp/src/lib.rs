//! The real network adapter on whatsapp-rust: the device store (`store`: the
//! library's storage `Backend` in the gateway's database, fenced by the session
//! lease), the pure message conversions (`convert`: waproto messages to and
//! from the port's types), and the live adapter on top of both (`live`).
pub mod convert;
pub mod live;
pub mod store;
