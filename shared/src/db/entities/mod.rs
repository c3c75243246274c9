//! The sea-orm entities, one module per table, with the queries on that table.
pub mod contacts;
pub mod events;
pub mod group_subjects;
pub mod history;
pub mod labels;
pub mod profile_pictures;
pub mod session_states;
pub mod sessions;
pub mod status_posts;
