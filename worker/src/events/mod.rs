//! Network activity -> the spec's webhook events: a pure normalizer, the poll-vote
//! resolution rules, and what a session knows that events need.
mod lookup;
mod normalize;
mod pipeline;
mod poll;

pub use lookup::{LOOKUP_BUDGET, PollLookup};
pub use normalize::{Extras, SessionFacts, normalize};
pub use pipeline::{EventPipeline, PollBook, SessionEvents};
pub use poll::{option_hash, resolve_vote};
