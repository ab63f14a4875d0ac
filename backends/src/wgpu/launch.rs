//! What the kernels share: the dtype checks (`served`, `held`), the output tensor, and one
//! dispatch recorded per call (`launch`) for elementwise, strided, word and factory kernels.
//! Everything that can refuse a call is checked before the output is allocated, so a refused
//! call takes no buffer from the pool.

use switchyard::{DType, Device, DispatchError, Result, Tensor, rules};

use super::context::{Params, PooledBuffer, context};
use super::layout::{self, Operand, param};
use super::pipelines::{ELEMENTWISE_WORKGROUP, Kernel};
use super::storage::{HELD, WgpuStorage, words_per};

/// What the arithmetic kernels serve: `f32` tensors, in any layout (GPU operands of any strides
/// and offset). Other dtypes are a clear error, not a silent conversion.
pub(super) fn served(op: &'static str, inputs: &[&Tensor]) -> Result<()> {
    for x in inputs {
        if x.dtype() != DType::F32 {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "the wgpu backend computes {op} on f32 tensors only; got {} with shape {:?} \
                     on {}: convert with `to_dtype(DType::F32)`, or compute on the CPU",
                    x.dtype(),
                    x.shape(),
                    x.device()
                ),
            ));
        }
    }
    Ok(())
}

/// The 32-bit words an element of `x` takes on the GPU, or an error naming `op`, `x`'s dtype and
/// shape when the backend does not hold its dtype (see `storage::words_per`).
pub(super) fn held(op: &'static str, x: &Tensor) -> Result<usize> {
    words_per(x.dtype()).ok_or_else(|| {
        DispatchError::kernel(
            op,
            format!(
                "the wgpu backend holds {HELD} tensors only; got {} with shape {:?} on {}: \
                 convert with `to_dtype(DType::F32)` first, or compute on the CPU",
                x.dtype(),
                x.shape(),
                x.device()
            ),
        )
    })
}

/// Whether the plain shaders can read `x`: its elements are the first `numel` of its buffer, in
/// row-major order.
pub(super) fn dense(x: &Tensor) -> bool {
    x.is_contiguous() && x.storage_offset() == 0
}

/// Workgroups per grid dimension that every adapter supports.
pub(super) const MAX_GROUPS: u64 = 65_535;

/// The GPU storage of `x`, or an error naming `op` if `x` is elsewhere (which dispatch rules out:
/// a call reaches this backend only if an argument is on the GPU, and mixed devices are an error).
pub(super) fn storage<'t>(op: &'static str, x: &'t Tensor) -> Result<&'t WgpuStorage> {
    x.backend_storage::<WgpuStorage>().ok_or_else(|| {
        DispatchError::kernel(
            op,
            format!("the wgpu backend got a tensor on {}", x.device()),
        )
    })
}

/// A GPU tensor of `shape` and `dtype` whose values are the first `len` (its checked element
/// count) of `buffer`.
pub(super) fn gpu_tensor(
    buffer: PooledBuffer,
    len: usize,
    shape: &[usize],
    dtype: DType,
) -> Result<Tensor> {
    Tensor::from_backend(WgpuStorage::new(buffer, len, dtype), shape, Device::Wgpu)
}

/// The bytes of `len` elements of `dtype` (one the backend holds). `len` is a tensor's checked
/// element count, so the product fits (GPU elements are at most 8 bytes, like the host's).
pub(super) fn bytes(len: usize, dtype: DType) -> u64 {
    len as u64 * 4 * words_per(dtype).unwrap_or(1) as u64
}

/// A grid of `groups` workgroups: one row if it fits, else rows of [`MAX_GROUPS`] (the shaders
/// fold the row into a flat index and skip the few workgroups past the end).
pub(super) fn grid(op: &'static str, groups: u64) -> Result<[u32; 2]> {
    let x = groups.clamp(1, MAX_GROUPS);
    let y = groups.div_ceil(x);
    if y > MAX_GROUPS {
        return Err(DispatchError::kernel(
            op,
            format!("{groups} workgroups exceed the wgpu grid"),
        ));
    }
    Ok([x as u32, y as u32])
}

/// One dispatch: the kernel, its parameters and its grid.
pub(super) type Plan = (Kernel, Params, [u32; 2]);

/// A new contiguous GPU tensor of `shape` and `dtype`, written by one dispatch over `inputs`
/// (bound in order, then the output), or by none when it is empty. `plan` gets the output's
/// element count and says what to dispatch; it runs before the output is allocated, so a call
/// that it refuses (the grid, a layout the shaders cannot index) takes no buffer from the pool.
pub(super) fn launch(
    op: &'static str,
    dtype: DType,
    shape: &[usize],
    inputs: &[&Tensor],
    plan: impl FnOnce(usize) -> Result<Plan>,
) -> Result<Tensor> {
    // The output's element count is checked here (a factory's shape comes from the caller), and
    // its words must fit the shaders' 32-bit indices (an `i64` output's words are twice its
    // elements).
    let len = Tensor::checked_numel(op, shape, dtype)?;
    param(op, len as u64 * words_per(dtype).unwrap_or(1) as u64)?;
    let gpu = context(op)?;
    let mut bindings = Vec::with_capacity(inputs.len() + 1);
    for x in inputs {
        bindings.push(storage(op, x)?.binding());
    }
    let launch = if len == 0 { None } else { Some(plan(len)?) };
    let out = gpu.alloc(op, len, dtype)?;
    if let Some((kernel, params, groups)) = launch {
        bindings.push((out.buffer(), bytes(len, dtype)));
        gpu.dispatch(kernel, &bindings, params, groups);
    }
    gpu_tensor(out, len, shape, dtype)
}

/// The plan of a strided kernel with one invocation per element of `shape` (the layouts' shape:
/// an output shape, with an innermost dimension of words where the kernel works on words).
pub(super) fn strided_plan(
    op: &'static str,
    kernel: Kernel,
    shape: &[usize],
    operands: &[Operand],
) -> Result<Plan> {
    // The layouts' element count: the output's (checked) times at most two words.
    let n: usize = shape.iter().product();
    let params = layout::strided(op, shape, n, operands)?;
    let groups = grid(op, (n as u64).div_ceil(ELEMENTWISE_WORKGROUP))?;
    Ok((kernel, params, groups))
}

/// An elementwise `f32` kernel writing a contiguous tensor of `shape` from `inputs` (each a view
/// of `shape`: broadcast operands expanded by the caller), or `full` when there are none. A plain
/// `kernel` runs when every input is [`dense`], else its strided twin does.
pub(super) fn elementwise(
    op: &'static str,
    kernel: Kernel,
    inputs: &[&Tensor],
    shape: &[usize],
    scalar: f32,
) -> Result<Tensor> {
    launch(op, DType::F32, shape, inputs, |len| {
        let groups = grid(op, (len as u64).div_ceil(ELEMENTWISE_WORKGROUP))?;
        let (kernel, params) = match kernel.strided() {
            Some(strided) if strided == kernel || !inputs.iter().all(|x| dense(x)) => {
                (strided, layout::elementwise(op, shape, len, inputs)?)
            }
            _ => {
                let params = Params {
                    n: param(op, len as u64)?,
                    scalar,
                    ..Params::default()
                };
                (kernel, params)
            }
        };
        Ok((kernel, params, groups))
    })
}

/// `x`'s elements gathered row-major into a new GPU buffer of its dtype: `f32` by the strided
/// copy shader, `bool` and `i64` as views of their words.
pub(super) fn gather(op: &'static str, x: &Tensor) -> Result<Tensor> {
    let words = held(op, x)?;
    if x.dtype() == DType::F32 {
        return elementwise(op, Kernel::CopyStrided, &[x], x.shape(), 0.0);
    }
    let mut shape = x.shape().to_vec();
    shape.push(words);
    launch(op, x.dtype(), x.shape(), &[x], |_| {
        strided_plan(op, Kernel::GatherWords, &shape, &[Operand::words(x, words)])
    })
}

pub(super) fn binary(op: &'static str, kernel: Kernel, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    served(op, &[x, y])?;
    // Views of the broadcast shape (stride 0 where an operand stretches), or the shape error
    // the CPU gives, naming both shapes.
    let (x, y, shape) = rules::broadcast_pair(op, x, y)?;
    elementwise(op, kernel, &[&x, &y], &shape, 0.0)
}

pub(super) fn unary(op: &'static str, kernel: Kernel, x: &Tensor) -> Result<Tensor> {
    served(op, &[x])?;
    elementwise(op, kernel, &[x], x.shape(), 0.0)
}
