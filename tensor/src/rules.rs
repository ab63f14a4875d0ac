//! The dtype and shape rules of the standard ops, written once for every backend: which dtype an
//! op computes in and returns, which inputs it refuses, and how binary operands broadcast.

use switchyard::{DType, DTypeKind, DispatchError};

use crate::Tensor;

type Result<T> = std::result::Result<T, DispatchError>;

fn refuse(op: &'static str, dtypes: &str, what: &str) -> DispatchError {
    DispatchError::kernel(op, format!("{op} is not defined for {dtypes}: {what}"))
}

/// The dtype PyTorch's `result_type` gives for `operands`: a 0-dimensional tensor does not raise
/// the dtype of dimensioned ones within its category (bool < integer < float): `f32[3]` with an
/// `f64` 0-d tensor is `f32`, `u8[3]` with an `i64` 0-d one is `u8`, but `i32[3]` with an `f64`
/// 0-d one is `f64` (a higher category promotes). When every operand is 0-d (or 1-d and more),
/// they promote as [`DType::promote`] does.
///
/// ```
/// use switchyard_tensor::{DType, Tensor, rules};
/// let v = Tensor::from_vec(vec![0.1f32, 0.2], &[2]).unwrap();
/// let s = Tensor::from_scalar(0.1f64).unwrap();
/// assert_eq!(rules::result_type(&[&v, &s]), DType::F32);
/// assert_eq!(rules::result_type(&[&s, &s]), DType::F64);
/// ```
pub fn result_type(operands: &[&Tensor]) -> DType {
    let operands: Vec<(DType, bool)> = operands.iter().map(|t| (t.dtype(), t.dim() == 0)).collect();
    result_type_of(&operands)
}

/// [`result_type`] of operands given as their dtype and whether they are 0-dimensional.
pub fn result_type_of(operands: &[(DType, bool)]) -> DType {
    let of = |zero_dim: bool| {
        operands
            .iter()
            .filter(|&&(_, z)| z == zero_dim)
            .map(|&(dtype, _)| dtype)
            .reduce(DType::promote)
    };
    match (of(false), of(true)) {
        (Some(dimensioned), Some(zero_dim)) => combine_categories(dimensioned, zero_dim),
        (Some(only), None) | (None, Some(only)) => only,
        (None, None) => DType::F32,
    }
}

/// PyTorch's `combine_categories`: `higher` (the dimensioned operands' dtype) wins unless
/// `lower` (the 0-d operands') is of a higher category, then the two promote.
fn combine_categories(higher: DType, lower: DType) -> DType {
    let rank = |d: DType| match d.kind() {
        DTypeKind::Bool => 0,
        DTypeKind::Int => 1,
        // `Other` is a user dtype's kind; a `DType` is always built in, so it never shows here.
        DTypeKind::Float | DTypeKind::Other => 2,
    };
    if rank(lower) > rank(higher) {
        DType::promote(higher, lower)
    } else {
        higher
    }
}

/// The dtype `add`, `sub`, `mul`, `div` compute in and return for operands `x` and `y`:
/// [`result_type`] (PyTorch's rules, 0-d operands included); `div` of non-floats is true
/// division in `f32`; `sub` with a `bool` operand is refused, as in PyTorch; so is
/// `div_rounded` of two `bool` operands (it keeps the promoted dtype otherwise).
pub fn binary(op: &'static str, x: &Tensor, y: &Tensor) -> Result<DType> {
    binary_dtypes(op, x.dtype(), y.dtype(), result_type(&[x, y]))
}

/// [`binary`] for a tensor of dtype `x` and a number (PyTorch's wrapped number) whose own dtype
/// is `number` (`f32` for a float, `i64` for an integer, `bool`): a number is ranked below a 0-d
/// tensor, and a `bool` number is refused by `sub` as a `bool` tensor is.
pub fn binary_with_number(op: &'static str, x: DType, number: DType) -> Result<DType> {
    binary_dtypes(op, x, number, result_type_of(&[(x, false), (number, true)]))
}

/// [`binary`]'s checks given the operands' dtypes and their `promoted` result type.
fn binary_dtypes(op: &'static str, a: DType, b: DType, promoted: DType) -> Result<DType> {
    // The in-place form (`sub_`) follows its op's rules.
    match op.trim_end_matches('_') {
        "sub" if a == DType::Bool || b == DType::Bool => Err(refuse(
            op,
            &format!("a bool operand ({a} - {b})"),
            "use logical xor (`ne`) to invert a mask, or convert with `to_dtype` first",
        )),
        "div" if !promoted.is_float() => Ok(DType::F32),
        "div_rounded" if promoted == DType::Bool => Err(refuse(
            op,
            &format!("two bool operands ({a}, {b})"),
            "convert with `to_dtype` first",
        )),
        _ => Ok(promoted),
    }
}

/// The dtype `neg`, `relu`, `exp`, `log`, `tanh`, `sigmoid`, `sqrt` return for an operand of
/// `a`: the transcendental ops (`exp` and the four after it) of a non-float give `f32` (PyTorch
/// computes integers and `bool` in the default float dtype); `neg` and `relu` of `bool` are
/// refused.
pub fn unary(op: &'static str, a: DType) -> Result<DType> {
    match (op.trim_end_matches('_'), a.kind()) {
        ("exp" | "log" | "tanh" | "sigmoid" | "sqrt", DTypeKind::Float) => Ok(a),
        ("exp" | "log" | "tanh" | "sigmoid" | "sqrt", _) => Ok(DType::F32),
        (_, DTypeKind::Bool) => Err(refuse(op, "bool", "convert with `to_dtype` first")),
        _ => Ok(a),
    }
}

/// The dtype `sum` returns: integers and `bool` sum to `i64`, floats keep theirs.
pub fn sum(a: DType) -> DType {
    if a.is_float() { a } else { DType::I64 }
}

/// The dtype `mean` returns: floats keep theirs; others are refused, as in PyTorch.
pub fn mean(a: DType) -> Result<DType> {
    floats_only("mean", a, "the mean needs a float dtype")
}

/// The dtype `mean_dim` returns: as [`mean`]'s.
pub fn mean_dim(a: DType) -> Result<DType> {
    floats_only("mean_dim", a, "the mean needs a float dtype")
}

/// `a` if it is a float dtype, else an error naming `op`, the dtype and `why`.
fn floats_only(op: &'static str, a: DType, why: &str) -> Result<DType> {
    if a.is_float() {
        Ok(a)
    } else {
        Err(refuse(
            op,
            a.name(),
            &format!("{why}; convert with `to_dtype(DType::F32)`"),
        ))
    }
}

/// The dtype the comparisons (`eq`, `ne`, `lt`, `le`, `gt`, `ge`) compute in: both operands are
/// converted to their [`result_type`] (PyTorch's rule, as for `add`: `i32` against `f32`
/// compares in `f32`, and so does `f32[3]` against an `f64` 0-d tensor), and the result is
/// `bool`. Every dtype compares; NaN is unequal to everything, so only `ne` is true of it.
pub fn compare(x: &Tensor, y: &Tensor) -> DType {
    result_type(&[x, y])
}

/// The dtype `where` returns for a condition `cond` and values `x` and `y`: the
/// [`result_type`] of `x` and `y`; the condition must be `bool`, as in PyTorch.
pub fn where_cond(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<DType> {
    let cond = cond.dtype();
    if cond != DType::Bool {
        return Err(refuse(
            "where",
            &format!("a {cond} condition"),
            "the condition must be a bool tensor; compare first (`ne(cond, zeros)`) or convert \
             with `to_dtype(DType::Bool)`",
        ));
    }
    Ok(result_type(&[x, y]))
}

/// Checks `rand`'s and `randn`'s dtype: floats only (PyTorch has no uniform or normal integers).
pub fn random(op: &'static str, dtype: DType) -> Result<()> {
    floats_only(
        op,
        dtype,
        "random values in [0, 1) or of the normal distribution are floats",
    )
    .map(drop)
}

/// Checks `arange(n, dtype)`: `bool` is refused, and an integer dtype must hold `n - 1` (a silent
/// wrap would repeat values); float dtypes round the values they cannot hold, as `to_dtype` does.
pub fn arange(n: usize, dtype: DType) -> Result<()> {
    let max: u64 = match dtype {
        DType::Bool => {
            return Err(refuse(
                "arange",
                "bool",
                "a range of booleans has no meaning",
            ));
        }
        DType::U8 => u8::MAX.into(),
        DType::I32 => i32::MAX as u64,
        DType::I64 => i64::MAX as u64,
        _ => return Ok(()),
    };
    if n as u64 > 0 && n as u64 - 1 > max {
        return Err(DispatchError::kernel(
            "arange",
            format!(
                "arange({n}) in {dtype}: the last value {} exceeds {dtype}'s largest, {max}",
                n - 1
            ),
        ));
    }
    Ok(())
}

/// What a reduction along dimensions (`sum_dim`, `mean_dim`, `max_dim`, `argmax`) does to its
/// input's shape. See [`reduction`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Reduction {
    /// For each dimension of the input, whether it is reduced.
    pub reduced: Vec<bool>,
    /// The result's shape: the input's, reduced dimensions kept with extent 1 (`keepdim`) or
    /// removed.
    pub shape: Vec<usize>,
    /// Elements of the result: the product of the kept extents.
    pub outer: usize,
    /// Elements reduced into each result element: the product of the reduced extents.
    pub inner: usize,
}

/// The reduction of a tensor of `shape` along `dims` (each in `-rank..rank`, negative ones
/// counted from the end as [`wrap_dim`](crate::wrap_dim) does, none named twice), or an error
/// naming `op`, the dimension and the shape. An empty `dims` reduces nothing (each result
/// element is the reduction of one element, as in NumPy; PyTorch's `sum(dim=[])`, which reduces
/// everything, is `sum`).
pub fn reduction(
    op: &'static str,
    shape: &[usize],
    dims: &[isize],
    keepdim: bool,
) -> Result<Reduction> {
    let mut reduced = vec![false; shape.len()];
    for d in crate::shape::wrap_dims(op, dims, shape)? {
        reduced[d] = true;
    }
    let mut out = Vec::with_capacity(shape.len());
    let (mut outer, mut inner) = (1usize, 1usize);
    for (&extent, &r) in shape.iter().zip(&reduced) {
        // Products of a tensor's extents fit (its element count was checked) unless another
        // extent is 0: then one of the two is 0 (a saturated product times 0 is 0), and the
        // other may be too large for any result, which the kernel's allocation refuses.
        if r {
            inner = inner.saturating_mul(extent);
            if keepdim {
                out.push(1);
            }
        } else {
            outer = outer.saturating_mul(extent);
            out.push(extent);
        }
    }
    Ok(Reduction {
        reduced,
        shape: out,
        outer,
        inner,
    })
}

/// Errors naming `op` when `r` reduces an empty extent: the maximum (or its index) of nothing is
/// undefined (PyTorch: "Expected reduction dim to have non-zero size").
pub fn nonempty_reduction(op: &'static str, shape: &[usize], r: &Reduction) -> Result<()> {
    if r.inner == 0 && r.outer > 0 {
        let dim = (0..shape.len()).find(|&d| r.reduced[d] && shape[d] == 0);
        return Err(DispatchError::shape(
            op,
            format!(
                "dim {} of shape {shape:?} is empty: the maximum of no elements is undefined",
                dim.unwrap_or(0)
            ),
        ));
    }
    Ok(())
}

/// The reduction of `max_dim` and `argmax`: along one dimension, which must not be empty (a
/// maximum of nothing has no value).
pub fn max_reduction(
    op: &'static str,
    shape: &[usize],
    dim: isize,
    keepdim: bool,
) -> Result<Reduction> {
    let r = reduction(op, shape, &[dim], keepdim)?;
    nonempty_reduction(op, shape, &r)?;
    Ok(r)
}

/// `x` viewed (no copy, any device) with its kept dimensions first and its reduced ones last, in
/// their order: read row-major, it is `r.outer` runs of `r.inner` elements, run `i` holding what
/// element `i` of the result reduces. Contiguous when the reduced dimensions of a contiguous `x`
/// are its last ones.
pub fn reduction_view(x: &Tensor, r: &Reduction) -> Result<Tensor> {
    let order = (0..x.dim())
        .filter(|&d| !r.reduced[d])
        .chain((0..x.dim()).filter(|&d| r.reduced[d]));
    let (sizes, strides): (Vec<usize>, Vec<usize>) =
        order.map(|d| (x.shape()[d], x.strides()[d])).unzip();
    x.as_strided(&sizes, &strides, x.storage_offset())
}

/// The shape every tensor of `xs` broadcasts to, and each as a view of it (stride 0 where it
/// stretches); an error naming `op` and the shapes when they do not broadcast. No copy, no
/// dispatch. (`where`'s three operands; [`broadcast_pair`] is the two-operand form.)
pub fn broadcast_all(op: &'static str, xs: &[&Tensor]) -> Result<(Vec<Tensor>, Vec<usize>)> {
    let mut shape: Vec<usize> = Vec::new();
    for x in xs {
        shape = crate::shape::broadcast_shapes(op, &shape, x.shape())?;
    }
    let mut views = Vec::with_capacity(xs.len());
    for x in xs {
        Tensor::checked_numel(op, &shape, x.dtype())?;
        views.push(if x.shape() == shape.as_slice() {
            (*x).clone()
        } else {
            crate::view::expand(x, &shape)?
        });
    }
    Ok((views, shape))
}

/// Checks `argmax`'s dtype: `bool` is refused, as in PyTorch (the index of the first `true` is
/// `argmax` of the mask converted to `u8`).
pub fn argmax(a: DType) -> Result<()> {
    if a == DType::Bool {
        return Err(refuse(
            "argmax",
            "bool",
            "convert the mask with `to_dtype(DType::U8)` first",
        ));
    }
    Ok(())
}

pub use crate::matmul_batch::{MatmulShapes, batched as matmul_batched, matmul_shapes};

/// The dtype `matmul` computes in and returns: promoted; `bool` is refused.
pub fn matmul(a: DType, b: DType) -> Result<DType> {
    match DType::promote(a, b) {
        DType::Bool => Err(refuse("matmul", "bool", "convert with `to_dtype` first")),
        dtype => Ok(dtype),
    }
}

/// Whether a value of dtype `from` may be stored in a tensor of dtype `to` by an in-place op
/// (PyTorch's `canCast`): not a float into an integer or `bool` tensor, nor anything but a `bool`
/// into a `bool` tensor. Narrowing within a kind (`f64` into `f32`, `i64` into `u8`) is allowed:
/// it rounds or wraps as `to_dtype` does.
pub fn can_store(from: DType, to: DType) -> bool {
    !matches!(
        (from.kind(), to.kind()),
        (DTypeKind::Float, DTypeKind::Int | DTypeKind::Bool) | (DTypeKind::Int, DTypeKind::Bool)
    )
}

/// `src` as a view of `dst`'s shape (stride 0 where it stretches), for a `copy_` into `dst`; an
/// error naming `op` and both shapes when `src` does not broadcast to exactly that shape (a copy
/// never resizes its destination).
pub fn copy_source(op: &'static str, dst: &Tensor, src: &Tensor) -> Result<Tensor> {
    let shape = crate::shape::broadcast_shapes(op, dst.shape(), src.shape())?;
    if shape != dst.shape() {
        return Err(DispatchError::shape(
            op,
            format!(
                "{op} of a source of shape {:?} into a destination of shape {:?}: the source \
                 must broadcast to the destination's shape",
                src.shape(),
                dst.shape()
            ),
        ));
    }
    crate::view::expand(src, dst.shape())
}

/// `x` and `y` as views of their broadcast shape (stride 0 where they stretch), and that
/// shape; an error naming `op` and both shapes when they do not broadcast. No copy, no dispatch.
pub fn broadcast_pair(
    op: &'static str,
    x: &Tensor,
    y: &Tensor,
) -> Result<(Tensor, Tensor, Vec<usize>)> {
    if x.shape() == y.shape() {
        return Ok((x.clone(), y.clone(), x.shape().to_vec()));
    }
    let shape = crate::shape::broadcast_shapes(op, x.shape(), y.shape())?;
    Tensor::checked_numel(op, &shape, DType::promote(x.dtype(), y.dtype()))?;
    Ok((
        crate::view::expand(x, &shape)?,
        crate::view::expand(y, &shape)?,
        shape,
    ))
}

/// The shapes of `matmul`'s operands, checked: `(m, k, n)` and the result's element count, or a
/// shape error, or a size overflow when `m·n` elements of `dtype` do not fit.
pub fn matmul_dims(x: &Tensor, y: &Tensor, dtype: DType) -> Result<(usize, usize, usize, usize)> {
    let (m, k, n) = match (x.shape(), y.shape()) {
        (&[m, k], &[k2, n]) if k == k2 => (m, k, n),
        (a, b) => {
            return Err(DispatchError::shape(
                "matmul",
                format!("expected [m, k] and [k, n], got {a:?} and {b:?}"),
            ));
        }
    };
    let len = Tensor::checked_numel("matmul", &[m, n], dtype).map_err(|_| {
        DispatchError::size_overflow(
            "matmul",
            &[x.shape(), y.shape()],
            format!("the result's {m} × {n} elements of {dtype} exceed the largest allocation"),
        )
    })?;
    Ok((m, k, n, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_dtypes_follow_pytorch() {
        let dtypes = |op, a, b| binary_dtypes(op, a, b, DType::promote(a, b));
        assert_eq!(dtypes("add", DType::I32, DType::F32).unwrap(), DType::F32);
        assert_eq!(dtypes("div", DType::I32, DType::I64).unwrap(), DType::F32);
        assert_eq!(dtypes("div", DType::F16, DType::F16).unwrap(), DType::F16);
        assert_eq!(
            dtypes("add", DType::Bool, DType::Bool).unwrap(),
            DType::Bool
        );
        for (a, b) in [(DType::Bool, DType::Bool), (DType::Bool, DType::F32)] {
            let err = dtypes("sub", a, b).unwrap_err().to_string();
            assert!(
                err.contains(&format!(
                    "sub is not defined for a bool operand ({a} - {b})"
                )),
                "{err}"
            );
        }
        assert_eq!(unary("exp", DType::I64).unwrap(), DType::F32);
        assert!(unary("neg", DType::Bool).is_err());
        assert_eq!(sum(DType::U8), DType::I64);
        assert!(mean(DType::I32).is_err());
        assert!(matmul(DType::Bool, DType::Bool).is_err());
    }
}
