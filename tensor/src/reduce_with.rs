//! The reductions as PyTorch users call them, with keyword arguments: over every dim or some,
//! keeping them or not, in a chosen dtype (`x.sum(dim=None, keepdim=True, dtype=torch.float64)`
//! is `sum_with(&x, &Reduce::all().keepdim(true).dtype(DType::F64))`); `argmax` without a dim;
//! `max` along a dim with its indices; `softmax` and `log_softmax` in a chosen dtype.
//! Re-exported from [`crate::ops`], like every standard op.
//!
//! Each is a composite (an op with a body made of `to_dtype`, `sum_dim`, `mean_dim`, `argmax`,
//! `max_dim`, `softmax`, …): it runs on every backend that serves those, and autograd
//! differentiates it through them. A `dtype` converts `x` before reducing, as PyTorch does.

use switchyard::{DType, DispatchArg, DispatchKeySet, op};

use crate::Tensor;
use crate::ops::{
    try_argmax, try_log_softmax, try_max_dim, try_mean_dim, try_reshape, try_softmax, try_sum_dim,
    try_to_dtype,
};

type Result<T> = std::result::Result<T, switchyard::DispatchError>;

/// How a reduction reduces: along which dims (all of them by default), whether it keeps them
/// with extent 1, and in which dtype (`x` converted first; by default its own).
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{DType, Tensor, ops, ops::Reduce};
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// let total = ops::sum_with(&x, &Reduce::all().keepdim(true));
/// assert_eq!((total.shape(), total.to_vec::<f32>()), (&[1, 1][..], vec![10.0]));
/// let rows = ops::mean_with(&x, &Reduce::along(&[-1]).dtype(DType::F64));
/// assert_eq!(rows.to_vec::<f64>(), [1.5, 3.5]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reduce {
    /// The dims reduced (negative ones counted from the end); `None` reduces every dim.
    pub dims: Option<Vec<isize>>,
    /// Keep the reduced dims with extent 1.
    pub keepdim: bool,
    /// Convert `x` to this dtype before reducing (PyTorch's `dtype=`).
    pub dtype: Option<DType>,
}

impl Reduce {
    /// Every dim, dropped, in `x`'s dtype.
    pub fn all() -> Reduce {
        Reduce::default()
    }

    /// The dims `dims`, dropped, in `x`'s dtype.
    pub fn along(dims: &[isize]) -> Reduce {
        Reduce {
            dims: Some(dims.to_vec()),
            ..Reduce::default()
        }
    }

    /// With the reduced dims kept (extent 1) or dropped.
    pub fn keepdim(self, keepdim: bool) -> Reduce {
        Reduce { keepdim, ..self }
    }

    /// With `x` converted to `dtype` first.
    pub fn dtype(self, dtype: DType) -> Reduce {
        Reduce {
            dtype: Some(dtype),
            ..self
        }
    }

    /// `x` in the wanted dtype, and the dims to reduce.
    fn prepare(&self, x: &Tensor) -> Result<(Tensor, Vec<isize>)> {
        let x = match self.dtype {
            Some(dtype) => try_to_dtype(x, dtype)?,
            None => x.clone(),
        };
        let dims = match &self.dims {
            Some(dims) => dims.clone(),
            None => (0..x.dim() as isize).collect(),
        };
        Ok((x, dims))
    }
}

/// Options carry no device and no dtype of a tensor: they leave the dispatch keys alone.
// Not offered to a user whose own type lacks `DispatchArg`: rustc would list it as an example.
#[diagnostic::do_not_recommend]
impl DispatchArg for Reduce {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::EMPTY
    }
}
switchyard::boxable!(Reduce);

/// The sums of `x` as `how` says (see [`Reduce`]); with `Reduce::all()` the sum of every element,
/// as [`sum`](fn@crate::ops::sum) but with `keepdim` and `dtype`. Dtypes as
/// [`sum_dim`](fn@crate::ops::sum_dim)'s, after the conversion.
#[op(name = "switchyard::sum_with")]
pub fn sum_with(x: &Tensor, how: &Reduce) -> Tensor {
    let (x, dims) = how.prepare(x)?;
    try_sum_dim(&x, &dims, how.keepdim)
}

/// The means of `x` as `how` says (see [`Reduce`]); floats only, after the conversion (so
/// `dtype: Some(DType::F32)` takes the mean of an integer tensor, as PyTorch's `dtype=` does).
#[op(name = "switchyard::mean_with")]
pub fn mean_with(x: &Tensor, how: &Reduce) -> Tensor {
    let (x, dims) = how.prepare(x)?;
    try_mean_dim(&x, &dims, how.keepdim)
}

/// The index (`i64`) of the maximum of all of `x`, in row-major order (PyTorch's `argmax(x)`
/// without a dim): 0-d, or with every dim kept at extent 1 when `keepdim`. Ties and NaN as
/// [`argmax`](fn@crate::ops::argmax); an empty `x` is an error.
#[op(name = "switchyard::argmax_all")]
pub fn argmax_all(x: &Tensor, keepdim: bool) -> Tensor {
    let flat = try_reshape(x, &[-1])?;
    let at = try_argmax(&flat, 0, false)?;
    if keepdim {
        try_reshape(&at, &vec![1; x.dim()])
    } else {
        Ok(at)
    }
}

/// The maxima of `x` along `dim` and their indices (`i64`), as PyTorch's `max(x, dim)`: the
/// values of [`max_dim`](fn@crate::ops::max_dim), the indices of
/// [`argmax`](fn@crate::ops::argmax) (the first maximum, the first NaN).
#[op(name = "switchyard::max_dim_with_indices")]
pub fn max_dim_with_indices(x: &Tensor, dim: isize, keepdim: bool) -> (Tensor, Tensor) {
    let values = try_max_dim(x, dim, keepdim)?;
    let indices = try_argmax(x, dim, keepdim)?;
    Ok((values, indices))
}

/// [`softmax`](fn@crate::ops::softmax) of `x` converted to `dtype` first (PyTorch's
/// `softmax(x, dim, dtype=…)`: an `f16` input computed and returned in `f32`).
#[op(name = "switchyard::softmax_in")]
pub fn softmax_in(x: &Tensor, dim: isize, dtype: DType) -> Tensor {
    try_softmax(&try_to_dtype(x, dtype)?, dim)
}

/// [`log_softmax`](fn@crate::ops::log_softmax) of `x` converted to `dtype` first.
#[op(name = "switchyard::log_softmax_in")]
pub fn log_softmax_in(x: &Tensor, dim: isize, dtype: DType) -> Tensor {
    try_log_softmax(&try_to_dtype(x, dtype)?, dim)
}
