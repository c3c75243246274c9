//! Contract tests of every port: one suite per port, run against both adapters.
mod bus;
mod contacts;
mod db;
mod event_stream;
mod events;
mod history;
mod lease;
mod literal;
mod media;
mod nats_drain;
mod overview;
mod rides;
mod support;
