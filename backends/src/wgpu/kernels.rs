//! `#[kernel(key = Wgpu)]` for every standard op: each checks its arguments, takes output buffers
//! from the pool and records its dispatches; none waits for the GPU.

use switchyard::ops::{add, div, exp, full, matmul, mean, mul, neg, relu, sub, sum, to};
use switchyard::{DType, Device, DispatchError, Result, Tensor, kernel, rules};

use super::context::{Context, Params, PooledBuffer, context};
use super::pipelines::{
    ELEMENTWISE_WORKGROUP, Kernel, MATMUL_TILE, REDUCE_PER_THREAD, REDUCE_WORKGROUP,
};
use super::storage::WgpuStorage;

/// What this backend serves today: `f32` tensors that are their whole GPU buffer, contiguous
/// (elementwise operands of one shape); CPU sources of `to` may be any contiguous `f32` view.
/// Anything else is a clear error rather than a silent host round trip.
fn served(op: &'static str, inputs: &[&Tensor]) -> Result<()> {
    for x in inputs {
        let whole = x.is_contiguous() && x.storage_offset() == 0 && x.numel() == x.storage().len();
        if x.dtype() != DType::F32 || !whole && x.device() == Device::Wgpu || !x.is_contiguous() {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "the wgpu backend serves contiguous f32 tensors only (not yet other dtypes or \
                     strided views); got {} with shape {:?} and strides {:?}: call \
                     `to(Device::Cpu)` first",
                    x.dtype(),
                    x.shape(),
                    x.strides()
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that two operands of an elementwise op have one shape (broadcasting on the GPU is not
/// built yet).
fn same_shape(op: &'static str, x: &Tensor, y: &Tensor) -> Result<()> {
    served(op, &[x, y])?;
    if x.shape() == y.shape() {
        return Ok(());
    }
    switchyard::broadcast_shapes(op, x.shape(), y.shape())?;
    Err(DispatchError::kernel(
        op,
        format!(
            "the wgpu backend does not broadcast yet ({:?} with {:?}): call `expand` and \
             `contiguous` on the CPU first",
            x.shape(),
            y.shape()
        ),
    ))
}

/// Workgroups per grid dimension that every adapter supports.
const MAX_GROUPS: u64 = 65_535;

/// The GPU storage of `x`, or an error naming `op` if `x` is elsewhere (which dispatch rules out:
/// a call reaches this backend only if an argument is on the GPU, and mixed devices are an error).
fn storage<'t>(op: &'static str, x: &'t Tensor) -> Result<&'t WgpuStorage> {
    x.backend_storage::<WgpuStorage>().ok_or_else(|| {
        DispatchError::kernel(
            op,
            format!("the wgpu backend got a tensor on {}", x.device()),
        )
    })
}

/// A GPU tensor of `shape` whose values are the first `len` (its checked element count) of `buffer`.
fn gpu_tensor(buffer: PooledBuffer, len: usize, shape: &[usize]) -> Result<Tensor> {
    Tensor::from_backend(WgpuStorage::new(buffer, len), shape, Device::Wgpu)
}

/// The bytes of `len` `f32`s. `len` is a tensor's checked element count, so the product fits
/// (it is at most `isize::MAX`).
fn bytes(len: usize) -> u64 {
    len as u64 * 4
}

/// `value` as a shader's `u32` parameter.
fn param(op: &'static str, value: u64) -> Result<u32> {
    u32::try_from(value).map_err(|_| {
        DispatchError::kernel(
            op,
            format!("{value} exceeds the wgpu backend's 32-bit sizes"),
        )
    })
}

/// A grid of `groups` workgroups: one row if it fits, else rows of [`MAX_GROUPS`] (the shaders
/// fold the row into a flat index and skip the few workgroups past the end).
fn grid(op: &'static str, groups: u64) -> Result<[u32; 2]> {
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

/// An elementwise kernel over `inputs` (one shape, checked by the caller), or `full` when there
/// are none.
fn elementwise(
    op: &'static str,
    kernel: Kernel,
    inputs: &[&Tensor],
    shape: &[usize],
    scalar: f32,
) -> Result<Tensor> {
    // `full`'s shape comes from the caller: its element count is checked here.
    let len = Tensor::checked_numel(op, shape, DType::F32)?;
    let gpu = context(op)?;
    let mut bindings = Vec::with_capacity(inputs.len() + 1);
    for x in inputs {
        bindings.push(storage(op, x)?.binding());
    }
    let out = gpu.alloc(op, len)?;
    if len > 0 {
        let groups = grid(op, (len as u64).div_ceil(ELEMENTWISE_WORKGROUP))?;
        bindings.push((out.buffer(), bytes(len)));
        let params = Params {
            n: param(op, len as u64)?,
            scalar,
            ..Params::default()
        };
        gpu.dispatch(kernel, &bindings, params, groups);
    }
    gpu_tensor(out, len, shape)
}

fn binary(op: &'static str, kernel: Kernel, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    same_shape(op, x, y)?;
    elementwise(op, kernel, &[x, y], x.shape(), 0.0)
}

fn unary(op: &'static str, kernel: Kernel, x: &Tensor) -> Result<Tensor> {
    served(op, &[x])?;
    elementwise(op, kernel, &[x], x.shape(), 0.0)
}

#[kernel(op = "add", key = Wgpu)]
fn add_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("add", Kernel::Add, x, y)
}

#[kernel(op = "sub", key = Wgpu)]
fn sub_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("sub", Kernel::Sub, x, y)
}

#[kernel(op = "mul", key = Wgpu)]
fn mul_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("mul", Kernel::Mul, x, y)
}

#[kernel(op = "div", key = Wgpu)]
fn div_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("div", Kernel::Div, x, y)
}

#[kernel(op = "neg", key = Wgpu)]
fn neg_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("neg", Kernel::Neg, x)
}

#[kernel(op = "relu", key = Wgpu)]
fn relu_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("relu", Kernel::Relu, x)
}

#[kernel(op = "exp", key = Wgpu)]
fn exp_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("exp", Kernel::Exp, x)
}

#[kernel(op = "full", key = Wgpu)]
fn full_wgpu(shape: &[usize], value: f64, dtype: DType, _device: Device) -> Result<Tensor> {
    if dtype != DType::F32 {
        return Err(DispatchError::kernel(
            "full",
            format!("the wgpu backend holds f32 tensors only, not yet {dtype}"),
        ));
    }
    elementwise("full", Kernel::Full, &[], shape, value as f32)
}

/// The sum of `x` times `scale_by_len ? 1/len : 1`, as a 0-d tensor: passes of workgroup
/// reductions, each leaving one partial sum per workgroup, until one value is left. All passes
/// are recorded at once; none waits.
fn reduce(op: &'static str, x: &Tensor, scale_by_len: bool) -> Result<Tensor> {
    served(op, &[x])?;
    let gpu: &'static Context = context(op)?;
    let chunk = REDUCE_WORKGROUP * REDUCE_PER_THREAD;
    let total = x.numel() as u64;
    let mut input = storage(op, x)?.binding();
    let mut len = total;
    // The previous pass's output: the next pass's input, kept alive until that pass is recorded.
    let mut partials: PooledBuffer;
    loop {
        let groups = len.div_ceil(chunk).max(1);
        let last = groups == 1;
        // The mean of nothing is 0 · (1/0) = NaN, as on the CPU.
        let scalar = if last && scale_by_len {
            1.0 / total as f32
        } else {
            1.0
        };
        let out = gpu.alloc(op, groups as usize)?;
        let params = Params {
            n: param(op, len)?,
            m: param(op, groups)?,
            k: 0,
            scalar,
        };
        gpu.dispatch(
            Kernel::SumPass,
            &[input, (out.buffer(), groups * 4)],
            params,
            grid(op, groups)?,
        );
        partials = out;
        if last {
            break;
        }
        input = (partials.buffer(), groups * 4);
        len = groups;
    }
    gpu_tensor(partials, 1, &[])
}

#[kernel(op = "sum", key = Wgpu)]
fn sum_wgpu(x: &Tensor) -> Result<Tensor> {
    reduce("sum", x, false)
}

#[kernel(op = "mean", key = Wgpu)]
fn mean_wgpu(x: &Tensor) -> Result<Tensor> {
    reduce("mean", x, true)
}

#[kernel(op = "matmul", key = Wgpu)]
fn matmul_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    // The result's element count `m·n` is checked (the CPU backend's shape and size rules).
    served("matmul", &[x, y])?;
    let (m, k, n, len) = rules::matmul_dims(x, y, DType::F32)?;
    let (shape, m, k, n) = ([m, n], m as u64, k as u64, n as u64);
    let gpu = context("matmul")?;
    let (xs, ys) = (storage("matmul", x)?, storage("matmul", y)?);
    let out = gpu.alloc("matmul", len)?;
    if len > 0 {
        let groups = [n.div_ceil(MATMUL_TILE), m.div_ceil(MATMUL_TILE)];
        if groups.iter().any(|&g| g > MAX_GROUPS) {
            return Err(DispatchError::kernel(
                "matmul",
                format!("a [{m}, {n}] result exceeds the wgpu grid"),
            ));
        }
        let params = Params {
            n: param("matmul", n)?,
            m: param("matmul", m)?,
            k: param("matmul", k)?,
            scalar: 0.0,
        };
        gpu.dispatch(
            Kernel::Matmul,
            &[xs.binding(), ys.binding(), (out.buffer(), bytes(len))],
            params,
            groups.map(|g| g as u32),
        );
    }
    gpu_tensor(out, len, &shape)
}

/// Copies between the CPU (or any device whose storage can be read back to the host) and the
/// GPU. The call lands here whenever the GPU is involved: `Wgpu` is the highest backend key.
#[kernel(op = "to", key = Wgpu)]
fn to_wgpu(x: &Tensor, device: Device) -> Result<Tensor> {
    match (x.device(), device) {
        (Device::Wgpu, Device::Wgpu) => Ok(x.clone()),
        (Device::Wgpu, Device::Cpu) => Tensor::from_vec::<f32>(x.try_to_vec::<f32>()?, x.shape()),
        (_, Device::Wgpu) => {
            served("to", &[x])?;
            let gpu = context("to")?;
            let buffer = match x.as_slice::<f32>() {
                Ok(values) => gpu.upload("to", &values)?,
                Err(_) => gpu.upload("to", &x.try_to_vec::<f32>()?)?,
            };
            gpu_tensor(buffer, x.numel(), x.shape())
        }
        (from, to) => Err(DispatchError::kernel(
            "to",
            format!("the wgpu backend copies to the CPU and to the GPU, not from {from} to {to}"),
        )),
    }
}
