//! A [`Profile`] as Chrome trace JSON (the Trace Event Format), which Perfetto
//! (<https://ui.perfetto.dev>) and `chrome://tracing` open: every op call a complete event
//! (`"ph": "X"`) on its thread's track, calls made inside a call nested within it by time.
//! Written with std alone; strings are escaped as JSON requires.

use std::fmt::Write as _;
use std::io;
use std::time::Duration;

use super::profile::Profile;

impl Profile {
    /// The profile as Chrome trace JSON: one complete event per op call (name, start and
    /// duration in microseconds, its thread as the track, its nesting depth in `args`), and each
    /// thread's name as metadata. Open it in Perfetto (<https://ui.perfetto.dev>, "Open trace
    /// file") or `chrome://tracing`.
    ///
    /// ```
    /// use switchyard::ops::{mean, mul};
    /// use switchyard::{Tensor, profile};
    /// use switchyard_backends as _;
    ///
    /// let x = Tensor::vector(&[1.0, 2.0]);
    /// let (_, profile) = profile(|| mean(&mul(&x, &x)));
    /// let json = profile.to_chrome_trace();
    /// assert!(json.starts_with(r#"{"traceEvents":["#));
    /// assert!(json.contains(r#""name":"switchyard::mul","cat":"op","ph":"X""#));
    /// // std::fs::write("profile.json", json)?;
    /// ```
    pub fn to_chrome_trace(&self) -> String {
        let pid = std::process::id();
        let mut events = Vec::with_capacity(self.threads.len() + self.slices.len());
        for (thread, name) in &self.threads {
            events.push(format!(
                r#"{{"name":"thread_name","ph":"M","pid":{pid},"tid":{thread},"args":{{"name":{}}}}}"#,
                json_string(name)
            ));
        }
        for slice in &self.slices {
            events.push(format!(
                r#"{{"name":{},"cat":"op","ph":"X","ts":{},"dur":{},"pid":{pid},"tid":{},"args":{{"depth":{}}}}}"#,
                json_string(slice.op),
                micros(slice.start),
                micros(slice.duration),
                slice.thread,
                slice.depth
            ));
        }
        format!(
            "{{\"traceEvents\":[\n{}\n],\"displayTimeUnit\":\"ns\"}}\n",
            events.join(",\n")
        )
    }

    /// Writes [`Profile::to_chrome_trace`] to `out` (a file, for Perfetto).
    pub fn write_chrome_trace(&self, mut out: impl io::Write) -> io::Result<()> {
        out.write_all(self.to_chrome_trace().as_bytes())
    }
}

/// Microseconds with nanosecond digits, written exactly (no float rounding), so that a call
/// nested in another stays inside it in the file too.
fn micros(d: Duration) -> String {
    let nanos = d.as_nanos();
    format!("{}.{:03}", nanos / 1000, nanos % 1000)
}

/// `s` as a JSON string literal: quotes, backslashes and control characters escaped.
pub(super) fn json_string(s: &str) -> String {
    super::quoted(s, |c, out| match c {
        '\r' => {
            out.push_str("\\r");
            true
        }
        '\t' => {
            out.push_str("\\t");
            true
        }
        c if u32::from(c) < 0x20 => {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
            true
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_escape_what_json_requires() {
        assert_eq!(json_string("mul"), r#""mul""#);
        assert_eq!(json_string("a\"b\\c\nd\u{1}é"), r#""a\"b\\c\nd\u0001é""#);
    }

    #[test]
    fn micros_are_exact() {
        assert_eq!(micros(Duration::from_nanos(1_234_567)), "1234.567");
        assert_eq!(micros(Duration::from_nanos(5)), "0.005");
    }
}
