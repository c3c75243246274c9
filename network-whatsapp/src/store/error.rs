//! How the device store reports failures through whatsapp-rust's `StoreError`:
//! database errors keep their source, a fenced-out write is a [`FenceRejected`].
use sea_orm::DbErr;
use whatsapp_rust::wacore::store::error::StoreError;

/// A write refused because this store's owner no longer owns the session (or
/// the device it holds no longer exists).
/// Travels as `StoreError::Database` with this as its source ([`is_fence_rejected`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenceRejected {
    /// A newer owner recorded a higher fencing token.
    #[error("device store write for {client_id} refused: fence {ours} is older than {stored}")]
    Stale {
        client_id: String,
        ours: i64,
        stored: i64,
    },
    /// The session row is gone: nobody may write its device state.
    #[error("device store write for {client_id} refused: the session does not exist")]
    NoSession { client_id: String },
    /// The network logged the device out: its state was deleted and stays so.
    #[error("device store write for {client_id} refused: the device was logged out")]
    LoggedOut { client_id: String },
    /// The session was forgotten (`/disconnect`): its state was deleted.
    #[error("device store write for {client_id} refused: the device state was forgotten")]
    Forgotten { client_id: String },
}

/// Whether `e` is a write refused by the fence (a stale owner's flush).
pub fn is_fence_rejected(e: &StoreError) -> bool {
    fence_rejection(e).is_some()
}

/// The fence rejection inside `e`, if that is what it is.
pub fn fence_rejection(e: &StoreError) -> Option<&FenceRejected> {
    match e {
        StoreError::Database(source) => source.downcast_ref::<FenceRejected>(),
        _ => None,
    }
}

pub(super) fn rejected(reason: FenceRejected) -> StoreError {
    StoreError::Database(Box::new(reason))
}

/// A sea-orm error as the store's error: connection problems apart from the rest.
pub(super) fn db_err(e: DbErr) -> StoreError {
    match e {
        DbErr::Conn(_) | DbErr::ConnectionAcquire(_) => StoreError::Connection(Box::new(e)),
        other => StoreError::Database(Box::new(other)),
    }
}

/// A stored value the trait's types cannot hold (a corrupted or foreign row).
pub(super) fn invalid(what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Validation(format!("stored {what} is invalid: {detail}"))
}
