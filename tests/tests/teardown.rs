//! Dispatch from a thread-local destructor: after the thread's other thread-locals (the engine's
//! among them) are destroyed, boxed and typed calls, `trace` and `profile` still work (or report
//! a clear error); nothing aborts the process. Large CPU ops, which run on the worker threads,
//! work there too.

use std::cell::RefCell;
use std::sync::mpsc;

use switchyard::FromValue;
use switchyard::ops::{try_mul, try_sum};
use switchyard::{Stack, Tensor, Value, profile, trace};
use switchyard_backends as _;

/// What each kind of call returned inside a thread-local destructor.
#[derive(Debug)]
struct Report {
    boxed: Result<Vec<f32>, String>,
    typed: Result<Vec<f32>, String>,
    traced: Result<Vec<f32>, String>,
    traced_ops: Vec<&'static str>,
    profiled: Result<Vec<f32>, String>,
    profiled_mul_calls: u64,
    /// A product and a sum of 300K elements: large enough for the worker threads.
    large: Result<(f32, f32), String>,
}

fn large_ops() -> Result<(f32, f32), String> {
    let x = Tensor::vector(&vec![2.0; 300_000]);
    let product = try_mul(&x, &x).map_err(|e| e.to_string())?;
    let total = try_sum(&product).map_err(|e| e.to_string())?;
    Ok((product.to_vec::<f32>()[299_999], total.to_vec::<f32>()[0]))
}

fn product(x: &Tensor) -> Result<Vec<f32>, String> {
    try_mul(x, x)
        .map(|t| t.to_vec::<f32>())
        .map_err(|e| e.to_string())
}

fn boxed_product(x: &Tensor) -> Result<Vec<f32>, String> {
    let mut stack = Stack::new();
    stack.push(x);
    stack.push(x);
    switchyard::call_boxed("mul", &mut stack).map_err(|e| e.to_string())?;
    match stack.pop() {
        Some(value @ Value::Tensor(_)) => Ok(Tensor::from_value(value)
            .map_err(|e| e.to_string())?
            .to_vec::<f32>()),
        other => Err(format!("the boxed call left {other:?}")),
    }
}

fn calls_in_teardown() -> Report {
    let x = Tensor::vector(&[1.0, 2.0, 3.0]);
    let (traced, graph) = trace(|| product(&x));
    let (profiled, profile) = profile(|| product(&x));
    Report {
        boxed: boxed_product(&x),
        typed: product(&x),
        traced,
        traced_ops: graph.op_names(),
        profiled,
        profiled_mul_calls: profile.row("mul").map_or(0, |row| row.calls),
        large: large_ops(),
    }
}

/// Makes every kind of call when the thread destroys it, and sends what they returned.
struct CallsOnDrop(RefCell<Option<mpsc::Sender<Report>>>);

impl Drop for CallsOnDrop {
    fn drop(&mut self) {
        if let Some(sender) = self.0.borrow_mut().take() {
            let _ = sender.send(calls_in_teardown());
        }
    }
}

thread_local! {
    // Two values, armed before and after the engine's thread-locals are first used: whichever
    // order this platform destroys thread-locals in, one of them runs after the engine's are gone.
    static ARMED_FIRST: CallsOnDrop = const { CallsOnDrop(RefCell::new(None)) };
    static ARMED_LAST: CallsOnDrop = const { CallsOnDrop(RefCell::new(None)) };
}

#[test]
fn dispatch_from_a_thread_local_destructor_does_not_abort() {
    switchyard_backends::set_num_threads(2).unwrap();
    let (sender, reports) = mpsc::channel();
    let first = sender.clone();
    std::thread::spawn(move || {
        ARMED_FIRST.with(|armed| *armed.0.borrow_mut() = Some(first));
        // Every thread-local the engine has comes alive here.
        let report = calls_in_teardown();
        assert_eq!(report.typed, Ok(vec![1.0, 4.0, 9.0]));
        ARMED_LAST.with(|armed| *armed.0.borrow_mut() = Some(sender));
    })
    .join()
    .expect("the thread exits cleanly");
    let reports: Vec<Report> = reports.iter().collect();
    assert_eq!(reports.len(), 2, "{reports:?}");
    for report in &reports {
        let expected = Ok(vec![1.0, 4.0, 9.0]);
        assert_eq!(report.boxed, expected, "{report:?}");
        assert_eq!(report.typed, expected, "{report:?}");
        assert_eq!(report.traced, expected, "{report:?}");
        assert_eq!(report.profiled, expected, "{report:?}");
        assert_eq!(report.large, Ok((4.0, 1_200_000.0)), "{report:?}");
        // Once this thread's mode state is destroyed, the modes run the closure unrecorded.
        assert!(
            matches!(report.traced_ops.as_slice(), ["switchyard::mul"] | []),
            "{report:?}"
        );
        assert!(report.profiled_mul_calls <= 1, "{report:?}");
    }
    // At least one of the two ran before teardown destroyed the modes' state, and was recorded.
    assert!(
        reports
            .iter()
            .any(|r| r.traced_ops == ["switchyard::mul"] && r.profiled_mul_calls == 1),
        "{reports:?}"
    );
}
