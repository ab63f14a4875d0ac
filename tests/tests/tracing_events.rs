//! The dispatch trace as `tracing` events and spans: a subscriber sees every dispatch of a small
//! computation (op, keys, chosen key, kernel, provenance, depth) and the nesting of the ops a
//! composite calls, whether `set_tracing_events` or `SWITCHYARD_TRACE=tracing` turned them on.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use switchyard::ops::{add, mul};
use switchyard::{Tensor, op, set_tracing_events};
use switchyard_backends as _;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// `x * y + z`: a composite that calls two other ops.
#[op(name = "tracing_events::fma")]
pub fn fma(x: &Tensor, y: &Tensor, z: &Tensor) -> Tensor {
    add(&mul(x, y), z)
}

/// One `switchyard` event: its fields, and the `op` of the span it happened in.
#[derive(Debug, Clone, Default)]
struct Seen {
    fields: HashMap<String, String>,
    in_span_of: Option<String>,
}

#[derive(Default)]
struct Fields(HashMap<String, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// Records the `switchyard` events, with the `op` of their span.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Seen>>>);

/// A span's `op` field, kept in the span's extensions.
struct SpanOp(String);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let (Some(op), Some(span)) = (fields.0.remove("op"), ctx.span(id)) {
            span.extensions_mut().insert(SpanOp(op));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if event.metadata().target() != "switchyard" {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let in_span_of = ctx
            .event_span(event)
            .and_then(|s| s.extensions().get::<SpanOp>().map(|o| o.0.clone()));
        self.0.lock().unwrap().push(Seen {
            fields: fields.0,
            in_span_of,
        });
    }
}

/// Runs `f` with a subscriber that records `switchyard` events on this thread.
fn record(f: impl FnOnce()) -> Vec<Seen> {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    tracing::subscriber::with_default(subscriber, f);
    recorder.0.lock().unwrap().clone()
}

fn field<'a>(seen: &'a Seen, name: &str) -> &'a str {
    seen.fields.get(name).map_or("", String::as_str)
}

/// The events of `fma(x, y, z)`: the composite, then `mul` and `add` nested in its span.
fn check_fma_events(seen: &[Seen]) {
    let ops: Vec<&str> = seen.iter().map(|s| field(s, "op")).collect();
    assert_eq!(
        ops,
        ["tracing_events::fma", "switchyard::mul", "switchyard::add"],
        "{seen:#?}"
    );
    let [outer, inner @ ..] = seen else {
        unreachable!()
    };
    assert_eq!(field(outer, "kernel"), "composite");
    assert_eq!(field(outer, "provenance"), "[composite]");
    assert_eq!(field(outer, "chosen"), "CpuSimd");
    assert_eq!(field(outer, "keys"), "{CpuSimd, CpuNaive; f32}");
    assert_eq!(field(outer, "depth"), "0");
    assert_eq!(outer.in_span_of, None);
    for event in inner {
        assert_eq!(field(event, "depth"), "1", "{event:?}");
        assert_eq!(
            event.in_span_of.as_deref(),
            Some("tracing_events::fma"),
            "{event:?}"
        );
        // The CPU kernel that serves it depends on the backends linked and the CPU.
        assert!(field(event, "chosen").starts_with("Cpu"), "{event:?}");
        assert!(
            field(event, "provenance").starts_with("[kernel]"),
            "{event:?}"
        );
        assert!(!field(event, "kernel").is_empty(), "{event:?}");
    }
}

#[test]
fn a_subscriber_sees_every_dispatch_with_its_nesting() {
    let (x, y, z) = (
        Tensor::vector(&[1.0, 2.0]),
        Tensor::vector(&[3.0, 4.0]),
        Tensor::vector(&[5.0, 6.0]),
    );
    set_tracing_events(true);
    let mut result = None;
    let seen = record(|| result = Some(fma(&x, &y, &z)));
    assert_eq!(result.unwrap().to_vec::<f32>(), [8.0, 14.0]);
    check_fma_events(&seen);
}

/// An op without kernels: every call fails to dispatch.
#[op(name = "tracing_events::unserved")]
pub fn unserved(x: &Tensor) -> Tensor;

#[test]
fn a_failed_dispatch_is_an_event_with_its_error() {
    set_tracing_events(true);
    let x = Tensor::vector(&[1.0, 2.0]);
    let mut error = None;
    let seen = record(|| error = try_unserved(&x).err());
    let error = error.expect("no kernel serves `unserved`").to_string();
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert_eq!(field(&seen[0], "op"), "tracing_events::unserved");
    assert_eq!(field(&seen[0], "error"), error);
    assert_eq!(field(&seen[0], "keys"), "{CpuSimd, CpuNaive; f32}");
}

/// The child half of `switchyard_trace_tracing_turns_events_on`: run in a process of its own
/// with `SWITCHYARD_TRACE=tracing`, without calling `set_tracing_events`.
#[test]
#[ignore = "run by switchyard_trace_tracing_turns_events_on in a child process"]
fn tracing_env_child() {
    let (x, y, z) = (
        Tensor::vector(&[1.0, 2.0]),
        Tensor::vector(&[3.0, 4.0]),
        Tensor::vector(&[5.0, 6.0]),
    );
    let seen = record(|| {
        let _ = fma(&x, &y, &z);
    });
    check_fma_events(&seen);
}

#[test]
fn switchyard_trace_tracing_turns_events_on() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tracing_env_child",
            "--ignored",
            "--test-threads=1",
        ])
        .env("SWITCHYARD_TRACE", "tracing")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    // Events, not the stderr lines of `SWITCHYARD_TRACE=1`.
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!stderr.contains("[switchyard]"), "{stderr}");
}
