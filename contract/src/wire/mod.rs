//! HTTP request and response bodies (serde, camelCase), one module per resource.
pub mod console;
pub mod contacts;
pub mod events;
pub mod groups;
pub mod health;
pub mod inbox;
pub mod integers;
pub mod labels;
pub mod messages;
pub mod meta;
pub mod sandbox;
pub mod sessions;
