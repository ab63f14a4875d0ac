//! The naive CPU kernels of the ops in `switchyard::ops` that a small network needs beyond the
//! arithmetic of [`naive`](super::naive): reductions along dimensions, comparisons, `where`, and
//! the `arange`, `rand`, `randn` factories. Same rules as there: any layout, every dtype, plain
//! loops, a fresh contiguous output; the oracle of every other backend.

use switchyard::ops::{
    arange, argmax, eq, ge, gt, le, lt, max_dim, mean_dim, ne, rand_seeded, randn_seeded, sum_dim,
    where_cond,
};
use switchyard::rules::{self, Reduction};
use switchyard::{
    DType, Device, Element, Result, Scalar, Tensor, host_buffer, kernel, random, with_element,
};

use super::naive::{as_dtype, zip_values};

/// `f` applied to each run of `r.inner` elements of `x` that one result element reduces, in the
/// result's row-major order, into a new tensor of `dtype` and the reduction's shape.
fn reduce<X: Element, T: Element>(
    op: &'static str,
    x: &Tensor,
    r: &Reduction,
    mut f: impl FnMut(&mut dyn Iterator<Item = X>) -> T,
) -> Result<Tensor> {
    let len = Tensor::checked_numel(op, &r.shape, T::DTYPE)?;
    let view = rules::reduction_view(x, r)?;
    let values = view.host::<X>(op)?;
    let mut out = host_buffer::<T>(op, len)?;
    let mut all = values.iter();
    for _ in 0..len {
        out.push(f(&mut all.by_ref().take(r.inner)));
    }
    Tensor::from_host(out, &r.shape)
}

/// The sum of `values`: floats in `f64` from +0 (as `sum` does: slow, accurate, what an oracle
/// should be), integers and booleans in wrapping `i64`.
fn total<X: Element>(values: &mut dyn Iterator<Item = X>) -> Scalar {
    if X::DTYPE.is_float() {
        Scalar::Float(values.fold(0.0, |acc, a| acc + a.to_scalar().as_f64()))
    } else {
        Scalar::Int(values.fold(0i64, |acc, a| acc.wrapping_add(a.to_scalar().as_i64())))
    }
}

/// The `f64` sums of a contiguous `f32` tensor's reduction when its reduced dimensions are a
/// leading or a trailing block (a bias gradient's batch sum, a row sum), else `None`. Each sum
/// adds its run in the order, and with the arithmetic, of [`reduce`] and [`total`] (from +0, in
/// `f64`): the same bits, in loops over slices that the compiler vectorises instead of one
/// strided step per element.
fn contiguous_f32_sums(op: &'static str, x: &Tensor, r: &Reduction) -> Result<Option<Vec<f64>>> {
    if x.dtype() != DType::F32 || !x.is_contiguous() {
        return Ok(None);
    }
    let split = r.reduced.iter().take_while(|&&reduced| reduced).count();
    let leading = r.reduced[split..].iter().all(|&reduced| !reduced);
    let trailing = !leading && {
        let kept = r.reduced.iter().take_while(|&&reduced| !reduced).count();
        r.reduced[kept..].iter().all(|&reduced| reduced)
    };
    if !leading && !trailing {
        return Ok(None);
    }
    let view = x.host::<f32>(op)?;
    let Some(xs) = view.contiguous() else {
        return Ok(None);
    };
    let mut sums = Vec::new();
    if sums.try_reserve_exact(r.outer).is_err() {
        return Err(switchyard::DispatchError::out_of_memory(
            op,
            r.outer.saturating_mul(8),
        ));
    }
    if leading {
        // Result element `c` sums `xs[c], xs[c + outer], …`: rows added into one row of sums.
        sums.resize(r.outer, 0.0f64);
        if r.outer > 0 {
            for row in xs.chunks_exact(r.outer) {
                for (sum, &v) in sums.iter_mut().zip(row) {
                    *sum += f64::from(v);
                }
            }
        }
    } else {
        // Result element `o` sums the run `xs[o·inner..(o + 1)·inner]`.
        sums.extend((0..r.outer).map(|o| {
            let run = &xs[o * r.inner..(o + 1) * r.inner];
            run.iter().fold(0.0f64, |acc, &v| acc + f64::from(v))
        }));
    }
    Ok(Some(sums))
}

/// `values` as an `f32` tensor of the reduction's shape.
fn f32_result(
    op: &'static str,
    values: impl ExactSizeIterator<Item = f32>,
    r: &Reduction,
) -> Result<Tensor> {
    let mut out = host_buffer::<f32>(op, values.len())?;
    out.extend(values);
    Tensor::from_host(out, &r.shape)
}

#[kernel(op = "sum_dim", key = CpuNaive)]
pub(crate) fn sum_dim_naive(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    const OP: &str = "sum_dim";
    let r = rules::reduction(OP, x.shape(), dims, keepdim)?;
    if let Some(sums) = contiguous_f32_sums(OP, x, &r)? {
        return f32_result(OP, sums.iter().map(|&s| s as f32), &r);
    }
    with_element!(x.dtype(), X => with_element!(rules::sum(x.dtype()), T => {
        reduce::<X, T>(OP, x, &r, |run| T::from_scalar(total(run)))
    }))
}

#[kernel(op = "mean_dim", key = CpuNaive)]
pub(crate) fn mean_dim_naive(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    const OP: &str = "mean_dim";
    rules::mean_dim(x.dtype())?;
    let r = rules::reduction(OP, x.shape(), dims, keepdim)?;
    // 0 / 0 is NaN: the mean of nothing, as `mean`'s.
    let count = r.inner as f64;
    if let Some(sums) = contiguous_f32_sums(OP, x, &r)? {
        return f32_result(OP, sums.iter().map(|&s| (s / count) as f32), &r);
    }
    with_element!(x.dtype(), T => {
        reduce::<T, T>(OP, x, &r, |run| T::from_scalar(Scalar::Float(total(run).as_f64() / count)))
    })
}

/// Whether `a` is NaN (the one value unequal to itself); never for integers and `bool`.
#[allow(clippy::eq_op)]
fn is_nan<T: Element>(a: T) -> bool {
    a != a
}

/// The index and value of the maximum of `values` (at least one): the first on ties, the first
/// NaN if there is one.
fn max_with_index<T: Element>(values: &mut dyn Iterator<Item = T>) -> (usize, T) {
    let mut best: Option<(usize, T)> = None;
    for (i, v) in values.enumerate() {
        best = match best {
            Some((_, b)) if is_nan(b) => best,
            Some((_, b)) if !(is_nan(v) || v > b) => best,
            _ => Some((i, v)),
        };
    }
    best.expect("the reduction's extent was checked to be non-empty")
}

/// The reduction of `max_dim` and `argmax`: along one dimension, never an empty one.

#[kernel(op = "max_dim", key = CpuNaive)]
fn max_dim_naive(x: &Tensor, dim: isize, keepdim: bool) -> Result<Tensor> {
    const OP: &str = "max_dim";
    let r = rules::max_reduction(OP, x.shape(), dim, keepdim)?;
    with_element!(x.dtype(), T => reduce::<T, T>(OP, x, &r, |run| max_with_index(run).1))
}

#[kernel(op = "argmax", key = CpuNaive)]
fn argmax_naive(x: &Tensor, dim: isize, keepdim: bool) -> Result<Tensor> {
    const OP: &str = "argmax";
    rules::argmax(x.dtype())?;
    let r = rules::max_reduction(OP, x.shape(), dim, keepdim)?;
    with_element!(x.dtype(), T => {
        reduce::<T, i64>(OP, x, &r, |run| max_with_index(run).0 as i64)
    })
}

/// The six comparisons.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Comparison {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Comparison {
    /// IEEE's answers: every comparison with NaN is false but `ne`.
    fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Comparison::Eq => a == b,
            Comparison::Ne => a != b,
            Comparison::Lt => a < b,
            Comparison::Le => a <= b,
            Comparison::Gt => a > b,
            Comparison::Ge => a >= b,
        }
    }
}

fn compare(op: &'static str, x: &Tensor, y: &Tensor, how: Comparison) -> Result<Tensor> {
    let dtype = rules::compare(x, y);
    let (x, y, shape) = rules::broadcast_pair(op, x, y)?;
    let (x, y) = (as_dtype(&x, dtype)?, as_dtype(&y, dtype)?);
    with_element!(dtype, T => {
        let (xv, yv) = (x.host::<T>(op)?, y.host::<T>(op)?);
        let mut out = host_buffer::<bool>(op, x.numel())?;
        // One loop per comparison, so that the comparison is not chosen again per element.
        match how {
            Comparison::Eq => zip_values(&xv, &yv, &mut out, |a, b| Comparison::Eq.holds(a, b)),
            Comparison::Ne => zip_values(&xv, &yv, &mut out, |a, b| Comparison::Ne.holds(a, b)),
            Comparison::Lt => zip_values(&xv, &yv, &mut out, |a, b| Comparison::Lt.holds(a, b)),
            Comparison::Le => zip_values(&xv, &yv, &mut out, |a, b| Comparison::Le.holds(a, b)),
            Comparison::Gt => zip_values(&xv, &yv, &mut out, |a, b| Comparison::Gt.holds(a, b)),
            Comparison::Ge => zip_values(&xv, &yv, &mut out, |a, b| Comparison::Ge.holds(a, b)),
        }
        Tensor::from_host(out, &shape)
    })
}

macro_rules! comparison_kernel {
    ($name:ident, $op:literal, $how:ident) => {
        #[kernel(op = $op, key = CpuNaive)]
        fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            compare($op, x, y, Comparison::$how)
        }
    };
}

comparison_kernel!(eq_naive, "eq", Eq);
comparison_kernel!(ne_naive, "ne", Ne);
comparison_kernel!(lt_naive, "lt", Lt);
comparison_kernel!(le_naive, "le", Le);
comparison_kernel!(gt_naive, "gt", Gt);
comparison_kernel!(ge_naive, "ge", Ge);

#[kernel(op = where_cond, key = CpuNaive)]
fn where_naive(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    const OP: &str = "where";
    let dtype = rules::where_cond(cond, x, y)?;
    let (views, shape) = rules::broadcast_all(OP, &[cond, x, y])?;
    let (x, y) = (as_dtype(&views[1], dtype)?, as_dtype(&views[2], dtype)?);
    let c = views[0].host::<bool>(OP)?;
    with_element!(dtype, T => {
        let (xv, yv) = (x.host::<T>(OP)?, y.host::<T>(OP)?);
        let mut out = host_buffer::<T>(OP, x.numel())?;
        out.extend(c.iter().zip(xv.iter().zip(yv.iter())).map(|(c, (a, b))| if c { a } else { b }));
        Tensor::from_host(out, &shape)
    })
}

#[kernel(op = "arange", key = CpuNaive)]
fn arange_naive(n: usize, dtype: DType, _device: Device) -> Result<Tensor> {
    const OP: &str = "arange";
    rules::arange(n, dtype)?;
    Tensor::checked_numel(OP, &[n], dtype)?;
    with_element!(dtype, T => {
        let mut out = host_buffer::<T>(OP, n)?;
        // `i < n ≤ isize::MAX` fits an `i64`.
        out.extend((0..n).map(|i| T::from_scalar(Scalar::Int(i as i64))));
        Tensor::from_host(out, &[n])
    })
}

/// A tensor of `shape` and float `dtype` whose element `i` is `value(dtype, seed, offset + i)`.
fn random_tensor(
    op: &'static str,
    shape: &[usize],
    (seed, offset): (i64, i64),
    dtype: DType,
    value: fn(DType, u64, u64) -> f64,
) -> Result<Tensor> {
    rules::random(op, dtype)?;
    let len = Tensor::checked_numel(op, shape, dtype)?;
    let (seed, offset) = (seed as u64, offset as u64);
    with_element!(dtype, T => {
        let mut out = host_buffer::<T>(op, len)?;
        out.extend((0..len as u64).map(|i| {
            T::from_scalar(Scalar::Float(value(dtype, seed, offset.wrapping_add(i))))
        }));
        Tensor::from_host(out, shape)
    })
}

#[kernel(op = rand_seeded, key = CpuNaive)]
fn rand_naive(shape: &[usize], seed: i64, offset: i64, dtype: DType, _: Device) -> Result<Tensor> {
    random_tensor("rand", shape, (seed, offset), dtype, random::uniform_value)
}

#[kernel(op = randn_seeded, key = CpuNaive)]
fn randn_naive(shape: &[usize], seed: i64, offset: i64, dtype: DType, _: Device) -> Result<Tensor> {
    random_tensor("randn", shape, (seed, offset), dtype, random::normal_value)
}
