//! Launching a kernel: one dispatch writing a new tensor ([`launch`], and [`elementwise`] for one
//! invocation per element over strided operands), on a [`grid`]; public, and what the standard
//! ops' kernels use too. Then what those kernels share: the dtype checks (`served`, `held`), the
//! plain-or-strided choice of the elementwise ops, gathers. Everything that can refuse a call is
//! checked before the output is allocated, so a refused call takes no buffer from the pool.

use switchyard::{DType, DispatchError, Result, Tensor, rules};

use super::gpu::Gpu;
use super::layout::{Operand, Params, param};
use super::pipeline::Kernel;
use super::shaders::{COPY_STRIDED, FULL, GATHER_WORDS};
use super::storage::{HELD, WgpuStorage, words_per};

/// Invocations per workgroup of the elementwise kernels: the prelude's `WORKGROUP`, which a
/// kernel declares with `@workgroup_size(WORKGROUP)`.
pub const WORKGROUP: u64 = 256;

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
pub const MAX_GROUPS: u64 = 65_535;

/// A grid of `groups` workgroups (at least one): one row if it fits, else rows of
/// [`MAX_GROUPS`]; the prelude's `index` folds the rows into a flat index, and a kernel skips the
/// few invocations past its end (`if i < params.n`). An error naming `op` past `MAX_GROUPS²`.
pub fn grid(op: &'static str, groups: u64) -> Result<[u32; 2]> {
    let x = groups.clamp(1, MAX_GROUPS);
    let y = groups.div_ceil(x);
    if y > MAX_GROUPS {
        return Err(DispatchError::kernel(
            op,
            format!("{groups} workgroups exceed the wgpu grid ({MAX_GROUPS} × {MAX_GROUPS})"),
        ));
    }
    Ok([x as u32, y as u32])
}

/// One dispatch: the kernel, its parameters and its grid.
pub type Plan = (&'static Kernel, Params, [u32; 2]);

/// A new contiguous GPU tensor of `shape` and `dtype`, written by one dispatch over `inputs`
/// (bound in order, then the output), or by none when it is empty. `plan` gets the output's
/// element count and says what to dispatch; it runs before the output is allocated, so a call
/// that it refuses (a grid too large, a layout the shaders cannot index) takes no buffer from the
/// pool. Errors name `op`: an input not on the GPU, a dtype the backend does not hold, an output
/// whose words do not fit 32-bit indices, and the errors of [`Gpu::dispatch`].
pub fn launch(
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
    let gpu = Gpu::get(op)?;
    let mut bindings = Vec::with_capacity(inputs.len() + 1);
    for x in inputs {
        bindings.push(WgpuStorage::of(op, x)?);
    }
    let launch = if len == 0 { None } else { Some(plan(len)?) };
    let out = gpu.alloc(op, dtype, len)?;
    if let Some((kernel, params, groups)) = launch {
        bindings.push(&out);
        gpu.dispatch(op, kernel, &bindings, &params, groups)?;
    }
    out.into_tensor(shape)
}

/// A new contiguous GPU tensor of `shape` and `dtype` whose element `i` is computed by one
/// invocation of `kernel` from `inputs`, each a view of `shape` in any layout (broadcast operands
/// expanded first, e.g. by `switchyard::rules::broadcast_pair`); at most
/// [`MAX_OPERANDS`](super::MAX_OPERANDS) inputs. The kernel gets `params` with `n` and the
/// inputs' layouts filled in ([`Params::strided`]: `offsets(i)` finds element `i` in each input)
/// and runs on a grid of `n / WORKGROUP` workgroups. Errors name `op`, as [`launch`]'s, and an
/// input of another shape.
pub fn elementwise(
    op: &'static str,
    kernel: &'static Kernel,
    inputs: &[&Tensor],
    shape: &[usize],
    dtype: DType,
    params: Params,
) -> Result<Tensor> {
    if let Some(x) = inputs.iter().find(|x| x.shape() != shape) {
        return Err(DispatchError::shape(
            op,
            format!(
                "an elementwise kernel reads views of the output's shape {shape:?}; got {:?}: \
                 broadcast it first (`expand`, or `switchyard::rules::broadcast_pair`)",
                x.shape()
            ),
        ));
    }
    launch(op, dtype, shape, inputs, |_| {
        let operands: Vec<Operand> = inputs.iter().map(|x| Operand::of(x)).collect();
        let (kernel, layouts, groups) = strided_plan(op, kernel, shape, &operands)?;
        let params = Params {
            m: params.m,
            k: params.k,
            scalar: params.scalar,
            ..layouts
        };
        Ok((kernel, params, groups))
    })
}

/// The plan of a strided kernel with one invocation per element of `shape` (the layouts' shape:
/// an output shape, with an innermost dimension of words where the kernel works on words).
pub(super) fn strided_plan(
    op: &'static str,
    kernel: &'static Kernel,
    shape: &[usize],
    operands: &[Operand],
) -> Result<Plan> {
    let params = Params::strided(op, shape, operands)?;
    let groups = grid(op, u64::from(params.n).div_ceil(WORKGROUP))?;
    Ok((kernel, params, groups))
}

/// An elementwise `f32` op writing a contiguous tensor of `shape` from `inputs` (each a view of
/// `shape`: broadcast operands expanded by the caller): the `plain` kernel when every input is
/// [`dense`], else its `strided` twin.
pub(super) fn f32_map(
    op: &'static str,
    (plain, strided): (&'static Kernel, &'static Kernel),
    inputs: &[&Tensor],
    shape: &[usize],
) -> Result<Tensor> {
    if !inputs.iter().all(|x| dense(x)) {
        return launch(op, DType::F32, shape, inputs, |_| {
            let operands: Vec<Operand> = inputs.iter().map(|x| Operand::of(x)).collect();
            strided_plan(op, strided, shape, &operands)
        });
    }
    launch(op, DType::F32, shape, inputs, |len| {
        let params = Params {
            n: param(op, len as u64)?,
            ..Params::default()
        };
        Ok((plain, params, grid(op, (len as u64).div_ceil(WORKGROUP))?))
    })
}

/// A contiguous `f32` tensor of `shape` filled with `value`.
pub(super) fn fill(op: &'static str, shape: &[usize], value: f32) -> Result<Tensor> {
    launch(op, DType::F32, shape, &[], |len| {
        let params = Params {
            n: param(op, len as u64)?,
            scalar: value,
            ..Params::default()
        };
        Ok((&FULL, params, grid(op, (len as u64).div_ceil(WORKGROUP))?))
    })
}

/// `x`'s elements gathered row-major into a new GPU buffer of its dtype: `f32` by the strided
/// copy shader, `bool` and `i64` as views of their words.
pub(super) fn gather(op: &'static str, x: &Tensor) -> Result<Tensor> {
    let words = held(op, x)?;
    if x.dtype() == DType::F32 {
        return elementwise(
            op,
            &COPY_STRIDED,
            &[x],
            x.shape(),
            DType::F32,
            Params::default(),
        );
    }
    let mut shape = x.shape().to_vec();
    shape.push(words);
    launch(op, x.dtype(), x.shape(), &[x], |_| {
        strided_plan(op, &GATHER_WORDS, &shape, &[Operand::words(x, words)])
    })
}

/// A binary `f32` op by its plain and strided kernels, broadcast.
pub(super) fn binary(
    op: &'static str,
    kernels: (&'static Kernel, &'static Kernel),
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    served(op, &[x, y])?;
    // Views of the broadcast shape (stride 0 where an operand stretches), or the shape error
    // the CPU gives, naming both shapes.
    let (x, y, shape) = rules::broadcast_pair(op, x, y)?;
    f32_map(op, kernels, &[&x, &y], &shape)
}

/// A unary `f32` op by its plain and strided kernels.
pub(super) fn unary(
    op: &'static str,
    kernels: (&'static Kernel, &'static Kernel),
    x: &Tensor,
) -> Result<Tensor> {
    served(op, &[x])?;
    f32_map(op, kernels, &[x], x.shape())
}
