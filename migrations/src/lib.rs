//! The database schema as an append-only list of migrations, for PostgreSQL and SQLite.
//!
//! Never edit a migration that has shipped: add `mNNNN_<what>.rs` and list it last.
pub use sea_orm_migration;
pub use sea_orm_migration::MigratorTrait;

use sea_orm_migration::{MigrationTrait, async_trait};

mod columns;
mod m0001_sessions;
mod m0002_sandbox;
mod m0003_sandbox_outbox;
mod m0004_history;
mod m0005_contacts;
mod m0006_sandbox_media;
mod m0010_device_store;
mod m0011_group_authors;
mod m0012_group_subjects;
mod m0013_sandbox_keys;
mod m0014_session_pacing;
mod m0015_events;
mod m0016_event_stream;
mod m0017_session_states;
mod m0018_sandbox_history;
mod m0019_session_events;
mod m0020_sandbox_privacy;
mod m0021_webhook_types;
mod m0022_session_presence;
mod m0023_call_rejection;
mod m0024_session_proxy;
mod m0025_event_requeues;
mod m0026_status_posts;
mod m0027_storage_probe;
mod m0028_labels;
mod m0029_sandbox_labels;
mod m0030_device_batch;
mod m0031_sandbox_call_privacy;
mod session_setting;

/// Every migration, oldest first.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m0001_sessions::Migration),
            Box::new(m0002_sandbox::Migration),
            Box::new(m0003_sandbox_outbox::Migration),
            Box::new(m0010_device_store::Migration),
            Box::new(m0004_history::Migration),
            Box::new(m0005_contacts::Migration),
            Box::new(m0006_sandbox_media::Migration),
            Box::new(m0011_group_authors::Migration),
            Box::new(m0012_group_subjects::Migration),
            Box::new(m0013_sandbox_keys::Migration),
            Box::new(m0014_session_pacing::Migration),
            Box::new(m0015_events::Migration),
            Box::new(m0016_event_stream::Migration),
            Box::new(m0017_session_states::Migration),
            Box::new(m0018_sandbox_history::Migration),
            Box::new(m0019_session_events::Migration),
            Box::new(m0020_sandbox_privacy::Migration),
            Box::new(m0021_webhook_types::Migration),
            Box::new(m0022_session_presence::Migration),
            Box::new(m0023_call_rejection::Migration),
            Box::new(m0024_session_proxy::Migration),
            Box::new(m0025_event_requeues::Migration),
            Box::new(m0026_status_posts::Migration),
            Box::new(m0027_storage_probe::Migration),
            Box::new(m0028_labels::Migration),
            Box::new(m0029_sandbox_labels::Migration),
            Box::new(m0030_device_batch::Migration),
            Box::new(m0031_sandbox_call_privacy::Migration),
        ]
    }
}
