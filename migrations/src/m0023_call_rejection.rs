//! What a session does with the calls that ring it (`/set-call-rejection`):
//! `reject_calls` rejects each as it comes, and `call_reply`, when not
//! empty, is the text sent to the caller after it.
use sea_orm_migration::prelude::*;

use crate::session_setting;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Sessions {
    RejectCalls,
    CallReply,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        session_setting::add_flag(manager, Sessions::RejectCalls).await?;
        session_setting::add(manager, Sessions::CallReply).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        session_setting::drop(manager, Sessions::CallReply).await?;
        session_setting::drop(manager, Sessions::RejectCalls).await
    }
}
