//! `#[kernel(key = Wgpu)]` for every standard op: each checks its arguments, takes output buffers
//! from the pool and records its dispatches; none waits for the GPU.
//!
//! Operands may be any strided views of GPU buffers, and binary operands broadcast (NumPy's
//! rules): elementwise ops take the plain shaders when every operand is contiguous from the
//! start of its buffer and of the output's shape, and the strided shaders otherwise; `matmul`
//! reads strides directly; `sum`, `mean` and reading back to the CPU first gather a strided view
//! into a contiguous buffer on the GPU. Nothing goes through the host.
//!
//! The GPU holds `f32`, `bool` and `i64` tensors (`storage.rs` says how each lies in a buffer).
//! The arithmetic kernels here declare `dtypes = "f32"`, so the tables and dumps say what the
//! backend computes; `contiguous` serves the three held dtypes. `to` declares none and refuses
//! other dtypes itself: its call carries the source's dtype, and a copy of an `f64` CPU tensor to
//! the GPU that found no `f64` kernel at `Wgpu` would say that no backend implements `to` for the
//! device, which misleads; its own error names the dtype. `to_dtype`'s `DType` argument adds its
//! own bit to the call's column (see the kernel). `copy_` converts a source of any dtype to the
//! destination's first (on the CPU for a CPU source). The network ops (`log` … `randn`) are in
//! `kernels_nn.rs`; what both files share (dtype checks, one recorded dispatch per call) in
//! `launch.rs`.
//!
//! `copy_` is the one kernel that writes an existing buffer: a scatter through the destination's
//! strides, recorded like any dispatch (so calls recorded before it read the old values).

use switchyard::ops::{
    Rounding, add, contiguous, copy_, div, div_rounded, exp, full, matmul, mean, mul, neg, relu,
    sub, sum, to, to_dtype, try_to, try_to_dtype,
};
use switchyard::{
    DType, Device, DispatchError, Element, Result, Scalar, Tensor, kernel, rules, with_element,
};

use super::gpu::Gpu;
use super::launch::{
    MAX_GROUPS, WORKGROUP, binary, dense, fill, gather, grid, held, launch, served, strided_plan,
    unary,
};
use super::layout::{self, Operand, Params, param};
use super::shaders::{self, MATMUL_TILE, REDUCE_PER_THREAD, REDUCE_WORKGROUP};
use super::storage::{HELD, WgpuStorage, words_per};

#[kernel(op = "add", key = Wgpu, dtypes = "f32")]
fn add_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("add", (&shaders::ADD, &shaders::ADD_STRIDED), x, y)
}

#[kernel(op = "sub", key = Wgpu, dtypes = "f32")]
fn sub_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("sub", (&shaders::SUB, &shaders::SUB_STRIDED), x, y)
}

#[kernel(op = "mul", key = Wgpu, dtypes = "f32")]
fn mul_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("mul", (&shaders::MUL, &shaders::MUL_STRIDED), x, y)
}

#[kernel(op = "div", key = Wgpu, dtypes = "f32")]
fn div_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("div", (&shaders::DIV, &shaders::DIV_STRIDED), x, y)
}

/// `div` rounded toward zero or negative infinity, bit for bit the naive CPU backend's answer
/// (`div_rounded.wgsl` says how): `f32` quotients, the mixed column's operands converted to `f32`
/// on the GPU first when `f32` is their common dtype (`bool` and `i64` beside `f32`, as the CPU
/// converts them). Integer quotients are not computed here: the CPU refuses an integer zero
/// divisor, which the GPU could only find by waiting for the divisor's values; the
/// missing-kernel error (a column of one integer dtype) or this kernel's own (a mixed pair whose
/// common dtype is an integer) says so.
#[kernel(op = div_rounded, key = Wgpu, dtypes = "f32,mixed")]
fn div_rounded_wgpu(x: &Tensor, y: &Tensor, mode: Rounding) -> Result<Tensor> {
    const OP: &str = "div_rounded";
    let dtype = rules::binary(OP, x, y)?;
    held(OP, x)?;
    held(OP, y)?;
    if dtype != DType::F32 {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "the wgpu backend computes div_rounded of f32 quotients only; {} {:?} and {}                  {:?} divide in {dtype}: convert with `to_dtype(DType::F32)`, or divide on the                  CPU (which refuses an integer zero divisor)",
                x.dtype(),
                x.shape(),
                y.dtype(),
                y.shape()
            ),
        ));
    }
    let as_f32 = |v: &Tensor| {
        if v.dtype() == DType::F32 {
            Ok(v.clone())
        } else {
            try_to_dtype(v, DType::F32)
        }
    };
    let (x, y) = (as_f32(x)?, as_f32(y)?);
    let (x, y, shape) = rules::broadcast_pair(OP, &x, &y)?;
    launch(OP, DType::F32, &shape, &[&x, &y], |_| {
        let operands = [Operand::of(&x), Operand::of(&y)];
        let (kernel, mut params, groups) =
            strided_plan(OP, &shaders::DIV_ROUNDED_F32, &shape, &operands)?;
        params.k = match mode {
            Rounding::Trunc => 0,
            Rounding::Floor => 1,
        };
        Ok((kernel, params, groups))
    })
}

#[kernel(op = "neg", key = Wgpu, dtypes = "f32")]
fn neg_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("neg", (&shaders::NEG, &shaders::NEG_STRIDED), x)
}

#[kernel(op = "relu", key = Wgpu, dtypes = "f32")]
fn relu_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("relu", (&shaders::RELU, &shaders::RELU_STRIDED), x)
}

#[kernel(op = "exp", key = Wgpu, dtypes = "f32")]
fn exp_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("exp", (&shaders::EXP, &shaders::EXP_STRIDED), x)
}

/// `full` of the dtypes the GPU holds: `f32` by the fill shader; `bool` and `i64` as the value's
/// words repeated, the value converted on the host exactly as the CPU converts it (`bool`: not
/// zero, NaN included; `i64`: toward zero, saturating). The dtype argument selects the table's
/// column, so other dtypes do not reach this kernel (the missing-kernel error names them and the
/// served ones); the check stays so that the kernel cannot build a tensor whose buffer does not
/// hold its dtype, however it is called.
#[kernel(op = "full", key = Wgpu, dtypes = "f32,bool,i64")]
fn full_wgpu(shape: &[usize], value: f64, dtype: DType, _device: Device) -> Result<Tensor> {
    const OP: &str = "full";
    let words: [u32; 2] = match dtype {
        DType::F32 => return fill(OP, shape, value as f32),
        DType::Bool => [u32::from(bool::from_scalar(Scalar::Float(value))); 2],
        DType::I64 => {
            let v = i64::from_scalar(Scalar::Float(value));
            [v as u32, (v >> 32) as u32]
        }
        other => {
            return Err(DispatchError::kernel(
                OP,
                format!("the wgpu backend holds {HELD} tensors only, not {other}"),
            ));
        }
    };
    let per_element = words_per(dtype).unwrap_or(1);
    launch(OP, dtype, shape, &[], |len| {
        // One invocation per word; `len` is a checked element count of 8-byte-or-smaller
        // elements, so the product fits.
        let n = len * per_element;
        let params = Params {
            n: param(OP, n as u64)?,
            m: words[0],
            k: words[1],
            ..Params::default()
        };
        let groups = grid(OP, (n as u64).div_ceil(WORKGROUP))?;
        Ok((&shaders::FILL_WORDS, params, groups))
    })
}

/// `x` converted to `dtype` on the GPU, between the dtypes it holds, as the CPU converts: `f32` →
/// `bool` (non-zero, NaN included, is true), `bool` → `f32` and `i64` (1 and 0), `i64` → `bool`,
/// `f32` → `i64` (toward zero, saturating, NaN to 0, as Rust's `as`) and `i64` → `f32` (through
/// `f64`'s rounding, as the CPU's `(v as f64) as f32`); `x` itself when it has `dtype`. Any other
/// pair (a dtype the GPU does not hold) is an error that says how to get it. Declares no `dtypes`: the `DType` argument adds its
/// own bit, so a conversion's call is in the mixed column, and this kernel must see every call to
/// give that error.
#[kernel(op = "to_dtype", key = Wgpu)]
fn to_dtype_wgpu(x: &Tensor, dtype: DType) -> Result<Tensor> {
    const OP: &str = "to_dtype";
    held(OP, x)?;
    if x.dtype() == dtype {
        return Ok(x.clone());
    }
    let (kernel, operand) = match (x.dtype(), dtype) {
        (DType::F32, DType::Bool) => (&shaders::F32_TO_BOOL, Operand::of(x)),
        (DType::Bool, DType::F32) => (&shaders::BOOL_TO_F32, Operand::of(x)),
        (DType::Bool, DType::I64) => (&shaders::BOOL_TO_I64, Operand::of(x)),
        (DType::F32, DType::I64) => (&shaders::F32_TO_I64, Operand::of(x)),
        // The shaders read both words of each element.
        (DType::I64, DType::Bool) => (&shaders::I64_TO_BOOL, Operand::scaled(x, 2)),
        (DType::I64, DType::F32) => (&shaders::I64_TO_F32, Operand::scaled(x, 2)),
        (from, to) => {
            return Err(DispatchError::kernel(
                OP,
                format!(
                    "the wgpu backend converts between {HELD} only, not {from} → {to} (a \
                     tensor of shape {:?}): convert on the CPU: \
                     `x.to(Device::Cpu).to_dtype(DType::{to:?})`",
                    x.shape()
                ),
            ));
        }
    };
    launch(OP, dtype, x.shape(), &[x], |_| {
        strided_plan(OP, kernel, x.shape(), &[operand])
    })
}

/// `x` itself when contiguous (whatever its offset: a contiguous view stays a view, as on the
/// CPU), else its elements gathered row-major into a new GPU buffer.
#[kernel(op = "contiguous", key = Wgpu, dtypes = "f32,bool,i64")]
fn contiguous_wgpu(x: &Tensor) -> Result<Tensor> {
    held("contiguous", x)?;
    if x.is_contiguous() {
        return Ok(x.clone());
    }
    gather("contiguous", x)
}

/// The sum of `x` times `scale_by_len ? 1/len : 1`, as a 0-d tensor: passes of workgroup
/// reductions, each leaving one partial sum per workgroup, until one value is left. A strided
/// `x` is first gathered into a contiguous buffer on the GPU. All passes are recorded at once;
/// none waits.
fn reduce(op: &'static str, x: &Tensor, scale_by_len: bool) -> Result<Tensor> {
    served(op, &[x])?;
    let gpu = Gpu::get(op)?;
    let x = if dense(x) { x.clone() } else { gather(op, x)? };
    let chunk = REDUCE_WORKGROUP * REDUCE_PER_THREAD;
    let total = x.numel() as u64;
    let mut len = total;
    // The previous pass's output: the next pass's input.
    let mut partials: Option<WgpuStorage> = None;
    loop {
        let groups = len.div_ceil(chunk).max(1);
        let last = groups == 1;
        // The mean of nothing is 0 · (1/0) = NaN, as on the CPU.
        let scalar = if last && scale_by_len {
            1.0 / total as f32
        } else {
            1.0
        };
        let out = gpu.alloc(op, DType::F32, groups as usize)?;
        let params = Params {
            n: param(op, len)?,
            m: param(op, groups)?,
            scalar,
            ..Params::default()
        };
        let input = match &partials {
            Some(previous) => previous,
            None => WgpuStorage::of(op, &x)?,
        };
        let groups_grid = grid(op, groups)?;
        gpu.dispatch(op, &shaders::SUM_PASS, &[input, &out], &params, groups_grid)?;
        if last {
            return out.into_tensor(&[]);
        }
        partials = Some(out);
        len = groups;
    }
}

#[kernel(op = "sum", key = Wgpu, dtypes = "f32")]
fn sum_wgpu(x: &Tensor) -> Result<Tensor> {
    reduce("sum", x, false)
}

#[kernel(op = "mean", key = Wgpu, dtypes = "f32")]
fn mean_wgpu(x: &Tensor) -> Result<Tensor> {
    reduce("mean", x, true)
}

/// The tiled product, or for a small one the direct product; `matmul.wgsl` reads both operands
/// through their strides, so a transposed or sliced operand costs no copy.
#[kernel(op = "matmul", key = Wgpu, dtypes = "f32")]
fn matmul_wgpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    const OP: &str = "matmul";
    if x.dim() != 2 || y.dim() != 2 {
        // Other ranks: 1-D operands as views of this product, batches as a composite.
        return rules::matmul_batched(x, y, matmul_wgpu);
    }
    // The result's element count `m·n` is checked (the CPU backend's shape and size rules).
    served(OP, &[x, y])?;
    let (m, k, n, _) = rules::matmul_dims(x, y, DType::F32)?;
    launch(OP, DType::F32, &[m, n], &[x, y], |_| {
        let params = matmul_params(x, y, [m, k, n])?;
        // Small products without tiles: their barriers would cost more than the loads they
        // save (`matmul.wgsl`). `m·n` fits a 32-bit index (`launch` checked the output).
        if m.saturating_mul(n).saturating_mul(k) <= shaders::DIRECT_MATMUL_MACS {
            let groups = ((m * n) as u64).div_ceil(shaders::DIRECT_WORKGROUP);
            return Ok((&shaders::MATMUL_DIRECT, params, grid(OP, groups)?));
        }
        let groups = [n, m].map(|d| (d as u64).div_ceil(MATMUL_TILE));
        if groups.iter().any(|&g| g > MAX_GROUPS) {
            return Err(DispatchError::kernel(
                OP,
                format!("a [{m}, {n}] result exceeds the wgpu grid"),
            ));
        }
        Ok((&shaders::MATMUL, params, groups.map(|g| g as u32)))
    })
}

/// `Params` for `matmul.wgsl`: `x: [m, k]` and `y: [k, n]` read through their offsets and
/// strides (a dimension of extent 1 gets stride 0: it is never stepped, and its stride may be
/// anything).
fn matmul_params(x: &Tensor, y: &Tensor, [m, k, n]: [usize; 3]) -> Result<Params> {
    const OP: &str = "matmul";
    let mut params = Params {
        n: param(OP, n as u64)?,
        m: param(OP, m as u64)?,
        k: param(OP, k as u64)?,
        rank: 2,
        ..Params::default()
    };
    for (i, t) in [x, y].into_iter().enumerate() {
        params.offsets[i] = Operand::of(t).offset(OP)?;
        for d in 0..2 {
            let stride = if t.shape()[d] > 1 { t.strides()[d] } else { 0 };
            params.strides[i][d] = param(OP, stride as u64)?;
        }
    }
    Ok(params)
}

/// Copies between the CPU (or any device whose storage can be read back to the host) and the
/// GPU, for the dtypes the GPU holds (`f32`, `bool`, `i64`). The call lands here whenever the GPU
/// is involved: `Wgpu` is the highest backend key.
///
/// A GPU view that is not its whole buffer is gathered on the GPU first, so only its own
/// elements cross to the host (when the strided shaders can index it); a strided CPU source is
/// gathered on the host (where its values are) and uploaded once.
#[kernel(op = "to", key = Wgpu)]
fn to_wgpu(x: &Tensor, device: Device) -> Result<Tensor> {
    const OP: &str = "to";
    match (x.device(), device) {
        (Device::Wgpu, Device::Wgpu) => Ok(x.clone()),
        (Device::Wgpu, Device::Cpu) => {
            let words = held(OP, x)?;
            // A view of part of its buffer is gathered on the GPU, so that only its elements
            // cross; a layout the shaders cannot index (see `layout.rs`) is read whole and
            // gathered on the host, which is where the values go anyway.
            let whole = dense(x) && x.numel() == x.storage().len();
            let compact = if whole || !layout::fits(x, words) {
                x.clone()
            } else {
                gather(OP, x)?
            };
            with_element!(x.dtype(), T => Tensor::from_vec::<T>(compact.try_to_vec::<T>()?, x.shape()))
        }
        (_, Device::Wgpu) => {
            held(OP, x)?;
            let gpu = Gpu::get(OP)?;
            let buffer = match x.dtype() {
                DType::F32 => match x.as_slice::<f32>() {
                    Ok(values) => {
                        gpu.upload(OP, DType::F32, x.numel(), bytemuck::cast_slice(&values))?
                    }
                    Err(_) => {
                        let values = x.try_to_vec::<f32>()?;
                        gpu.upload(OP, DType::F32, values.len(), bytemuck::cast_slice(&values))?
                    }
                },
                // A `bool` is a word, 0 or 1.
                DType::Bool => {
                    let values = x.try_to_vec::<bool>()?;
                    let bytes = gpu_bytes(OP, &values, |v| u32::from(v).to_le_bytes())?;
                    gpu.upload(OP, DType::Bool, values.len(), &bytes)?
                }
                // An `i64`'s little-endian bytes are its two words, low first.
                _ => {
                    let values = x.try_to_vec::<i64>()?;
                    let bytes = gpu_bytes(OP, &values, i64::to_le_bytes)?;
                    gpu.upload(OP, DType::I64, values.len(), &bytes)?
                }
            };
            buffer.into_tensor(x.shape())
        }
        (from, to) => Err(DispatchError::kernel(
            OP,
            format!("the wgpu backend copies to the CPU and to the GPU, not from {from} to {to}"),
        )),
    }
}

/// The GPU bytes of `values`, each as `bytes` gives them, in a fallibly allocated buffer (an
/// upload the host cannot hold is an error naming `op`, not an abort).
fn gpu_bytes<T: Copy, const N: usize>(
    op: &'static str,
    values: &[T],
    bytes: impl Fn(T) -> [u8; N],
) -> Result<Vec<u8>> {
    let len = values.len().saturating_mul(N);
    let mut out = Vec::new();
    out.try_reserve_exact(len)
        .map_err(|_| DispatchError::out_of_memory(op, len))?;
    out.extend(values.iter().flat_map(|&v| bytes(v)));
    Ok(out)
}

/// Writes `src` (any device, dtype and layout that broadcasts to `dst`'s shape) into a GPU `dst`
/// (`f32`, `bool` or `i64`) through its strides, on the GPU: a source of another dtype is
/// converted to `dst`'s first (a CPU one on the CPU, then uploaded; a GPU one by `to_dtype` on the
/// GPU), a source in `dst`'s own buffer is gathered into a buffer of its own first (so an
/// overlapping view reads the values from before the write). Counts one version of `dst`'s
/// storage.
///
/// Declares no `dtypes`: a call's column mixes the source's dtype with the destination's, and
/// the conversion is this kernel's job.
#[kernel(op = "copy_", key = Wgpu)]
fn copy_wgpu(dst: &mut Tensor, src: &Tensor) -> Result<()> {
    const OP: &str = "copy_";
    if dst.device() != Device::Wgpu {
        // `dst` on the CPU, `src` on the GPU: the copy is the CPU's to do, after a read-back.
        let on_host = try_to(src, dst.device())?;
        return switchyard::ops::try_copy_(dst, &on_host);
    }
    let words = held(OP, dst)?;
    dst.check_writable(OP)?;
    let src = match src.device() {
        Device::Wgpu if src.dtype() == dst.dtype() => src.clone(),
        Device::Wgpu => try_to_dtype(src, dst.dtype())?,
        _ if src.dtype() == dst.dtype() => try_to(src, Device::Wgpu)?,
        _ => try_to(&try_to_dtype(src, dst.dtype())?, Device::Wgpu)?,
    };
    let src = rules::copy_source(OP, dst, &src)?;
    let src = if src.same_storage(dst) {
        gather(OP, &src)?
    } else {
        src
    };
    if dst.numel() > 0 {
        let gpu = Gpu::get(OP)?;
        // `f32` through the float scatter; the others as views of their words.
        let (kernel, shape, operands) = if dst.dtype() == DType::F32 {
            let operands = vec![Operand::of(&src), Operand::of(dst)];
            (&shaders::SCATTER_STRIDED, dst.shape().to_vec(), operands)
        } else {
            let mut shape = dst.shape().to_vec();
            shape.push(words);
            let operands = vec![Operand::words(&src, words), Operand::words(dst, words)];
            (&shaders::SCATTER_WORDS, shape, operands)
        };
        let (kernel, params, groups) = strided_plan(OP, kernel, &shape, &operands)?;
        let (from, to) = (WgpuStorage::of(OP, &src)?, WgpuStorage::of(OP, dst)?);
        gpu.dispatch(OP, kernel, &[from, to], &params, groups)?;
    }
    dst.storage().bump_version();
    Ok(())
}
