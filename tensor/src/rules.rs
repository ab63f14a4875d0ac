//! The dtype and shape rules of the standard ops, written once for every backend: which dtype an
//! op computes in and returns, which inputs it refuses, and how binary operands broadcast.

use switchyard::{DType, DTypeKind, DispatchError};

use crate::Tensor;

type Result<T> = std::result::Result<T, DispatchError>;

fn refuse(op: &'static str, dtypes: &str, what: &str) -> DispatchError {
    DispatchError::kernel(op, format!("{op} is not defined for {dtypes}: {what}"))
}

/// The dtype `add`, `sub`, `mul`, `div` compute in and return for operands of `a` and `b`:
/// promoted (PyTorch's rules); `div` of non-floats is true division in `f32`; `sub` of two
/// `bool`s is refused, as in PyTorch.
pub fn binary(op: &'static str, a: DType, b: DType) -> Result<DType> {
    let promoted = DType::promote(a, b);
    // The in-place form (`sub_`) follows its op's rules.
    match op.trim_end_matches('_') {
        "sub" if promoted == DType::Bool => Err(refuse(
            op,
            "two bool tensors",
            "use logical xor (`ne`) or convert with `to_dtype`",
        )),
        "div" if !promoted.is_float() => Ok(DType::F32),
        _ => Ok(promoted),
    }
}

/// The dtype `neg`, `relu`, `exp` return for an operand of `a`: `exp` of a non-float gives
/// `f32`; `neg` and `relu` of `bool` are refused.
pub fn unary(op: &'static str, a: DType) -> Result<DType> {
    match (op.trim_end_matches('_'), a.kind()) {
        ("exp", DTypeKind::Float) => Ok(a),
        ("exp", _) => Ok(DType::F32),
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
    if a.is_float() {
        Ok(a)
    } else {
        Err(refuse(
            "mean",
            a.name(),
            "the mean needs a float dtype; convert with `to_dtype(DType::F32)`",
        ))
    }
}

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
        assert_eq!(binary("add", DType::I32, DType::F32).unwrap(), DType::F32);
        assert_eq!(binary("div", DType::I32, DType::I64).unwrap(), DType::F32);
        assert_eq!(binary("div", DType::F16, DType::F16).unwrap(), DType::F16);
        assert_eq!(
            binary("add", DType::Bool, DType::Bool).unwrap(),
            DType::Bool
        );
        let err = binary("sub", DType::Bool, DType::Bool)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sub is not defined for two bool tensors"),
            "{err}"
        );
        assert_eq!(unary("exp", DType::I64).unwrap(), DType::F32);
        assert!(unary("neg", DType::Bool).is_err());
        assert_eq!(sum(DType::U8), DType::I64);
        assert!(mean(DType::I32).is_err());
        assert!(matmul(DType::Bool, DType::Bool).is_err());
    }
}
