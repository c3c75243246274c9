//! Writes of other stores that ride in the event log's transactions on
//! SQLite: a database with one write lock and a flush to disk at each
//! commit, where the device store's writes (a received message's Signal
//! session, its message secret) followed each of the event log's commits
//! with a commit of their own, the two writers taking turns at the lock.
//! A ride is fenced as an append is: its statements are made under the
//! write lock, from the session's stored fence, and commit with the
//! batch's appends and delivery records, or not at all.
//!
//! A batch of rides without appends waits for one (up to twice their usual
//! gap, as the writer's [`Company`](crate::db::company::Company) times
//! them) only while appends come at least every [`RIDES_LINGER`] (a
//! received message's keys are saved just after its event is logged, and
//! the next message's event is due within milliseconds), never at low
//! rates: a login's many writes go at once. With delivery records it waits
//! as they do. A batch that fails is written again without its rides, and
//! then each ride alone, so that only a failing write fails.
use sea_orm::Statement;
use tokio::sync::oneshot;
use tokio::time::Duration;

use crate::db::DbError;

/// The longest a batch without appends but with rides waits for one: the
/// appends must have been arriving at least this often.
pub(super) const RIDES_LINGER: Duration = Duration::from_millis(8);

/// A ride's statements, made under the database's write lock from its
/// session's stored fence (`None`: the session has no row); none when the
/// write is refused (the rider notes why). Made again when the ride is
/// tried alone after its batch failed.
pub type RideWork = Box<dyn Fn(Option<i64>) -> Vec<Statement> + Send + Sync>;

/// A write riding in the next batch.
pub(super) struct Ride {
    pub client_id: String,
    pub work: RideWork,
    pub reply: oneshot::Sender<Result<(), DbError>>,
}

/// The statements of `rides`, in the order queued, under their sessions'
/// fences as the batch read them (`fence_of`).
pub(super) fn statements(rides: &[Ride], fence_of: impl Fn(&str) -> Option<i64>) -> Vec<Statement> {
    rides
        .iter()
        .flat_map(|ride| (ride.work)(fence_of(&ride.client_id)))
        .collect()
}
