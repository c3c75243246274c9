//! End-to-end tests: the real `parley` binary against real services.
mod cluster;
mod contacts;
mod dead_stores;
mod events;
mod foundation;
mod groups;
mod hosted_sends;
mod inbox;
mod metrics;
mod picture_links;
mod sends;
mod sessions;
mod shapes;
mod support;
mod surface;
mod traces;
mod unreachable;
