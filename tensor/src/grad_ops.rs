//! Ops that backward formulas call, so that a backend can fuse what their decomposition would
//! run as several ops: `relu_backward`. Each is an op with a body (its decomposition into other
//! standard ops), so it runs on every backend that serves those; a backend registers a kernel
//! where one pass is faster (the CPU SIMD kernels). Re-exported from [`crate::ops`].

use switchyard::op;

use crate::Tensor;
use crate::ops::{try_full, try_le, try_where_cond};

/// The gradient of [`relu`](fn@crate::ops::relu) from the gradient of its output, `grad`, and
/// its output, `out`: `out ≤ 0 ? 0 : grad`, PyTorch's `threshold_backward(grad, out, 0)`. So
/// the gradient is `+0` where the output is 0 or below (PyTorch's choice at 0), whatever `grad`
/// holds there (a NaN or infinite `grad` too), and `grad` passes where the output is positive
/// or NaN (a NaN is not `≤ 0`). Shapes broadcast as in [`mul`](fn@crate::ops::mul); the result
/// has `grad`'s dtype.
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{Tensor, ops};
/// let out = ops::relu(&Tensor::from_vec(vec![-1.0f32, 0.0, 2.0, f32::NAN], &[4]).unwrap());
/// let grad = Tensor::from_vec(vec![5.0f32, 5.0, 5.0, 5.0], &[4]).unwrap();
/// assert_eq!(ops::relu_backward(&grad, &out).to_vec::<f32>(), [0.0, 0.0, 5.0, 5.0]);
/// ```
#[op(name = "switchyard::relu_backward")]
pub fn relu_backward(grad: &Tensor, out: &Tensor) -> Tensor {
    let zero_out = try_full(&[], 0.0, out.dtype(), out.device())?;
    let zero_grad = try_full(&[], 0.0, grad.dtype(), grad.device())?;
    try_where_cond(&try_le(out, &zero_out)?, &zero_grad, grad)
}
