//! PostgreSQL: a batch of device-store writes in one call
//! (`network-whatsapp`'s `store/group_commit/exchange.rs`). It locks each
//! session's row until the commit, then runs the writes, given as
//! statements with their values written in; it writes nothing and answers
//! `false`, without an error (whose log line would carry the statements'
//! values), when a session is gone, its stored fence is newer than the
//! writer's, or (with `skip_locked`) another transaction holds its row.
//! SQLite needs nothing: its writer reads the fences under the database's
//! one write lock.
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Each `ids[i]` (distinct, in the order to lock them) with the fence
/// `fences[i]` its writes were made under.
const CREATE: &str = r#"
CREATE OR REPLACE FUNCTION parley_device_batch(
    ids text[], fences bigint[], skip_locked boolean, writes text[]
) RETURNS boolean LANGUAGE plpgsql AS $body$
DECLARE
    write text;
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
            RETURN false;
        END IF;
    END LOOP;
    FOREACH write IN ARRAY coalesce(writes, '{}') LOOP
        EXECUTE write;
    END LOOP;
    RETURN true;
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
        let drop = "DROP FUNCTION IF EXISTS parley_device_batch(text[], bigint[], boolean, text[])";
        manager.get_connection().execute_unprepared(drop).await?;
        Ok(())
    }
}
