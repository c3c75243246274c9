//! The real network adapter on whatsapp-rust: the device store (`store`: the
//! library's storage `Backend` in the gateway's database, fenced by the session
//! lease) and the pure message conversions (`convert`: waproto messages to and
//! from the port's types). The live connection wiring comes on top of these.
pub mod convert;
pub mod store;
