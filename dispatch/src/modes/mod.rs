//! Modes shipped with the framework: [`trace`] and [`profile`], and their exports for people's
//! tools: a profile as Chrome trace JSON ([`Profile::to_chrome_trace`], for Perfetto), a graph as
//! Graphviz DOT ([`Graph::to_dot`]).
//!
//! Each is an ordinary `#[fallback]` at its mode key, written only against the public API — the
//! proof that users can write their own: a thread-local include guard turns the key on, the
//! fallback sees every op call boxed, does its work, and redispatches below its key.

mod chrome;
mod dot;
mod profile;
mod trace;

pub use profile::{Profile, ProfileRow, ProfileSlice, profile};
pub use trace::{Graph, TracedCall, trace};
