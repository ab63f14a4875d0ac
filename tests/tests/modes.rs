//! Modes: a user-written counting fallback, and the shipped `trace` and `profile`.

use std::sync::atomic::{AtomicUsize, Ordering};

use switchyard::ops::{add, mean, mul, sum};
use switchyard::{
    DispatchError, DispatchKey, DispatchKeySet, OpHandle, Stack, Tensor, Value, fallback, include,
    op, profile, trace, with_excluded,
};
use switchyard_backends as _;

/// `sum(x * x)`: an op whose composite calls two other ops.
#[op(name = "modes::sum_of_squares")]
pub fn sum_of_squares(x: &Tensor) -> Tensor {
    sum(&mul(x, x))
}

static TOP_LEVEL_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Counts top-level op calls: ops that a counted op calls run with `Custom4` excluded.
#[fallback(key = Custom4)]
fn count_top_level(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    TOP_LEVEL_CALLS.fetch_add(1, Ordering::Relaxed);
    with_excluded(DispatchKey::Custom4, || {
        op.redispatch_boxed(keys.below(DispatchKey::Custom4), stack)
    })
}

#[test]
fn a_counting_mode_counts_top_level_ops_only() {
    let x = Tensor::vector(&[1.0, 2.0, 3.0]);
    let before = TOP_LEVEL_CALLS.load(Ordering::Relaxed);
    {
        let _counting = include(DispatchKey::Custom4);
        let total = add(&sum_of_squares(&x), &Tensor::scalar(1.0));
        assert_eq!(total.to_vec::<f32>(), [15.0]);
    }
    assert_eq!(TOP_LEVEL_CALLS.load(Ordering::Relaxed) - before, 2);
    // Outside the guard nothing is counted.
    let _ = add(&sum_of_squares(&x), &Tensor::scalar(1.0));
    assert_eq!(TOP_LEVEL_CALLS.load(Ordering::Relaxed) - before, 2);
}

#[test]
fn trace_records_top_level_ops_with_shapes_and_devices() {
    let x = Tensor::from_fn(&[2, 3], |i| i as f32);
    let y = Tensor::from_fn(&[2, 3], |i| 1.0 - i as f32);
    let (loss, graph) = trace(|| add(&sum_of_squares(&x), &mean(&mul(&x, &y))));
    assert_eq!(loss.shape(), [] as [usize; 0]);
    // `sum_of_squares` calls `mul` and `sum` itself; those are not recorded again.
    assert_eq!(
        graph.op_names(),
        [
            "modes::sum_of_squares",
            "switchyard::mul",
            "switchyard::mean",
            "switchyard::add"
        ]
    );
    assert_eq!(
        graph.to_string(),
        "%0 = modes::sum_of_squares(Tensor[2, 3]:f32@cpu) -> Tensor[]:f32@cpu\n\
         %1 = switchyard::mul(Tensor[2, 3]:f32@cpu, Tensor[2, 3]:f32@cpu) -> Tensor[2, 3]:f32@cpu\n\
         %2 = switchyard::mean(%1) -> Tensor[]:f32@cpu\n\
         %3 = switchyard::add(%0, %2) -> Tensor[]:f32@cpu\n"
    );
    // Nothing is recorded outside `trace`, and tracing is off again.
    let (_, empty) = trace(|| ());
    assert!(empty.calls.is_empty());
    assert!(!switchyard::local_keys().included.has(DispatchKey::Tracing));
}

#[test]
fn profile_counts_every_op_call() {
    let x = Tensor::vector(&[1.0, 2.0]);
    let (_, profile) = profile(|| {
        for _ in 0..3 {
            let _ = sum_of_squares(&x);
        }
        add(&x, &x)
    });
    // Nested calls count too: each `sum_of_squares` called `mul` and `sum`.
    assert_eq!(profile.row("modes::sum_of_squares").unwrap().calls, 3);
    assert_eq!(profile.row("mul").unwrap().calls, 3);
    assert_eq!(profile.row("sum").unwrap().calls, 3);
    assert_eq!(profile.row("add").unwrap().calls, 1);
    let outer = profile.row("modes::sum_of_squares").unwrap();
    assert!(outer.total >= profile.row("mul").unwrap().total);
    let text = profile.to_string();
    assert!(text.starts_with("op "), "{text}");
    assert!(text.contains("modes::sum_of_squares"), "{text}");
}

#[test]
fn trace_and_profile_nest() {
    let x = Tensor::vector(&[1.0]);
    let ((_, graph), profile) = profile(|| trace(|| mul(&x, &x)));
    assert_eq!(graph.op_names(), ["switchyard::mul"]);
    assert_eq!(profile.row("mul").unwrap().calls, 1);
}

/// The child half of `dispatch_trace_prints_one_line_per_dispatch`: run in a process of its own
/// with `SWITCHYARD_TRACE=1`.
#[test]
#[ignore = "run by dispatch_trace_prints_one_line_per_dispatch in a child process"]
fn dispatch_trace_child() {
    let x = Tensor::vector(&[1.0, 2.0]);
    let _ = sum_of_squares(&x);
}

#[test]
fn dispatch_trace_prints_one_line_per_dispatch() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "dispatch_trace_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SWITCHYARD_TRACE", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("[switchyard]"))
        .collect();
    // Which CPU kernel serves `mul` and `sum` depends on the backends linked; the shape does not.
    let expected = [
        "[switchyard] modes::sum_of_squares keys={CpuSimd, CpuNaive; f32} -> CpuSimd [composite]",
        "[switchyard]   switchyard::mul keys={CpuSimd, CpuNaive; f32} -> Cpu",
        "[switchyard]   switchyard::sum keys={CpuSimd, CpuNaive; f32} -> Cpu",
    ];
    assert_eq!(lines.len(), expected.len(), "{stderr}");
    for (line, prefix) in lines.iter().zip(expected) {
        assert!(
            line.starts_with(prefix),
            "{line:?} should start with {prefix:?}\n{stderr}"
        );
    }
    assert!(lines[1].contains("[kernel] backends/src/cpu/"), "{stderr}");
}

/// A mode at `Custom3` that only passes calls on, for the dispatch trace of a fallback.
#[fallback(key = Custom3)]
fn pass_on(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    op.redispatch_boxed(keys.below(DispatchKey::Custom3), stack)
}

/// An op without kernels: every call of it fails to dispatch.
#[op(name = "modes::unserved")]
pub fn unserved(x: &Tensor) -> Tensor;

/// The child half of `dispatch_trace_prints_fallbacks_once_and_failures`.
#[test]
#[ignore = "run by dispatch_trace_prints_fallbacks_once_and_failures in a child process"]
fn dispatch_trace_fallback_child() {
    let x = Tensor::vector(&[1.0, 2.0]);
    {
        let _mode = include(DispatchKey::Custom3);
        assert_eq!(mul(&x, &x).to_vec::<f32>(), [1.0, 4.0]);
        let mut stack = Stack::from(vec![Value::from(&x), Value::from(&x)]);
        switchyard::call_boxed("mul", &mut stack).unwrap();
    }
    let typed = try_unserved(&x).unwrap_err();
    let mut stack = Stack::from(vec![Value::from(&x)]);
    let boxed = switchyard::call_boxed("modes::unserved", &mut stack).unwrap_err();
    assert_eq!(typed.to_string(), boxed.to_string());
    // The parent compares the error lines with this text.
    println!("child error: {typed}");
}

#[test]
fn dispatch_trace_prints_fallbacks_once_and_failures() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "dispatch_trace_fallback_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SWITCHYARD_TRACE", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let error = stdout
        .lines()
        .find_map(|l| l.split_once("child error: ").map(|(_, error)| error))
        .expect("the child prints the error");
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("[switchyard]"))
        .collect();
    let served = "[switchyard] switchyard::mul keys={Custom3, CpuSimd, CpuNaive; f32} -> Custom3 [fallback] ";
    let below = "[switchyard]   switchyard::mul keys={CpuSimd, CpuNaive; f32} -> Cpu";
    let failed =
        format!("[switchyard] modes::unserved keys={{CpuSimd, CpuNaive; f32}} -> error: {error}");
    // One line per dispatch: the typed call and the boxed call each reach the fallback once,
    // and its redispatch once, one level deeper; each failed call prints its error.
    let expected = [served, below, served, below, &failed, &failed];
    assert_eq!(lines.len(), expected.len(), "{stderr}");
    for (line, prefix) in lines.iter().zip(expected) {
        assert!(
            line.starts_with(prefix),
            "{line:?} should start with {prefix:?}\n{stderr}"
        );
    }
    assert!(lines[0].ends_with("pass_on"), "{stderr}");
}
