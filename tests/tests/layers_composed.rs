//! The layers composed: a training step under `trace`, a user mode, autocast and autograd runs
//! once for real and once in fake mode, and every op the trace and the mode see has the same
//! shapes and dtypes in both runs.

use std::cell::RefCell;

use switchyard::autocast::autocast;
use switchyard::optim::{Optimizer, Sgd};
use switchyard::{
    DType, Device, DispatchError, DispatchKey, DispatchKeySet, OpHandle, Stack, Tensor, Value,
    fake, fallback, ops, trace,
};
use switchyard_backends as _;

thread_local! {
    /// What the user mode saw: each op's name and its result's description.
    static SEEN: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// A user mode that records every op it sees with its results (`Tensor[4, 2]:bf16@cpu`).
#[fallback(key = Mode1)]
fn record(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> Result<(), DispatchError> {
    let start = stack.len() - op.arity();
    op.redispatch_boxed(keys.below(DispatchKey::Mode1), stack)?;
    let results: Vec<String> = stack.values()[start..]
        .iter()
        .map(Value::to_string)
        .collect();
    SEEN.with(|s| {
        s.borrow_mut()
            .push(format!("{} -> {}", op.name(), results.join(", ")))
    });
    Ok(())
}

/// What one run shows: the trace's graph, the mode's lines, each gradient's shape and dtype.
type Seen = (String, Vec<String>, Vec<(Vec<usize>, DType)>);

/// A two-layer model's step: forward under autocast to bf16, loss, backward and an SGD update
/// outside it.
fn step() -> Seen {
    SEEN.with(|s| s.borrow_mut().clear());
    let param = |shape: &[usize]| {
        let mut p = ops::try_randn(shape, DType::F32, Device::Cpu).unwrap();
        p.requires_grad_(true);
        p
    };
    let (w1, b1, w2) = (param(&[3, 8]), param(&[8]), param(&[8, 4]));
    let mut sgd = Sgd::new(vec![w1.clone(), b1.clone(), w2.clone()], 0.1);
    let x = ops::try_randn(&[5, 3], DType::F32, Device::Cpu).unwrap();
    let y = Tensor::from_vec(vec![0i64, 1, 2, 3, 0], &[5]).unwrap();
    let ((), graph) = trace(|| {
        let _mode = switchyard::include(DispatchKey::Mode1);
        let loss = {
            let _bf16 = autocast(Device::Cpu, DType::BF16).unwrap();
            let h = ops::try_relu(&ops::try_add(&ops::try_matmul(&x, &w1).unwrap(), &b1).unwrap())
                .unwrap();
            let logits = ops::try_matmul(&h, &w2).unwrap();
            assert_eq!(logits.dtype(), DType::BF16);
            ops::try_cross_entropy(&logits, &y).unwrap()
        };
        assert_eq!(loss.dtype(), DType::F32);
        sgd.zero_grad();
        loss.try_backward().unwrap();
        sgd.step().unwrap();
    });
    let grads = [&w1, &b1, &w2]
        .iter()
        .map(|p| {
            let g = p.grad().expect("a gradient");
            (g.shape().to_vec(), g.dtype())
        })
        .collect();
    (graph.to_string(), SEEN.with(|s| s.borrow().clone()), grads)
}

#[test]
fn fake_autocast_autograd_trace_and_a_user_mode_give_the_real_runs_shapes_and_dtypes() {
    let (real_graph, real_seen, real_grads) = step();
    let ((fake_graph, fake_seen, fake_grads), memory) = fake::fake(step);
    assert!(
        real_seen
            .iter()
            .any(|s| s.contains("matmul") && s.contains(":bf16@cpu"))
    );
    assert!(real_seen.len() > 10, "{real_seen:?}");
    assert_eq!(fake_seen, real_seen);
    assert_eq!(fake_graph, real_graph);
    assert_eq!(fake_grads, real_grads);
    assert!(
        real_grads.iter().all(|(_, dtype)| *dtype == DType::F32),
        "gradients reach the f32 parameters in f32: {real_grads:?}"
    );
    assert!(memory.device(Device::Cpu).allocations > 10, "{memory:?}");
}
