//! The derivatives of the standard ops: one `#[kernel(key = Autograd)]` each, which serves every
//! backend. Each runs the op below autograd, then records a node whose backward computes the
//! inputs' gradients with ordinary ops (on the device the op ran on).
//!
//! Ops whose results never require grad (`full`, comparisons, `argmax`) need none; ops with a
//! body (the in-place ops, `softmax`, …) are differentiated through their decomposition.

use switchyard::{DType, DispatchError, DispatchKeySet, kernel};

use crate::autograd::meta::SavedTensor as Saved;
use crate::autograd::record::{any_requires_grad, below, fit, info, record, run_below};
use crate::ops::{
    self, Rounding, add, contiguous, copy_, div, div_rounded, exp, expand, matmul, mean, mul,
    narrow, neg, permute, relu, relu_backward, reshape, select, slice, squeeze, squeeze_dims, sub,
    sum, to, to_dtype, transpose, unsqueeze, view,
};
use crate::{Device, Tensor};

type Result<T> = std::result::Result<T, DispatchError>;

/// `Some(f())` when `needed`: a gradient computed only for an input that requires grad.
fn when(needed: bool, f: impl FnOnce() -> Result<Tensor>) -> Result<Option<Tensor>> {
    if needed { f().map(Some) } else { Ok(None) }
}

/// `x` saved for the derivative of `op` when `needed`.
pub(super) fn save_if(needed: bool, op: &'static str, x: &Tensor) -> Result<Option<Saved>> {
    if needed {
        Saved::new(op, x).map(Some)
    } else {
        Ok(None)
    }
}

/// A saved tensor that `save_if` saved because the gradient computed now needs it.
pub(super) fn saved(s: &Option<Saved>) -> Result<&Tensor> {
    match s {
        Some(s) => s.get(),
        None => Err(DispatchError::kernel(
            "backward",
            "a derivative needed a tensor it did not save (a bug in its formula)",
        )),
    }
}

/// The shape as `reshape` and `expand` take it.
pub(super) fn signed(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&d| d as isize).collect()
}

// Elementwise binary ops: each gradient is fitted to its input (undoing broadcast and promotion).

#[kernel(op = "add", key = Autograd)]
fn add_autograd(keys: DispatchKeySet, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = run_below(|| add::redispatch(below(keys), x, y))?;
    let (xi, yi, nx, ny) = (info(x), info(y), x.requires_grad(), y.requires_grad());
    Ok(record("add", &[x, y], out, move |g| {
        Ok(vec![
            when(nx, || fit(g.clone(), &xi))?,
            when(ny, || fit(g.clone(), &yi))?,
        ])
    }))
}

#[kernel(op = "sub", key = Autograd)]
fn sub_autograd(keys: DispatchKeySet, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = run_below(|| sub::redispatch(below(keys), x, y))?;
    let (xi, yi, nx, ny) = (info(x), info(y), x.requires_grad(), y.requires_grad());
    Ok(record("sub", &[x, y], out, move |g| {
        Ok(vec![
            when(nx, || fit(g.clone(), &xi))?,
            when(ny, || fit(ops::try_neg(g)?, &yi))?,
        ])
    }))
}

#[kernel(op = "mul", key = Autograd)]
fn mul_autograd(keys: DispatchKeySet, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = run_below(|| mul::redispatch(below(keys), x, y))?;
    let (xi, yi, nx, ny) = (info(x), info(y), x.requires_grad(), y.requires_grad());
    let (sx, sy) = (save_if(ny, "mul", x)?, save_if(nx, "mul", y)?);
    Ok(record("mul", &[x, y], out, move |g| {
        Ok(vec![
            when(nx, || fit(ops::try_mul(g, saved(&sy)?)?, &xi))?,
            when(ny, || fit(ops::try_mul(g, saved(&sx)?)?, &yi))?,
        ])
    }))
}

#[kernel(op = "div", key = Autograd)]
fn div_autograd(keys: DispatchKeySet, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = run_below(|| div::redispatch(below(keys), x, y))?;
    let (xi, yi, nx, ny) = (info(x), info(y), x.requires_grad(), y.requires_grad());
    let sy = save_if(nx || ny, "div", y)?;
    let so = save_if(ny, "div", &out)?;
    Ok(record("div", &[x, y], out, move |g| {
        let y = saved(&sy)?;
        Ok(vec![
            // d(x/y)/dx = 1/y
            when(nx, || fit(ops::try_div(g, y)?, &xi))?,
            // d(x/y)/dy = -x/y² = -out/y
            when(ny, || {
                let t = ops::try_div(&ops::try_mul(g, saved(&so)?)?, y)?;
                fit(ops::try_neg(&t)?, &yi)
            })?,
        ])
    }))
}

/// A rounded quotient is a step function of both operands: zero gradient for each, as PyTorch
/// gives (not none: a caller reading `x.grad()` finds zeros of `x`'s shape and dtype).
#[kernel(op = "div_rounded", key = Autograd)]
fn div_rounded_autograd(
    keys: DispatchKeySet,
    x: &Tensor,
    y: &Tensor,
    mode: Rounding,
) -> Result<Tensor> {
    let out = run_below(|| div_rounded::redispatch(below(keys), x, y, mode))?;
    let (xi, yi, nx, ny) = (info(x), info(y), x.requires_grad(), y.requires_grad());
    Ok(record("div_rounded", &[x, y], out, move |_| {
        let zeros =
            |i: &crate::autograd::meta::InputInfo| ops::try_full(&i.shape, 0.0, i.dtype, i.device);
        Ok(vec![when(nx, || zeros(&xi))?, when(ny, || zeros(&yi))?])
    }))
}

// Elementwise unary ops.

#[kernel(op = "neg", key = Autograd)]
fn neg_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| neg::redispatch(below(keys), x))?;
    let xi = info(x);
    Ok(record("neg", &[x], out, move |g| {
        Ok(vec![Some(fit(ops::try_neg(g)?, &xi)?)])
    }))
}

#[kernel(op = "exp", key = Autograd)]
fn exp_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| exp::redispatch(below(keys), x))?;
    let (xi, so) = (info(x), save_if(x.requires_grad(), "exp", &out)?);
    Ok(record("exp", &[x], out, move |g| {
        Ok(vec![Some(fit(ops::try_mul(g, saved(&so)?)?, &xi)?)])
    }))
}

#[kernel(op = "relu", key = Autograd)]
fn relu_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| relu::redispatch(below(keys), x))?;
    let (xi, so) = (info(x), save_if(x.requires_grad(), "relu", &out)?);
    Ok(record("relu", &[x], out, move |g| {
        // The gradient flows where the output is positive or NaN (0 at 0, as in PyTorch's
        // `threshold_backward`): one op, which
        // the CPU's SIMD kernels run in one pass.
        Ok(vec![Some(fit(
            ops::try_relu_backward(g, saved(&so)?)?,
            &xi,
        )?)])
    }))
}

/// Linear in `grad`: its gradient is `relu_backward` again. In `out` the op is a step: zeros
/// (PyTorch's answer for `threshold_backward`). Where no backend kernel serves the call (`f64`,
/// the GPU) autograd differentiates the op's body instead, whose `le` leaves `out` out of the
/// graph: no gradient there rather than zeros.
#[kernel(op = "relu_backward", key = Autograd)]
fn relu_backward_autograd(keys: DispatchKeySet, grad: &Tensor, out: &Tensor) -> Result<Tensor> {
    let result = run_below(|| relu_backward::redispatch(below(keys), grad, out))?;
    let (gi, oi) = (info(grad), info(out));
    let (ng, no) = (grad.requires_grad(), out.requires_grad());
    let so = save_if(ng, "relu_backward", out)?;
    Ok(record("relu_backward", &[grad, out], result, move |g| {
        Ok(vec![
            when(ng, || fit(ops::try_relu_backward(g, saved(&so)?)?, &gi))?,
            when(no, || zeros_like(&oi))?,
        ])
    }))
}

// Reductions and matmul.

#[kernel(op = "sum", key = Autograd)]
fn sum_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| sum::redispatch(below(keys), x))?;
    let xi = info(x);
    Ok(record("sum", &[x], out, move |g| {
        Ok(vec![Some(fit(spread(g, &xi.shape)?, &xi)?)])
    }))
}

#[kernel(op = "mean", key = Autograd)]
fn mean_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| mean::redispatch(below(keys), x))?;
    let (xi, n) = (info(x), x.numel());
    Ok(record("mean", &[x], out, move |g| {
        let count = ops::try_full(&[], n as f64, g.dtype(), g.device())?;
        Ok(vec![Some(fit(
            spread(&ops::try_div(g, &count)?, &xi.shape)?,
            &xi,
        )?)])
    }))
}

/// A 0-d gradient spread over `shape` (an expanded view, then contiguous: the next derivative
/// may write nothing into it, but kernels read a contiguous gradient faster).
fn spread(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    ops::try_contiguous(&ops::try_expand(g, &signed(shape))?)
}

/// `t` with its last two dimensions swapped (a view).
fn last_two_swapped(t: &Tensor) -> Result<Tensor> {
    ops::try_transpose(t, -2, -1)
}

/// `matmul`'s gradient `g` with the extent-1 dimensions a 1-D operand's product dropped put
/// back: `[.., n]` → `[.., 1, n]` for a row `x`, `[.., m]` → `[.., m, 1]` for a column `y`.
fn matrices_of(g: &Tensor, x_row: bool, y_col: bool) -> Result<Tensor> {
    let g = if x_row {
        let at = g.dim().saturating_sub(usize::from(!y_col));
        ops::try_unsqueeze(g, at as isize)?
    } else {
        g.clone()
    };
    if y_col {
        ops::try_unsqueeze(&g, g.dim() as isize)
    } else {
        Ok(g)
    }
}

#[kernel(op = "matmul", key = Autograd)]
fn matmul_autograd(keys: DispatchKeySet, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = run_below(|| matmul::redispatch(below(keys), x, y))?;
    let (xi, yi, nx, ny) = (info(x), info(y), x.requires_grad(), y.requires_grad());
    let (sx, sy) = (save_if(ny, "matmul", x)?, save_if(nx, "matmul", y)?);
    Ok(record("matmul", &[x, y], out, move |g| {
        // As matrices (a 1-D `x` a row, a 1-D `y` a column, `g` with their extent-1 dimensions
        // back): dL/dx = g · yᵀ, dL/dy = xᵀ · g, the transposes of the last two dimensions
        // (views: no copy); then the extent-1 dimension dropped again, and a broadcast batch
        // summed back to the input's shape (`fit`).
        let (x_row, y_col) = (xi.shape.len() == 1, yi.shape.len() == 1);
        let g = matrices_of(g, x_row, y_col)?;
        Ok(vec![
            when(nx, || {
                let y = saved(&sy)?;
                let y = if y_col {
                    ops::try_unsqueeze(y, 1)?
                } else {
                    y.clone()
                };
                let dx = ops::try_matmul(&g, &last_two_swapped(&y)?)?;
                let dx = if x_row {
                    ops::try_squeeze(&dx, Some(-2))?
                } else {
                    dx
                };
                fit(dx, &xi)
            })?,
            when(ny, || {
                let x = saved(&sx)?;
                let x = if x_row {
                    ops::try_unsqueeze(x, 0)?
                } else {
                    x.clone()
                };
                let dy = ops::try_matmul(&last_two_swapped(&x)?, &g)?;
                let dy = if y_col {
                    ops::try_squeeze(&dy, Some(-1))?
                } else {
                    dy
                };
                fit(dy, &yi)
            })?,
        ])
    }))
}

// Conversions and moves.

#[kernel(op = "to_dtype", key = Autograd)]
fn to_dtype_autograd(keys: DispatchKeySet, x: &Tensor, dtype: DType) -> Result<Tensor> {
    let out = run_below(|| to_dtype::redispatch(below(keys), x, dtype))?;
    let xi = info(x);
    Ok(record("to_dtype", &[x], out, move |g| {
        Ok(vec![Some(fit(g.clone(), &xi)?)])
    }))
}

#[kernel(op = "contiguous", key = Autograd)]
fn contiguous_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| contiguous::redispatch(below(keys), x))?;
    Ok(record("contiguous", &[x], out, |g| {
        Ok(vec![Some(g.clone())])
    }))
}

#[kernel(op = "to", key = Autograd)]
fn to_autograd(keys: DispatchKeySet, x: &Tensor, device: Device) -> Result<Tensor> {
    let out = run_below(|| to::redispatch(below(keys), x, device))?;
    let from = x.device();
    Ok(record("to", &[x], out, move |g| {
        Ok(vec![Some(ops::try_to(g, from)?)])
    }))
}

// Views: the gradient takes the input's layout back.

#[kernel(op = "view", key = Autograd)]
fn view_autograd(keys: DispatchKeySet, x: &Tensor, shape: &[isize]) -> Result<Tensor> {
    let out = run_below(|| view::redispatch(below(keys), x, shape))?;
    Ok(record("view", &[x], out, reshape_back(x)))
}

#[kernel(op = "reshape", key = Autograd)]
fn reshape_autograd(keys: DispatchKeySet, x: &Tensor, shape: &[isize]) -> Result<Tensor> {
    let out = run_below(|| reshape::redispatch(below(keys), x, shape))?;
    Ok(record("reshape", &[x], out, reshape_back(x)))
}

#[kernel(op = "squeeze", key = Autograd)]
fn squeeze_autograd(keys: DispatchKeySet, x: &Tensor, dim: Option<isize>) -> Result<Tensor> {
    let out = run_below(|| squeeze::redispatch(below(keys), x, dim))?;
    Ok(record("squeeze", &[x], out, reshape_back(x)))
}

#[kernel(op = "unsqueeze", key = Autograd)]
fn unsqueeze_autograd(keys: DispatchKeySet, x: &Tensor, dim: isize) -> Result<Tensor> {
    let out = run_below(|| unsqueeze::redispatch(below(keys), x, dim))?;
    Ok(record("unsqueeze", &[x], out, reshape_back(x)))
}

#[kernel(op = "squeeze_dims", key = Autograd)]
fn squeeze_dims_autograd(keys: DispatchKeySet, x: &Tensor, dims: &[isize]) -> Result<Tensor> {
    let out = run_below(|| squeeze_dims::redispatch(below(keys), x, dims))?;
    Ok(record("squeeze_dims", &[x], out, reshape_back(x)))
}

/// The derivative of an op that only reshapes: the gradient reshaped to the input's shape.
fn reshape_back(
    x: &Tensor,
) -> impl Fn(&Tensor) -> Result<Vec<Option<Tensor>>>
+ Send
+ Sync
+ std::panic::RefUnwindSafe
+ std::panic::UnwindSafe
+ 'static {
    let shape = signed(x.shape());
    move |g| Ok(vec![Some(ops::try_reshape(g, &shape)?)])
}

#[kernel(op = "transpose", key = Autograd)]
fn transpose_autograd(keys: DispatchKeySet, x: &Tensor, d0: isize, d1: isize) -> Result<Tensor> {
    let out = run_below(|| transpose::redispatch(below(keys), x, d0, d1))?;
    Ok(record("transpose", &[x], out, move |g| {
        Ok(vec![Some(ops::try_transpose(g, d0, d1)?)])
    }))
}

#[kernel(op = "permute", key = Autograd)]
fn permute_autograd(keys: DispatchKeySet, x: &Tensor, dims: &[isize]) -> Result<Tensor> {
    let out = run_below(|| permute::redispatch(below(keys), x, dims))?;
    // The inverse permutation: dimension `dims[i]` of the input is dimension `i` of the output.
    let mut inverse = vec![0; dims.len()];
    for (i, d) in crate::view::permutation("permute", x, dims)?
        .into_iter()
        .enumerate()
    {
        inverse[d] = i as isize;
    }
    Ok(record("permute", &[x], out, move |g| {
        Ok(vec![Some(ops::try_permute(g, &inverse)?)])
    }))
}

#[kernel(op = "expand", key = Autograd)]
fn expand_autograd(keys: DispatchKeySet, x: &Tensor, shape: &[isize]) -> Result<Tensor> {
    let out = run_below(|| expand::redispatch(below(keys), x, shape))?;
    let xi = info(x);
    Ok(record("expand", &[x], out, move |g| {
        Ok(vec![Some(fit(g.clone(), &xi)?)])
    }))
}

#[kernel(op = "narrow", key = Autograd)]
fn narrow_autograd(
    keys: DispatchKeySet,
    x: &Tensor,
    dim: isize,
    start: isize,
    len: usize,
) -> Result<Tensor> {
    let out = run_below(|| narrow::redispatch(below(keys), x, dim, start, len))?;
    let xi = info(x);
    Ok(record("narrow", &[x], out, move |g| {
        let grad = zeros_like(&xi)?;
        ops::try_copy_(&mut ops::try_narrow(&grad, dim, start, len)?, g)?;
        Ok(vec![Some(grad)])
    }))
}

#[kernel(op = "slice", key = Autograd)]
fn slice_autograd(
    keys: DispatchKeySet,
    x: &Tensor,
    dim: isize,
    start: isize,
    end: isize,
    step: usize,
) -> Result<Tensor> {
    let out = run_below(|| slice::redispatch(below(keys), x, dim, start, end, step))?;
    let xi = info(x);
    Ok(record("slice", &[x], out, move |g| {
        let grad = zeros_like(&xi)?;
        ops::try_copy_(&mut ops::try_slice(&grad, dim, start, end, step)?, g)?;
        Ok(vec![Some(grad)])
    }))
}

#[kernel(op = "select", key = Autograd)]
fn select_autograd(keys: DispatchKeySet, x: &Tensor, dim: isize, index: isize) -> Result<Tensor> {
    let out = run_below(|| select::redispatch(below(keys), x, dim, index))?;
    let xi = info(x);
    Ok(record("select", &[x], out, move |g| {
        let grad = zeros_like(&xi)?;
        ops::try_copy_(&mut ops::try_select(&grad, dim, index)?, g)?;
        Ok(vec![Some(grad)])
    }))
}

/// Zeros shaped, typed and placed as the input `info` describes.
fn zeros_like(info: &crate::autograd::meta::InputInfo) -> Result<Tensor> {
    ops::try_full(&info.shape, 0.0, info.dtype, info.device)
}

// In-place writes: autograd does not rewrite history yet, so a write that involves a tensor
// that requires grad is refused (never a silently wrong gradient).

#[kernel(op = "copy_", key = Autograd)]
fn copy_autograd(keys: DispatchKeySet, dst: &mut Tensor, src: &Tensor) -> Result<()> {
    if any_requires_grad(&[dst, src]) {
        return Err(DispatchError::kernel(
            "copy_",
            format!(
                "an in-place write into {} from {} while autograd records: one of them requires \
                 grad, and autograd does not differentiate in-place ops; use the out-of-place \
                 op, or write under `autograd::no_grad()` (as an optimizer step does)",
                dst.summary(),
                src.summary()
            ),
        ));
    }
    run_below(|| copy_::redispatch(below(keys), dst, src))
}
