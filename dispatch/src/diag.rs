//! The library's own diagnostics on stderr.

use std::fmt;
use std::io::Write as _;

/// Writes one line to stderr, ignoring errors: a diagnostic must never make a call fail, and
/// `eprintln!` panics when stderr is closed or a broken pipe.
///
/// It writes to the process's stderr directly, so a test harness does not capture it.
#[cold]
pub(crate) fn stderr_line(args: fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{args}");
}
