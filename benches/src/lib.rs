//! Shared pieces of the benchmarks: trivial two-tensor ops, their kernels, and the same bodies
//! called directly, so that the difference between the two is the cost of dispatch alone.
//!
//! Two shapes of trivial kernel: `pick` returns a tensor (an atomic reference-count increment,
//! whose latency can hide the dispatcher's instructions), `ranks` returns a number (no atomics,
//! so the dispatcher's cost shows in full). `ranks` also has a redispatching layer at `Custom1`,
//! and every op a pass-through boxed fallback at `Custom2`, each active only when included.

use switchyard::{
    DTypeColumn, DispatchKey, DispatchKeySet, OpHandle, Stack, Tensor, fallback, kernel, op,
};
use switchyard_backends as _;

/// A two-tensor op whose kernel does (almost) nothing: returns a handle to `x`.
#[op(name = "bench::pick")]
pub fn pick(x: &Tensor, y: &Tensor) -> Tensor;

/// The kernel: an ordinary function, which the op's adapter inlines as it would a real kernel.
#[kernel(op = "pick", key = CpuNaive)]
fn pick_kernel(x: &Tensor, _y: &Tensor) -> Tensor {
    x.clone()
}

/// The same body as a plain function: the baseline a dispatched call is compared with.
/// `inline(never)` so that the baseline pays a real call, as the dispatched one does.
#[inline(never)]
pub fn pick_direct(x: &Tensor, _y: &Tensor) -> Tensor {
    x.clone()
}

/// A two-tensor op whose kernel only reads: the sum of the two tensors' ranks.
#[op(name = "bench::ranks")]
pub fn ranks(x: &Tensor, y: &Tensor) -> usize;

#[kernel(op = "ranks", key = CpuNaive)]
fn ranks_kernel(x: &Tensor, y: &Tensor) -> usize {
    x.dim() + y.dim()
}

/// The same body as a plain function, not inlined: the baseline for `ranks`.
#[inline(never)]
pub fn ranks_direct(x: &Tensor, y: &Tensor) -> usize {
    x.dim() + y.dim()
}

/// One extra layer: at `Custom1`, `ranks` continues below its own key, as an autograd or
/// tracing layer would. Active only under `include(DispatchKey::Custom1)`.
#[kernel(op = "ranks", key = Custom1)]
fn ranks_layer(keys: DispatchKeySet, x: &Tensor, y: &Tensor) -> switchyard::Result<usize> {
    ranks::redispatch(keys.below(DispatchKey::Custom1), x, y)
}

/// A boxed fallback that does nothing but continue below its key: under
/// `include(DispatchKey::Custom2)` a typed call is boxed, runs this, and is unboxed again.
#[fallback(key = Custom2)]
fn pass_through(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> switchyard::Result<()> {
    op.redispatch_boxed(keys.below(DispatchKey::Custom2), stack)
}

/// The dtype bit a tensor library's `f32` tensor adds to its keys (`DType::F32.key_bit()`).
const F32_BIT: DispatchKeySet = match DTypeColumn::F32.dtype() {
    Some(dtype) => dtype.key_bit(),
    None => DispatchKeySet::EMPTY,
};

/// A CPU tensor that reports its dtype as a typed tensor library does: its keys and its dtype's
/// bit, so a call reads the `f32` column of its op's table. (One `or` of a constant more than a
/// tensor that stores the bit with its keys.)
#[derive(Clone, Debug)]
pub struct Typed(pub Tensor);

impl switchyard::DispatchArg for Typed {
    #[inline(always)]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.0.dispatch_keys() | F32_BIT
    }
}

/// `ranks` for typed arguments, with a kernel per column as a typed backend has them: `f32` at
/// `CpuSimd`, every dtype at `CpuNaive`. Its table has two resolutions (the `f32` column and the
/// rest), so the typed call measures the column lookup.
#[op(name = "bench::typed_ranks", unboxed)]
pub fn typed_ranks(x: &Typed, y: &Typed) -> usize;

#[kernel(op = "typed_ranks", key = CpuSimd, dtypes = "f32")]
fn typed_ranks_f32(x: &Typed, y: &Typed) -> usize {
    x.0.dim() + y.0.dim()
}

#[kernel(op = "typed_ranks", key = CpuNaive)]
fn typed_ranks_naive(x: &Typed, y: &Typed) -> usize {
    x.0.dim() + y.0.dim()
}

/// The same body as a plain function, not inlined: the baseline for `typed_ranks`.
#[inline(never)]
pub fn typed_ranks_direct(x: &Typed, y: &Typed) -> usize {
    x.0.dim() + y.0.dim()
}
