//! Modes shipped with the framework: [`trace`] and [`profile`], and their exports for people's
//! tools: a profile as Chrome trace JSON ([`Profile::to_chrome_trace`], for Perfetto), a graph as
//! Graphviz DOT ([`Graph::to_dot`]).
//!
//! Each is a boxed fallback at a key of the library's own (`BuiltinTrace`, `BuiltinProfile`),
//! registered through the crate-private `FallbackRegistration::builtin` (the one door to those
//! keys, so users' `Tracing` and `Profiler` stay free); otherwise it works as a user's
//! `#[fallback]` does: a thread-local include guard turns the key on, the fallback sees every op
//! call boxed, does its work, and redispatches below its key.

mod chrome;
mod dot;
mod profile;
mod trace;

pub use profile::{Profile, ProfileRow, ProfileSlice, profile};
pub use trace::{Graph, TracedCall, trace};

/// `s` in double quotes with `"`, `\` and newlines escaped, as both export formats need, and any
/// other character given to `escape`, which writes its own escaped form and returns `true`, or
/// returns `false` to have it written as is.
fn quoted(s: &str, escape: impl Fn(char, &mut String) -> bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if escape(c, &mut out) => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
