//! Shared pieces of the benchmarks: a trivial two-tensor op, its kernel, and the same function
//! called directly, so that the difference between the two is the cost of dispatch alone.

use switchyard::{Tensor, kernel, op};
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
