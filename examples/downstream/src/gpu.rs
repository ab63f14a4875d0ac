//! `scale` and `complex64`'s `add` and `mul` on the GPU (crate feature `wgpu`): WGSL snippets
//! (`scale.wgsl`, `complex.wgsl`) and a few kernels, through the wgpu backend's public kernel API
//! only.

use switchyard::ops::{add, mul};
use switchyard::rules::broadcast_pair;
use switchyard::{DType, Result, Tensor, kernel};
use switchyard_backends::wgpu::{
    Kernel, Operand, PRELUDE, Params, WORKGROUP, elementwise, grid, launch,
};

use crate::complex::{COMPLEX64, both_complex};

/// The entry point `scale` of `scale.wgsl` after the backend's prelude, reading one input.
/// Compiled at its first launch, once per process.
static SCALE: Kernel = Kernel::new(&[PRELUDE, include_str!("scale.wgsl")], "scale", 1);

/// One invocation per element of `x`, in any layout; the result is a new contiguous GPU tensor.
/// No adapter, a tensor too large for the GPU's 32-bit indices and the like come back as errors
/// naming `downstream::scale`.
#[kernel(op = crate::scale, key = Wgpu, dtypes = "f32")]
fn scale_wgpu(x: &Tensor, factor: f32) -> Result<Tensor> {
    let params = Params {
        scalar: factor,
        ..Params::default()
    };
    elementwise(
        "downstream::scale",
        &SCALE,
        &[x],
        x.shape(),
        DType::F32,
        params,
    )
}

/// `complex64`'s `add` and `mul` on the GPU: entry points of `complex.wgsl`, two inputs each.
static COMPLEX_ADD: Kernel =
    Kernel::new(&[PRELUDE, include_str!("complex.wgsl")], "complex_add", 2);
static COMPLEX_MUL: Kernel =
    Kernel::new(&[PRELUDE, include_str!("complex.wgsl")], "complex_mul", 2);

/// `x ∘ y` on `complex64` GPU tensors, broadcast: the inputs are read through their strides as
/// elements of two words (`Operand::scaled`), the output is a new contiguous `i64` storage seen
/// as `complex64`.
fn complex_binary_wgpu(
    op: &'static str,
    kernel: &'static Kernel,
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    both_complex(op, x, y)?;
    let (x, y, shape) = broadcast_pair(op, x, y)?;
    let (x, y) = (x.as_storage_dtype(), y.as_storage_dtype());
    let out = launch(op, DType::I64, &shape, &[&x, &y], |_| {
        let operands = [Operand::scaled(&x, 2), Operand::scaled(&y, 2)];
        let params = Params::strided(op, &shape, &operands)?;
        let groups = grid(op, u64::from(params.n).div_ceil(WORKGROUP))?;
        Ok((kernel, params, groups))
    })?;
    out.as_user_dtype(COMPLEX64)
}

#[kernel(op = add, key = Wgpu, dtypes = [COMPLEX64])]
fn add_complex_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    complex_binary_wgpu("add", &COMPLEX_ADD, x, y)
}

#[kernel(op = mul, key = Wgpu, dtypes = [COMPLEX64])]
fn mul_complex_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    complex_binary_wgpu("mul", &COMPLEX_MUL, x, y)
}
