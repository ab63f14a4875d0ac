//! `gradcheck`: a derivative against central finite differences.

use std::fmt;

use switchyard::{DType, DispatchError};

use crate::autograd::no_grad;
use crate::{Tensor, ops};

/// How closely an analytic gradient must match the finite differences: `|analytic − numeric| ≤
/// atol + rtol·|numeric|` for every element, with differences taken `eps` to each side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// The step to each side of an element.
    pub eps: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
}

impl Tolerance {
    /// For `f64` inputs (PyTorch's `gradcheck` defaults): `eps = 1e-6`, `atol = 1e-5`,
    /// `rtol = 1e-3`.
    pub const F64: Tolerance = Tolerance {
        eps: 1e-6,
        atol: 1e-5,
        rtol: 1e-3,
    };

    /// For `f32` inputs (a backend that serves only `f32`): `eps = 1e-2`, `atol = 1e-2`,
    /// `rtol = 1e-2`. Single precision leaves about three significant digits in a difference.
    pub const F32: Tolerance = Tolerance {
        eps: 1e-2,
        atol: 1e-2,
        rtol: 1e-2,
    };

    /// The tolerance for inputs of `dtype`: [`Tolerance::F64`] for `f64`, else
    /// [`Tolerance::F32`].
    pub fn for_dtype(dtype: DType) -> Tolerance {
        if dtype == DType::F64 {
            Tolerance::F64
        } else {
            Tolerance::F32
        }
    }
}

/// Why [`gradcheck`] failed.
#[derive(Clone, Debug, PartialEq)]
pub enum GradcheckError {
    /// The function, its backward pass, or preparing an input failed.
    Dispatch(DispatchError),
    /// No input requires grad: nothing would be checked.
    NothingToCheck,
    /// Input `input` requires grad but the backward pass gave it no gradient.
    NoGradient {
        /// The input's position.
        input: usize,
    },
    /// An element whose analytic gradient differs from the finite difference.
    Mismatch {
        /// The input's position.
        input: usize,
        /// The element's row-major index in that input.
        element: usize,
        /// What the backward pass gave.
        analytic: f64,
        /// What central differences gave.
        numeric: f64,
        /// The tolerance it was held to.
        tolerance: Tolerance,
    },
}

impl fmt::Display for GradcheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GradcheckError::Dispatch(e) => write!(f, "gradcheck: {e}"),
            GradcheckError::NothingToCheck => f.write_str(
                "gradcheck: no input requires grad; mark the inputs to check with \
                 `requires_grad_(true)`",
            ),
            GradcheckError::NoGradient { input } => write!(
                f,
                "gradcheck: input {input} requires grad, but the backward pass gave it no gradient"
            ),
            GradcheckError::Mismatch {
                input,
                element,
                analytic,
                numeric,
                tolerance,
            } => write!(
                f,
                "gradcheck: input {input}, element {element}: the derivative gives {analytic:e}, \
                 finite differences {numeric:e} (eps {:e}; allowed difference {:e})",
                tolerance.eps,
                tolerance.atol + tolerance.rtol * numeric.abs()
            ),
        }
    }
}

impl std::error::Error for GradcheckError {}

impl From<DispatchError> for GradcheckError {
    fn from(e: DispatchError) -> Self {
        GradcheckError::Dispatch(e)
    }
}

/// Checks the derivatives `f` is made of: for each input that requires grad, the gradient of
/// `Σ wᵢ·f(inputs)ᵢ` (fixed weights `w` in [0.5, 1.5], so every output element counts) by the
/// backward pass against central finite differences, element by element, with
/// [`Tolerance::for_dtype`] of the first checked input. Inputs may live on any device (they are
/// perturbed on the host and moved back); inputs that do not require grad are constants. The
/// inputs' own gradients are not touched.
///
/// Use it to test a derivative you register (`#[kernel(op = …, key = Autograd)]`):
///
/// ```
/// use switchyard::{Tensor, autograd, ops};
/// use switchyard_backends as _; // the kernels
///
/// let mut x = Tensor::from_vec(vec![0.5f64, -1.0, 2.0], &[3]).unwrap();
/// x.requires_grad_(true);
/// autograd::gradcheck(|t| ops::try_mul(&t[0], &ops::try_exp(&t[0])?), &[x]).unwrap();
/// ```
pub fn gradcheck(
    f: impl Fn(&[Tensor]) -> Result<Tensor, DispatchError>,
    inputs: &[Tensor],
) -> Result<(), GradcheckError> {
    let dtype = inputs
        .iter()
        .find(|x| x.requires_grad())
        .map_or(DType::F64, Tensor::dtype);
    gradcheck_with(f, inputs, Tolerance::for_dtype(dtype))
}

/// [`gradcheck`] with a stated tolerance.
pub fn gradcheck_with(
    f: impl Fn(&[Tensor]) -> Result<Tensor, DispatchError>,
    inputs: &[Tensor],
    tolerance: Tolerance,
) -> Result<(), GradcheckError> {
    if !inputs.iter().any(Tensor::requires_grad) {
        return Err(GradcheckError::NothingToCheck);
    }
    // Fresh leaves over the inputs' values, so the caller's gradients are not touched.
    let leaves: Vec<Tensor> = inputs
        .iter()
        .map(|x| {
            let mut leaf = x.detach();
            if x.requires_grad() {
                leaf.try_requires_grad_(true)?;
            }
            Ok(leaf)
        })
        .collect::<Result<_, DispatchError>>()?;
    let out = f(&leaves)?;
    let weights = weights_like(&out)?;
    let objective = |out: &Tensor| ops::try_sum(&ops::try_mul(out, &weights)?);
    objective(&out)?.try_backward()?;

    for (input, leaf) in leaves.iter().enumerate() {
        if !leaf.requires_grad() {
            continue;
        }
        let analytic = leaf.grad().ok_or(GradcheckError::NoGradient { input })?;
        let analytic = host_values(&analytic)?;
        let values = host_values(leaf)?;
        for element in 0..values.len() {
            let at = |delta: f64| -> Result<(f64, f64), DispatchError> {
                let mut moved = values.clone();
                moved[element] += delta;
                let moved = from_host(&moved, leaf)?;
                // The value the input really took (rounded to its dtype).
                let taken = host_values(&moved)?[element];
                let mut args = leaves.clone();
                args[input] = moved;
                let _no_grad = no_grad();
                let value = host_values(&objective(&f(&args)?)?)?[0];
                Ok((taken, value))
            };
            let (x_plus, f_plus) = at(tolerance.eps)?;
            let (x_minus, f_minus) = at(-tolerance.eps)?;
            let numeric = (f_plus - f_minus) / (x_plus - x_minus);
            let analytic = analytic[element];
            if (analytic - numeric).abs() > tolerance.atol + tolerance.rtol * numeric.abs()
                || analytic.is_nan() != numeric.is_nan()
            {
                return Err(GradcheckError::Mismatch {
                    input,
                    element,
                    analytic,
                    numeric,
                    tolerance,
                });
            }
        }
    }
    Ok(())
}

/// `x`'s values in row-major order, as `f64`, read on the host.
fn host_values(x: &Tensor) -> Result<Vec<f64>, DispatchError> {
    x.try_to_f64_vec()
}

/// `values` as a tensor shaped, typed and placed like `like`.
fn from_host(values: &[f64], like: &Tensor) -> Result<Tensor, DispatchError> {
    let _no_grad = no_grad();
    let host = Tensor::from_slice(values, like.shape())?;
    ops::try_to(&ops::try_to_dtype(&host, like.dtype())?, like.device())
}

/// Fixed weights in [0.5, 1.5] shaped, typed and placed like `out` (a small linear congruential
/// sequence: the same every run).
fn weights_like(out: &Tensor) -> Result<Tensor, DispatchError> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let values: Vec<f64> = (0..out.numel())
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            0.5 + (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect();
    from_host(&values, &out.detach())
}
