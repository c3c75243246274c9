//! Support for the end-to-end tests: where the real services are, fresh
//! isolated state per test, and `parley` processes started and stopped for real.
pub mod browser;
pub mod cpu;
pub mod files;
pub mod listeners;
pub mod multipart;
pub mod nats_server;
pub mod packaged;
pub mod postgres_server;
pub mod process;
pub mod qr;
pub mod receiver;
pub mod redis_server;
pub mod relay;
pub mod runs;
pub mod s3_server;
pub mod services;
pub mod stats;
pub mod test_network;

pub use process::{Parley, free_port};
