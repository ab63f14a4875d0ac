//! `#[kernel(key = Wgpu)]` for the ops a small network needs (`switchyard::ops`'s `nn_ops`):
//! `log`, `tanh`, `sigmoid`, `sqrt`; `sum_dim`, `mean_dim`, `max_dim`, `argmax`; the comparisons
//! and `where`; the factories `arange`, `rand`, `randn`. Built on `launch.rs`'s helpers; none
//! waits for the GPU.
//!
//! What each serves: the elementwise math and the reductions take `f32` (`argmax` returns `i64`);
//! the comparisons take two operands of one dtype among `f32`, `bool` and `i64` and return
//! `bool`; `where` takes a `bool` condition and values of those dtypes (a `bool` value is promoted
//! on the GPU, an `f32` and an `i64` value are an error: the GPU does not convert `i64` to `f32`
//! yet); `arange` makes `f32` and `i64`, `rand` and `randn` `f32`. Other dtypes find no kernel in
//! their column, and the engine's missing-kernel error names the op, the dtypes asked for and
//! those served.

use switchyard::ops::{
    arange, argmax, eq, ge, gt, le, log, lt, max_dim, mean_dim, ne, rand_seeded, randn_seeded,
    sigmoid, sqrt, sum_dim, tanh, try_to_dtype, where_cond,
};
use switchyard::rules::{self, Reduction};
use switchyard::{DType, Device, DispatchError, Result, Tensor, kernel};

use super::launch::{
    Plan, WORKGROUP, dense, fill, gather, grid, held, launch, served, strided_plan, unary,
};
use super::layout::{Operand, Params, param};
use super::pipeline::Kernel;
use super::shaders;

#[kernel(op = "log", key = Wgpu, dtypes = "f32")]
fn log_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("log", (&shaders::LOG, &shaders::LOG_STRIDED), x)
}

#[kernel(op = "tanh", key = Wgpu, dtypes = "f32")]
fn tanh_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("tanh", (&shaders::TANH, &shaders::TANH_STRIDED), x)
}

#[kernel(op = "sigmoid", key = Wgpu, dtypes = "f32")]
fn sigmoid_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("sigmoid", (&shaders::SIGMOID, &shaders::SIGMOID_STRIDED), x)
}

#[kernel(op = "sqrt", key = Wgpu, dtypes = "f32")]
fn sqrt_wgpu(x: &Tensor) -> Result<Tensor> {
    unary("sqrt", (&shaders::SQRT, &shaders::SQRT_STRIDED), x)
}

// Reductions along dimensions: the input is viewed with its reduced dimensions innermost
// (`rules::reduction_view`), gathered into a contiguous `[outer, inner]` matrix unless it already
// is one, and each row reduced by one workgroup (`reduce_dim.wgsl`).

/// The rows of `r` reduced by `kernel` into a new tensor of `r.shape` and `dtype`; `scalar`
/// multiplies each sum. Rows are never empty here (the callers handle `r.inner == 0`).
fn reduce_rows(
    op: &'static str,
    x: &Tensor,
    r: &Reduction,
    [rows_kernel, short_rows_kernel]: [&'static Kernel; 2],
    dtype: DType,
    scalar: f32,
) -> Result<Tensor> {
    let view = rules::reduction_view(x, r)?;
    let rows = if dense(&view) {
        view
    } else {
        gather(op, &view)?
    };
    launch(op, dtype, &r.shape, &[&rows], |_| {
        // The shader indexes `row · n + j` in 32 bits: the whole matrix must fit, not only each
        // of its sides.
        param(op, rows.storage().len() as u64)?;
        let params = Params {
            n: param(op, r.inner as u64)?,
            m: param(op, r.outer as u64)?,
            scalar,
            ..Params::default()
        };
        // A short row is folded by one invocation; a longer one by a workgroup (256).
        if r.inner <= shaders::SHORT_ROW {
            let groups = (r.outer as u64).div_ceil(shaders::DIRECT_WORKGROUP);
            return Ok((short_rows_kernel, params, grid(op, groups)?));
        }
        Ok((rows_kernel, params, grid(op, r.outer as u64)?))
    })
}

#[kernel(op = "sum_dim", key = Wgpu, dtypes = "f32")]
fn sum_dim_wgpu(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    const OP: &str = "sum_dim";
    served(OP, &[x])?;
    let r = rules::reduction(OP, x.shape(), dims, keepdim)?;
    if r.inner == 0 {
        // Sums of nothing are 0.
        return fill(OP, &r.shape, 0.0);
    }
    reduce_rows(OP, x, &r, shaders::SUM_ROW_KERNELS, DType::F32, 1.0)
}

#[kernel(op = "mean_dim", key = Wgpu, dtypes = "f32")]
fn mean_dim_wgpu(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    const OP: &str = "mean_dim";
    served(OP, &[x])?;
    let r = rules::reduction(OP, x.shape(), dims, keepdim)?;
    if r.inner == 0 {
        // Means of nothing are NaN, as on the CPU.
        return fill(OP, &r.shape, f32::NAN);
    }
    // One rounding of 1/n in `f64`, then one product per row (closer than WGSL's division).
    let scale = (1.0 / r.inner as f64) as f32;
    reduce_rows(OP, x, &r, shaders::SUM_ROW_KERNELS, DType::F32, scale)
}

/// The reduction of `max_dim` and `argmax`: along one dimension, never an empty one (the CPU's
/// rule and error).
fn max_reduction(op: &'static str, x: &Tensor, dim: isize, keepdim: bool) -> Result<Reduction> {
    served(op, &[x])?;
    let r = rules::reduction(op, x.shape(), &[dim], keepdim)?;
    rules::nonempty_reduction(op, x.shape(), &r)?;
    Ok(r)
}

#[kernel(op = "max_dim", key = Wgpu, dtypes = "f32")]
fn max_dim_wgpu(x: &Tensor, dim: isize, keepdim: bool) -> Result<Tensor> {
    const OP: &str = "max_dim";
    let r = max_reduction(OP, x, dim, keepdim)?;
    reduce_rows(OP, x, &r, shaders::MAX_ROW_KERNELS, DType::F32, 1.0)
}

/// The index as an `i64` (two 32-bit words on the GPU: see `storage.rs`).
#[kernel(op = "argmax", key = Wgpu, dtypes = "f32")]
fn argmax_wgpu(x: &Tensor, dim: isize, keepdim: bool) -> Result<Tensor> {
    const OP: &str = "argmax";
    let r = max_reduction(OP, x, dim, keepdim)?;
    reduce_rows(OP, x, &r, shaders::ARGMAX_ROW_KERNELS, DType::I64, 1.0)
}

/// The six comparisons, numbered as `compare.wgsl`'s `params.k` reads them.
#[derive(Clone, Copy, Debug)]
enum Comparison {
    Eq = 0,
    Ne = 1,
    Lt = 2,
    Le = 3,
    Gt = 4,
    Ge = 5,
}

/// `x ∘ y` as a `bool` tensor, broadcast, both operands of one dtype the GPU holds (their call's
/// column says so; a pair of two dtypes is in the mixed column, which no kernel here serves).
fn compare(op: &'static str, x: &Tensor, y: &Tensor, how: Comparison) -> Result<Tensor> {
    let (kernel, words) = match (x.dtype(), y.dtype()) {
        (DType::F32, DType::F32) => (&shaders::COMPARE_F32, 1),
        (DType::Bool, DType::Bool) => (&shaders::COMPARE_BOOL, 1),
        (DType::I64, DType::I64) => (&shaders::COMPARE_I64, 2),
        (a, b) => {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "the wgpu backend compares two f32, two bool or two i64 tensors; got {a} \
                     and {b} with shapes {:?} and {:?}: convert one with `to_dtype` first",
                    x.shape(),
                    y.shape()
                ),
            ));
        }
    };
    let (x, y, shape) = rules::broadcast_pair(op, x, y)?;
    launch(op, DType::Bool, &shape, &[&x, &y], |_| {
        // An `i64` is read as both its words, at twice its element offsets.
        let operands = [Operand::scaled(&x, words), Operand::scaled(&y, words)];
        let (kernel, mut params, groups) = strided_plan(op, kernel, &shape, &operands)?;
        params.k = how as u32;
        Ok((kernel, params, groups))
    })
}

macro_rules! comparison_kernel {
    ($name:ident, $op:literal, $how:ident) => {
        #[kernel(op = $op, key = Wgpu, dtypes = "f32,bool,i64")]
        fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            compare($op, x, y, Comparison::$how)
        }
    };
}

comparison_kernel!(eq_wgpu, "eq", Eq);
comparison_kernel!(ne_wgpu, "ne", Ne);
comparison_kernel!(lt_wgpu, "lt", Lt);
comparison_kernel!(le_wgpu, "le", Le);
comparison_kernel!(gt_wgpu, "gt", Gt);
comparison_kernel!(ge_wgpu, "ge", Ge);

/// `cond ? x : y`, broadcast: a selection of words (`where.wgsl`), so the values come through
/// bit for bit. `x` and `y` are promoted to their common dtype first, on the GPU (`to_dtype`,
/// which says what it cannot convert). Serves the single-dtype columns too, so that a condition
/// that is not `bool` gets the rule's own error, as on the CPU.
#[kernel(op = where_cond, key = Wgpu, dtypes = "f32,bool,i64,mixed")]
fn where_wgpu(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    const OP: &str = "where";
    let dtype = rules::where_cond(cond, x, y)?;
    let promote = |v: &Tensor| {
        held(OP, v)?;
        if v.dtype() == dtype {
            Ok(v.clone())
        } else {
            try_to_dtype(v, dtype)
        }
    };
    let (x, y) = (promote(x)?, promote(y)?);
    let words = held(OP, &x)?;
    let (views, shape) = rules::broadcast_all(OP, &[cond, &x, &y])?;
    let [c, x, y] = [&views[0], &views[1], &views[2]];
    launch(OP, dtype, &shape, &[c, x, y], |_| {
        if words == 1 {
            let operands = [Operand::of(c), Operand::of(x), Operand::of(y)];
            return strided_plan(OP, &shaders::WHERE_WORDS, &shape, &operands);
        }
        // Two-word values: the layouts' shape gets the words as its innermost dimension, and the
        // condition stays put along it.
        let mut word_shape = shape.clone();
        word_shape.push(words);
        let operands = [
            Operand::of(c).broadcast_inner(),
            Operand::words(x, words),
            Operand::words(y, words),
        ];
        strided_plan(OP, &shaders::WHERE_WORDS, &word_shape, &operands)
    })
}

/// The plan of a factory: one invocation per element of a contiguous output.
fn factory_plan(
    op: &'static str,
    kernel: &'static Kernel,
    len: usize,
    params: Params,
) -> Result<Plan> {
    let params = Params {
        n: param(op, len as u64)?,
        ..params
    };
    let groups = grid(op, (len as u64).div_ceil(WORKGROUP))?;
    Ok((kernel, params, groups))
}

/// `[0, n)` in `f32` (rounded to nearest, ties to even, past 2²⁴) or `i64`; the rule refuses
/// `bool` and integer dtypes too small for `n - 1`.
#[kernel(op = "arange", key = Wgpu, dtypes = "f32,i64")]
fn arange_wgpu(n: usize, dtype: DType, _device: Device) -> Result<Tensor> {
    const OP: &str = "arange";
    rules::arange(n, dtype)?;
    let kernel = match dtype {
        DType::F32 => &shaders::ARANGE_F32,
        DType::I64 => &shaders::ARANGE_I64,
        other => {
            return Err(DispatchError::kernel(
                OP,
                format!(
                    "the wgpu backend makes arange in f32 and i64 only, not {other}: convert \
                     with `to_dtype`, or make it on the CPU"
                ),
            ));
        }
    };
    launch(OP, dtype, &[n], &[], |len| {
        factory_plan(OP, kernel, len, Params::default())
    })
}

/// `rand` or `randn` of `f32` (the rule refuses non-float dtypes; `f64`, `f16` and `bf16` find no
/// kernel here): `seed` and the first counter `offset` ride in the parameters as words (see
/// `factories.wgsl`).
fn random(
    op: &'static str,
    kernel: &'static Kernel,
    shape: &[usize],
    (seed, offset): (i64, i64),
    dtype: DType,
) -> Result<Tensor> {
    rules::random(op, dtype)?;
    if dtype != DType::F32 {
        return Err(DispatchError::kernel(
            op,
            format!(
                "the wgpu backend draws f32 values only, not {dtype}: draw f32 and convert on \
                 the CPU, or draw on the CPU"
            ),
        ));
    }
    // The bits of `seed` and `offset` as `u64`s, split into words.
    let (seed, offset) = (seed as u64, offset as u64);
    let params = Params {
        m: seed as u32,
        k: (seed >> 32) as u32,
        offsets: [offset as u32, (offset >> 32) as u32, 0],
        ..Params::default()
    };
    launch(op, dtype, shape, &[], |len| {
        factory_plan(op, kernel, len, params)
    })
}

#[kernel(op = rand_seeded, key = Wgpu, dtypes = "f32")]
fn rand_wgpu(shape: &[usize], seed: i64, offset: i64, dtype: DType, _: Device) -> Result<Tensor> {
    random("rand", &shaders::RAND_F32, shape, (seed, offset), dtype)
}

#[kernel(op = randn_seeded, key = Wgpu, dtypes = "f32")]
fn randn_wgpu(shape: &[usize], seed: i64, offset: i64, dtype: DType, _: Device) -> Result<Tensor> {
    random("randn", &shaders::RANDN_F32, shape, (seed, offset), dtype)
}
