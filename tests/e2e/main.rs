//! End-to-end tests: the real `parley` binary against real services.
mod cluster;
mod contacts;
mod events;
mod foundation;
mod groups;
mod inbox;
mod metrics;
mod sends;
mod sessions;
mod support;
mod surface;
mod traces;
mod unreachable;
