//! Mode slots for users above the autograd keys (PyTorch's Python / TorchDispatchMode keys sit
//! above autograd so that a mode sees the op the user called): `Mode1..Mode3`, usable with
//! `#[fallback]`, `#[kernel]` and `include`.

use std::cell::Cell;

use switchyard::ops::mul;
use switchyard::{
    AliasKey, DispatchError, DispatchKey, DispatchKeySet, OpHandle, Stack, Tensor, fallback,
    kernel, op,
};
use switchyard_backends as _;

thread_local! {
    static SEEN: Cell<usize> = const { Cell::new(0) };
}

#[fallback(key = Mode2)]
fn count(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> Result<(), DispatchError> {
    SEEN.with(|s| s.set(s.get() + 1));
    op.redispatch_boxed(keys.below(DispatchKey::Mode2), stack)
}

/// Which layer answered.
#[op(name = "user_modes::layer")]
pub fn layer(x: &Tensor) -> Tensor;

#[kernel(op = layer, key = CpuNaive)]
fn layer_cpu(_x: &Tensor) -> Tensor {
    Tensor::scalar(0.0)
}

#[kernel(op = layer, key = Autograd)]
fn layer_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor, DispatchError> {
    let below = layer::redispatch(keys.below(AliasKey::Autograd), x)?;
    Ok(Tensor::scalar(below.to_vec::<f32>()[0] + 10.0))
}

#[kernel(op = layer, key = MODE1)]
fn layer_mode1(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor, DispatchError> {
    let below = layer::redispatch(keys.below(DispatchKey::Mode1), x)?;
    Ok(Tensor::scalar(below.to_vec::<f32>()[0] + 100.0))
}

#[test]
fn mode_keys_sit_above_autograd_and_below_the_builtin_ones() {
    for mode in [DispatchKey::Mode1, DispatchKey::Mode2, DispatchKey::Mode3] {
        assert!(mode > DispatchKey::AutogradWgpu, "{mode}");
        assert!(mode < DispatchKey::BuiltinTrace, "{mode}");
        assert!(!mode.is_builtin());
    }
}

#[test]
fn a_mode_kernel_sees_the_call_before_autograd() {
    let x = Tensor::vector(&[1.0]);
    let _autograd = switchyard::include(DispatchKey::AutogradCpu);
    assert_eq!(layer(&x).to_vec::<f32>(), [10.0]);
    let _mode = switchyard::include(DispatchKey::Mode1);
    assert_eq!(
        layer(&x).to_vec::<f32>(),
        [110.0],
        "mode, then autograd, then the backend"
    );
}

#[test]
fn a_mode_fallback_counts_top_level_calls() {
    let x = Tensor::vector(&[1.0, 2.0]);
    let _mode = switchyard::include(DispatchKey::Mode2);
    assert_eq!(mul(&x, &x).to_vec::<f32>(), [1.0, 4.0]);
    assert_eq!(SEEN.with(Cell::get), 1);
}
