//! `scale` on the GPU (crate feature `wgpu`): a WGSL snippet, `scale.wgsl`, and one kernel, through
//! the wgpu backend's public kernel API only.

use switchyard::{DType, Result, Tensor, kernel};
use switchyard_backends::wgpu::{Kernel, PRELUDE, Params, elementwise};

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
