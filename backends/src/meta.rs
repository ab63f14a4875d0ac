//! The meta backend: every standard op's kernel at [`DispatchKey::Meta`](switchyard::DispatchKey),
//! computing the result's shape and dtype without data (what fake tensors run on; see
//! `switchyard::fake`).
//!
//! Each kernel calls the same rules as the naive CPU kernel of its op ([`switchyard::rules`]:
//! promotion, broadcasting, reductions, `matmul`'s shapes), in the same order, so it refuses
//! what the real kernels refuse with the same error; the conformance kit checks that on every
//! case it has (`Conformance::new(Device::Meta)`). Results are contiguous, as the naive kernels'
//! are; an op that returns its input unchanged (`contiguous` of a contiguous tensor, `to_dtype`
//! to its own dtype) does so here too. What no shape can tell — an integer division by a zero
//! that is in the data — is not refused here.
//!
//! Ops with a body (`softmax`, `cross_entropy`, the in-place ops, …) and the view ops need no
//! kernel here: their bodies and `CompositeExplicit` kernels run on meta tensors as on any
//! backend.

use switchyard::ops::{
    Rounding, add, arange, argmax, contiguous, copy_, div, div_rounded, eq, exp, full, ge, gt, le,
    log, lt, matmul, max_dim, mean, mean_dim, mul, ne, neg, rand_seeded, randn_seeded, relu,
    sigmoid, sqrt, sub, sum, sum_dim, tanh, to, to_dtype, where_cond,
};
use switchyard::rules;
use switchyard::{DType, Device, DispatchError, Result, Tensor, kernel};

/// A contiguous meta result of `shape`, its size checked as a real kernel checks its output's.
fn empty(op: &'static str, shape: &[usize], dtype: DType) -> Result<Tensor> {
    Tensor::checked_numel(op, shape, dtype)?;
    Tensor::empty_meta(shape, dtype)
}

fn binary(op: &'static str, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let dtype = rules::binary(op, x, y)?;
    let (_, _, shape) = rules::broadcast_pair(op, x, y)?;
    empty(op, &shape, dtype)
}

macro_rules! binary_kernel {
    ($name:ident, $op:literal) => {
        #[kernel(op = $op, key = Meta)]
        fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            binary($op, x, y)
        }
    };
}

binary_kernel!(add_meta, "add");
binary_kernel!(sub_meta, "sub");
binary_kernel!(mul_meta, "mul");
binary_kernel!(div_meta, "div");

#[kernel(op = div_rounded, key = Meta)]
fn div_rounded_meta(x: &Tensor, y: &Tensor, _mode: Rounding) -> Result<Tensor> {
    binary("div_rounded", x, y)
}

macro_rules! unary_kernel {
    ($name:ident, $op:literal) => {
        #[kernel(op = $op, key = Meta)]
        fn $name(x: &Tensor) -> Result<Tensor> {
            let dtype = rules::unary($op, x.dtype())?;
            empty($op, x.shape(), dtype)
        }
    };
}

unary_kernel!(neg_meta, "neg");
unary_kernel!(relu_meta, "relu");
unary_kernel!(exp_meta, "exp");
unary_kernel!(log_meta, "log");
unary_kernel!(tanh_meta, "tanh");
unary_kernel!(sigmoid_meta, "sigmoid");
unary_kernel!(sqrt_meta, "sqrt");

macro_rules! comparison_kernel {
    ($name:ident, $op:literal) => {
        #[kernel(op = $op, key = Meta)]
        fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            rules::compare(x, y);
            let (_, _, shape) = rules::broadcast_pair($op, x, y)?;
            empty($op, &shape, DType::Bool)
        }
    };
}

comparison_kernel!(eq_meta, "eq");
comparison_kernel!(ne_meta, "ne");
comparison_kernel!(lt_meta, "lt");
comparison_kernel!(le_meta, "le");
comparison_kernel!(gt_meta, "gt");
comparison_kernel!(ge_meta, "ge");

#[kernel(op = where_cond, key = Meta)]
fn where_meta(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    const OP: &str = "where";
    let dtype = rules::where_cond(cond, x, y)?;
    let (_, shape) = rules::broadcast_all(OP, &[cond, x, y])?;
    empty(OP, &shape, dtype)
}

#[kernel(op = "sum", key = Meta)]
fn sum_meta(x: &Tensor) -> Result<Tensor> {
    empty("sum", &[], rules::sum(x.dtype()))
}

#[kernel(op = "mean", key = Meta)]
fn mean_meta(x: &Tensor) -> Result<Tensor> {
    empty("mean", &[], rules::mean(x.dtype())?)
}

#[kernel(op = "sum_dim", key = Meta)]
fn sum_dim_meta(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    const OP: &str = "sum_dim";
    let r = rules::reduction(OP, x.shape(), dims, keepdim)?;
    empty(OP, &r.shape, rules::sum(x.dtype()))
}

#[kernel(op = "mean_dim", key = Meta)]
fn mean_dim_meta(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    const OP: &str = "mean_dim";
    rules::mean_dim(x.dtype())?;
    let r = rules::reduction(OP, x.shape(), dims, keepdim)?;
    empty(OP, &r.shape, x.dtype())
}

#[kernel(op = "max_dim", key = Meta)]
fn max_dim_meta(x: &Tensor, dim: isize, keepdim: bool) -> Result<Tensor> {
    const OP: &str = "max_dim";
    let r = rules::max_reduction(OP, x.shape(), dim, keepdim)?;
    empty(OP, &r.shape, x.dtype())
}

#[kernel(op = "argmax", key = Meta)]
fn argmax_meta(x: &Tensor, dim: isize, keepdim: bool) -> Result<Tensor> {
    const OP: &str = "argmax";
    rules::argmax(x.dtype())?;
    let r = rules::max_reduction(OP, x.shape(), dim, keepdim)?;
    empty(OP, &r.shape, DType::I64)
}

/// Two matrices here; other ranks through [`rules::matmul_batched`], as the naive kernel does.
#[kernel(op = "matmul", key = Meta)]
fn matmul_meta(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    if x.dim() != 2 || y.dim() != 2 {
        return rules::matmul_batched(x, y, matmul_meta);
    }
    let dtype = rules::matmul(x.dtype(), y.dtype())?;
    let (m, _, n, _) = rules::matmul_dims(x, y, dtype)?;
    empty("matmul", &[m, n], dtype)
}

#[kernel(op = "full", key = Meta)]
fn full_meta(shape: &[usize], _value: f64, dtype: DType, _device: Device) -> Result<Tensor> {
    empty("full", shape, dtype)
}

#[kernel(op = "arange", key = Meta)]
fn arange_meta(n: usize, dtype: DType, _device: Device) -> Result<Tensor> {
    const OP: &str = "arange";
    rules::arange(n, dtype)?;
    empty(OP, &[n], dtype)
}

#[kernel(op = rand_seeded, key = Meta)]
fn rand_meta(shape: &[usize], _seed: i64, _offset: i64, dtype: DType, _: Device) -> Result<Tensor> {
    rules::random("rand", dtype)?;
    empty("rand", shape, dtype)
}

#[kernel(op = randn_seeded, key = Meta)]
fn randn_meta(
    shape: &[usize],
    _seed: i64,
    _offset: i64,
    dtype: DType,
    _: Device,
) -> Result<Tensor> {
    rules::random("randn", dtype)?;
    empty("randn", shape, dtype)
}

#[kernel(op = "to_dtype", key = Meta)]
fn to_dtype_meta(x: &Tensor, dtype: DType) -> Result<Tensor> {
    if x.dtype() == dtype {
        return Ok(x.clone());
    }
    empty("to_dtype", x.shape(), dtype)
}

#[kernel(op = "contiguous", key = Meta)]
fn contiguous_meta(x: &Tensor) -> Result<Tensor> {
    if x.is_contiguous() {
        return Ok(x.clone());
    }
    empty("contiguous", x.shape(), x.dtype())
}

/// Any tensor onto the meta device: its shape and dtype, contiguous (a copy would be). Off the
/// meta device is an error: there is no data to move.
#[kernel(op = "to", key = Meta)]
fn to_meta(x: &Tensor, device: Device) -> Result<Tensor> {
    match (x.device(), device) {
        (Device::Meta, Device::Meta) => Ok(x.clone()),
        (_, Device::Meta) => empty("to", x.shape(), x.dtype()),
        (_, to) => Err(DispatchError::kernel(
            "to",
            format!(
                "a meta tensor {:?} of {} has no data to move to {to}; make the tensor on {to} \
                 instead",
                x.shape(),
                x.dtype()
            ),
        )),
    }
}

/// Checks what the CPU's `copy_` checks (the shapes broadcast to the destination's, the dtypes,
/// a writable destination) and counts one version of the destination's storage, as a write
/// does; writes nothing.
#[kernel(op = "copy_", key = Meta)]
fn copy_meta(dst: &mut Tensor, src: &Tensor) -> Result<()> {
    const OP: &str = "copy_";
    if dst.device() != Device::Meta {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "a meta tensor has no data to copy into a tensor on {}",
                dst.device()
            ),
        ));
    }
    rules::copy_source(OP, dst, src)?;
    dst.check_writable(OP)?;
    dst.storage().bump_version();
    Ok(())
}
