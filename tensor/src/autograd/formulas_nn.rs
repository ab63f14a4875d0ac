//! Derivatives of the ops a network needs beyond the arithmetic ones: `log`, `sqrt`, `tanh`,
//! `sigmoid`, the reductions along dimensions and `where`; and the autograd kernels of ops whose
//! results have no gradient (comparisons, `argmax`), which run below autograd and record nothing.
//! (`softmax`, `log_softmax` and `cross_entropy` are composites: differentiated through their
//! decomposition.)

use switchyard::{DType, DispatchError, DispatchKeySet, kernel};

use crate::Tensor;
use crate::autograd::formulas::{save_if, saved, signed};
use crate::autograd::meta::SavedTensor as Saved;
use crate::autograd::record::{below, fit, info, record, run_below};
use crate::ops::{
    self, argmax, eq, ge, gt, le, log, lt, max_dim, mean_dim, ne, sigmoid, sqrt, sum_dim, tanh,
    where_cond,
};
use crate::shape::{wrap_dim, wrap_dims};

type Result<T> = std::result::Result<T, DispatchError>;

/// A 0-d tensor of `value`, typed and placed like `like`.
fn scalar(value: f64, like: &Tensor) -> Result<Tensor> {
    ops::try_full(&[], value, like.dtype(), like.device())
}

#[kernel(op = "log", key = Autograd)]
fn log_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| log::redispatch(below(keys), x))?;
    let (xi, sx) = (info(x), save_if(x.requires_grad(), "log", x)?);
    Ok(record("log", &[x], out, move |g| {
        Ok(vec![Some(fit(ops::try_div(g, saved(&sx)?)?, &xi)?)])
    }))
}

#[kernel(op = "sqrt", key = Autograd)]
fn sqrt_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| sqrt::redispatch(below(keys), x))?;
    let (xi, so) = (info(x), save_if(x.requires_grad(), "sqrt", &out)?);
    Ok(record("sqrt", &[x], out, move |g| {
        // d√x = 1 / (2√x)
        let out = saved(&so)?;
        let twice = ops::try_add(out, out)?;
        Ok(vec![Some(fit(ops::try_div(g, &twice)?, &xi)?)])
    }))
}

#[kernel(op = "tanh", key = Autograd)]
fn tanh_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| tanh::redispatch(below(keys), x))?;
    let (xi, so) = (info(x), save_if(x.requires_grad(), "tanh", &out)?);
    Ok(record("tanh", &[x], out, move |g| {
        // d tanh = 1 − tanh²
        let out = saved(&so)?;
        let slope = ops::try_sub(&scalar(1.0, out)?, &ops::try_mul(out, out)?)?;
        Ok(vec![Some(fit(ops::try_mul(g, &slope)?, &xi)?)])
    }))
}

#[kernel(op = "sigmoid", key = Autograd)]
fn sigmoid_autograd(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor> {
    let out = run_below(|| sigmoid::redispatch(below(keys), x))?;
    let (xi, so) = (info(x), save_if(x.requires_grad(), "sigmoid", &out)?);
    Ok(record("sigmoid", &[x], out, move |g| {
        // dσ = σ·(1 − σ)
        let out = saved(&so)?;
        let slope = ops::try_mul(out, &ops::try_sub(&scalar(1.0, out)?, out)?)?;
        Ok(vec![Some(fit(ops::try_mul(g, &slope)?, &xi)?)])
    }))
}

/// `g`, the gradient of a reduction over `dims` of an input of `shape`, with the reduced
/// dimensions put back (when the reduction dropped them) and spread over the input's shape.
fn spread_over(g: &Tensor, dims: &[usize], keepdim: bool, shape: &[usize]) -> Result<Tensor> {
    let mut g = g.clone();
    if !keepdim {
        let mut sorted = dims.to_vec();
        sorted.sort_unstable();
        for &d in &sorted {
            g = ops::try_unsqueeze(&g, d as isize)?;
        }
    }
    ops::try_contiguous(&ops::try_expand(&g, &signed(shape))?)
}

#[kernel(op = "sum_dim", key = Autograd)]
fn sum_dim_autograd(
    keys: DispatchKeySet,
    x: &Tensor,
    dims: &[isize],
    keepdim: bool,
) -> Result<Tensor> {
    let out = run_below(|| sum_dim::redispatch(below(keys), x, dims, keepdim))?;
    let (xi, dims) = (info(x), wrap_dims("sum_dim", dims, x.shape())?);
    Ok(record("sum_dim", &[x], out, move |g| {
        Ok(vec![Some(fit(
            spread_over(g, &dims, keepdim, &xi.shape)?,
            &xi,
        )?)])
    }))
}

#[kernel(op = "mean_dim", key = Autograd)]
fn mean_dim_autograd(
    keys: DispatchKeySet,
    x: &Tensor,
    dims: &[isize],
    keepdim: bool,
) -> Result<Tensor> {
    let out = run_below(|| mean_dim::redispatch(below(keys), x, dims, keepdim))?;
    let (xi, dims) = (info(x), wrap_dims("mean_dim", dims, x.shape())?);
    let count: usize = dims.iter().map(|&d| x.shape()[d]).product();
    Ok(record("mean_dim", &[x], out, move |g| {
        let g = ops::try_div(g, &scalar(count as f64, g)?)?;
        Ok(vec![Some(fit(
            spread_over(&g, &dims, keepdim, &xi.shape)?,
            &xi,
        )?)])
    }))
}

#[kernel(op = "max_dim", key = Autograd)]
fn max_dim_autograd(keys: DispatchKeySet, x: &Tensor, dim: isize, keepdim: bool) -> Result<Tensor> {
    let out = run_below(|| max_dim::redispatch(below(keys), x, dim, keepdim))?;
    let dim = wrap_dim("max_dim", dim, x.shape())?;
    let (xi, sx) = (info(x), save_if(x.requires_grad(), "max_dim", x)?);
    Ok(record("max_dim", &[x], out, move |g| {
        // The gradient goes to the first maximum along `dim` (as `argmax` picks it).
        let x = saved(&sx)?;
        let at = ops::try_argmax(x, dim as isize, true)?;
        let extent = xi.shape[dim];
        let mut position_shape = vec![1isize; xi.shape.len()];
        position_shape[dim] = extent as isize;
        let positions = ops::try_reshape(
            &ops::try_arange(extent, DType::I64, xi.device)?,
            &position_shape,
        )?;
        let mask = ops::try_to_dtype(&ops::try_eq(&positions, &at)?, g.dtype())?;
        let g = if keepdim {
            g.clone()
        } else {
            ops::try_unsqueeze(g, dim as isize)?
        };
        Ok(vec![Some(fit(ops::try_mul(&mask, &g)?, &xi)?)])
    }))
}

#[kernel(op = "where_cond", key = Autograd)]
fn where_autograd(keys: DispatchKeySet, cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = run_below(|| where_cond::redispatch(below(keys), cond, x, y))?;
    let (xi, yi, nx, ny) = (info(x), info(y), x.requires_grad(), y.requires_grad());
    let sc = Saved::new("where", cond)?;
    Ok(record("where", &[cond, x, y], out, move |g| {
        let cond = sc.get()?;
        let zero = scalar(0.0, g)?;
        let gx = if nx {
            Some(fit(ops::try_where_cond(cond, g, &zero)?, &xi)?)
        } else {
            None
        };
        let gy = if ny {
            Some(fit(ops::try_where_cond(cond, &zero, g)?, &yi)?)
        } else {
            None
        };
        // `cond` is a bool tensor: it never requires grad.
        Ok(vec![None, gx, gy])
    }))
}

// Ops whose results have no gradient: run below autograd, record nothing.

macro_rules! no_gradient {
    ($($name:ident: $op:literal / $module:ident ($($arg:ident: $ty:ty),*);)*) => {$(
        #[kernel(op = $op, key = Autograd)]
        fn $name(keys: DispatchKeySet $(, $arg: $ty)*) -> Result<Tensor> {
            run_below(|| $module::redispatch(below(keys) $(, $arg)*))
        }
    )*};
}

no_gradient! {
    argmax_autograd: "argmax" / argmax(x: &Tensor, dim: isize, keepdim: bool);
    eq_autograd: "eq" / eq(x: &Tensor, y: &Tensor);
    ne_autograd: "ne" / ne(x: &Tensor, y: &Tensor);
    lt_autograd: "lt" / lt(x: &Tensor, y: &Tensor);
    le_autograd: "le" / le(x: &Tensor, y: &Tensor);
    gt_autograd: "gt" / gt(x: &Tensor, y: &Tensor);
    ge_autograd: "ge" / ge(x: &Tensor, y: &Tensor);
}
