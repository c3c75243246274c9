//! Network activity -> the spec's webhook events: a pure normalizer, the poll-vote
//! resolution rules, and what a session knows that events need.
mod contacts;
mod groups;
mod history;
mod known_pairs;
mod lookup;
mod normalize;
mod pipeline;
mod poll;
pub mod retention;

pub use contacts::ContactBook;
pub use groups::GroupBook;
pub use history::{FileBytes, FileData, HistorySink, MessageFile, NetworkFile, Written};
pub use lookup::{LOOKUP_BUDGET, PollLookup};
pub use normalize::{Extras, SessionFacts, normalize};
pub use pipeline::{
    APPENDS_IN_FLIGHT, Activity, Begun, EventLog, EventPipeline, Imported, LogFailure, OnFencedOut,
    Processed, SessionEvents, SessionSettings,
};
pub use poll::{option_hash, resolve_vote};
