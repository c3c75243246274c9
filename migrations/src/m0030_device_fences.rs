//! PostgreSQL: the check a batch of device-store writes makes before its
//! statements, in the same exchange (`network-whatsapp`'s
//! `store/group_commit/exchange.rs`): it locks each session's row until
//! the commit and fails, rolling the batch back, when a session is gone,
//! its stored fence is newer than the writer's, or (with `skip_locked`)
//! another transaction holds its row. SQLite needs nothing: its writer
//! reads the fences under the database's one write lock.
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Each `ids[i]` (distinct, in the order to lock them) with the fence
/// `fences[i]` its writes were made under.
const CREATE: &str = r#"
CREATE OR REPLACE FUNCTION parley_device_fences(ids text[], fences bigint[], skip_locked boolean)
RETURNS void LANGUAGE plpgsql AS $body$
BEGIN
    FOR i IN 1 .. coalesce(cardinality(ids), 0) LOOP
        IF skip_locked THEN
            PERFORM 1 FROM sessions
                WHERE client_id = ids[i] AND fence <= fences[i]
                FOR UPDATE SKIP LOCKED;
        ELSE
            PERFORM 1 FROM sessions
                WHERE client_id = ids[i] AND fence <= fences[i]
                FOR UPDATE;
        END IF;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'device store: session % refused or held', ids[i]
                USING ERRCODE = 'PF001';
        END IF;
    END LOOP;
END
$body$
"#;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        manager.get_connection().execute_unprepared(CREATE).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        manager
            .get_connection()
            .execute_unprepared(
                "DROP FUNCTION IF EXISTS parley_device_fences(text[], bigint[], boolean)",
            )
            .await?;
        Ok(())
    }
}
