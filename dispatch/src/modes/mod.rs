//! Modes shipped with the framework: [`trace`] and [`profile`].
//!
//! Each is an ordinary `#[fallback]` at its mode key, written only against the public API — the
//! proof that users can write their own: a thread-local include guard turns the key on, the
//! fallback sees every op call boxed, does its work, and redispatches below its key.

mod profile;
mod trace;

pub use profile::{Profile, ProfileRow, profile};
pub use trace::{Graph, TracedCall, trace};
