//! Ops that backward formulas call, so that a backend can fuse what their decomposition would
//! run as several ops: `relu_backward`. Each is an op with a body (its decomposition into other
//! standard ops), so it runs on every backend that serves those; a backend registers a kernel
//! where one pass is faster (the CPU SIMD kernels). Re-exported from [`crate::ops`].

use switchyard::op;

use crate::Tensor;
use crate::ops::{try_full, try_gt, try_mul, try_to_dtype};

/// The gradient of [`relu`](fn@crate::ops::relu) from the gradient of its output, `grad`, and
/// its output, `out`: `grad · [out > 0]`, where `[out > 0]` is 1 or 0 in `grad`'s dtype. So the
/// gradient is 0 where the output is 0 (PyTorch's choice at 0) and passes where it is positive;
/// a NaN or infinite `grad` where `out ≤ 0` gives NaN (`∞ · 0`), as the product does. PyTorch's
/// `threshold_backward(grad, out, 0)`. Shapes broadcast and dtypes promote as in
/// [`mul`](fn@crate::ops::mul).
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{Tensor, ops};
/// let out = ops::relu(&Tensor::from_vec(vec![-1.0f32, 0.0, 2.0], &[3]).unwrap());
/// let grad = Tensor::from_vec(vec![5.0f32, 5.0, 5.0], &[3]).unwrap();
/// assert_eq!(ops::relu_backward(&grad, &out).to_vec::<f32>(), [0.0, 0.0, 5.0]);
/// ```
#[op(name = "relu_backward")]
pub fn relu_backward(grad: &Tensor, out: &Tensor) -> Tensor {
    let zero = try_full(&[], 0.0, out.dtype(), out.device())?;
    let positive = try_to_dtype(&try_gt(out, &zero)?, grad.dtype())?;
    try_mul(grad, &positive)
}
