//! The hosted inbox's entities: chat rooms, messages, media-library records
//! (queries across them are in `db::history`).
pub mod media_files;
pub mod messages;
pub mod rooms;
