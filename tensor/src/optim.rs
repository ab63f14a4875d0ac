//! Optimizers: update parameters in place from their gradients, under
//! [`no_grad`], on the parameters' own devices.
//!
//! ```
//! use switchyard::optim::{Optimizer, Sgd};
//! use switchyard::{Tensor, ops};
//! use switchyard_backends as _; // the kernels
//!
//! let mut w = Tensor::vector(&[4.0]);
//! w.requires_grad_(true);
//! let mut sgd = Sgd::new(vec![w.clone()], 0.25);
//! for _ in 0..20 {
//!     sgd.zero_grad();
//!     ops::sum(&ops::mul(&w, &w)).backward(); // minimise w²
//!     sgd.step().unwrap();
//! }
//! assert!(w.to_vec::<f32>()[0].abs() < 1e-3);
//! ```

use switchyard::DispatchError;

use crate::autograd::no_grad;
use crate::{Tensor, ops};

type Result<T> = std::result::Result<T, DispatchError>;

/// What every optimizer offers.
pub trait Optimizer {
    /// Updates each parameter that has a gradient, in place (every handle on it sees the new
    /// values). Parameters without a gradient (not reached by the last backward pass) are left
    /// alone. On error, parameters updated before the failing one keep their update.
    fn step(&mut self) -> Result<()>;

    /// The parameters, in the order given.
    fn params(&self) -> &[Tensor];

    /// Forgets every parameter's gradient, before the next backward pass.
    fn zero_grad(&self) {
        for p in self.params() {
            p.zero_grad();
        }
    }
}

/// A 0-d tensor of `value`, typed and placed like `like`, to scale it by.
fn scalar(value: f64, like: &Tensor) -> Result<Tensor> {
    ops::try_full(&[], value, like.dtype(), like.device())
}

/// Refuses a parameter that cannot be optimized: one that is not a leaf requiring grad.
fn check_params(op: &'static str, params: &[Tensor]) -> Result<()> {
    for (i, p) in params.iter().enumerate() {
        if !p.requires_grad() || !p.is_leaf() {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "parameter {i} ({}) is not a leaf that requires grad: mark it with \
                     `requires_grad_(true)` when you make it",
                    p.summary()
                ),
            ));
        }
    }
    Ok(())
}

/// Stochastic gradient descent, with optional momentum (PyTorch's `SGD`): `v ← μ·v + g`,
/// `p ← p − lr·v` (without momentum, `p ← p − lr·g`).
#[derive(Debug)]
pub struct Sgd {
    params: Vec<Tensor>,
    lr: f64,
    momentum: f64,
    velocity: Vec<Option<Tensor>>,
}

impl Sgd {
    /// SGD over `params` (leaves that require grad) with learning rate `lr`, no momentum.
    ///
    /// Panics when a parameter is not a leaf requiring grad; see [`Sgd::try_new`].
    #[track_caller]
    pub fn new(params: Vec<Tensor>, lr: f64) -> Sgd {
        Sgd::try_new(params, lr).unwrap_or_else(|e| e.panic())
    }

    /// [`Sgd::new`], returning the error.
    pub fn try_new(params: Vec<Tensor>, lr: f64) -> Result<Sgd> {
        check_params("Sgd::new", &params)?;
        let velocity = vec![None; params.len()];
        Ok(Sgd {
            params,
            lr,
            momentum: 0.0,
            velocity,
        })
    }

    /// With momentum `momentum` (μ; 0.9 is common).
    pub fn momentum(mut self, momentum: f64) -> Sgd {
        self.momentum = momentum;
        self
    }

    /// The learning rate.
    pub fn lr(&self) -> f64 {
        self.lr
    }

    /// Changes the learning rate for the steps that follow (a schedule: decay, warm-up); the
    /// velocity is kept.
    pub fn set_lr(&mut self, lr: f64) {
        self.lr = lr;
    }
}

impl Optimizer for Sgd {
    fn step(&mut self) -> Result<()> {
        let _no_grad = no_grad();
        for (p, velocity) in self.params.iter().zip(&mut self.velocity) {
            let Some(g) = p.grad() else { continue };
            // Everything is computed before anything is written: an error leaves the parameter
            // and the optimizer's state as they were.
            let v = if self.momentum == 0.0 {
                g
            } else {
                match velocity.as_ref() {
                    // The first step starts the velocity at the gradient, as PyTorch does.
                    None => g,
                    Some(v) => ops::try_add(&ops::try_mul(v, &scalar(self.momentum, v)?)?, &g)?,
                }
            };
            let step = ops::try_mul(&v, &scalar(self.lr, &v)?)?;
            ops::try_sub_(&mut p.clone(), &step)?;
            if self.momentum != 0.0 {
                *velocity = Some(v);
            }
        }
        Ok(())
    }

    fn params(&self) -> &[Tensor] {
        &self.params
    }
}

/// Adam (Kingma & Ba; PyTorch's `Adam` without weight decay): `m ← β₁m + (1−β₁)g`,
/// `v ← β₂v + (1−β₂)g²`, `p ← p − lr·m̂ / (√v̂ + ε)` with the bias corrections
/// `m̂ = m / (1−β₁ᵗ)`, `v̂ = v / (1−β₂ᵗ)`.
#[derive(Debug)]
pub struct Adam {
    params: Vec<Tensor>,
    lr: f64,
    betas: (f64, f64),
    eps: f64,
    /// Per parameter: its steps so far, and the first and second moments.
    state: Vec<Option<(u32, Tensor, Tensor)>>,
}

impl Adam {
    /// Adam over `params` with learning rate `lr`, β = (0.9, 0.999), ε = 1e-8.
    ///
    /// Panics when a parameter is not a leaf requiring grad; see [`Adam::try_new`].
    #[track_caller]
    pub fn new(params: Vec<Tensor>, lr: f64) -> Adam {
        Adam::try_new(params, lr).unwrap_or_else(|e| e.panic())
    }

    /// [`Adam::new`], returning the error.
    pub fn try_new(params: Vec<Tensor>, lr: f64) -> Result<Adam> {
        check_params("Adam::new", &params)?;
        let state = vec![None; params.len()];
        Ok(Adam {
            params,
            lr,
            betas: (0.9, 0.999),
            eps: 1e-8,
            state,
        })
    }

    /// With the moments' decay rates β₁, β₂.
    pub fn betas(mut self, beta1: f64, beta2: f64) -> Adam {
        self.betas = (beta1, beta2);
        self
    }

    /// With ε, added to the denominator.
    pub fn eps(mut self, eps: f64) -> Adam {
        self.eps = eps;
        self
    }

    /// The learning rate.
    pub fn lr(&self) -> f64 {
        self.lr
    }

    /// Changes the learning rate for the steps that follow (a schedule: decay, warm-up); the
    /// moments and step counts are kept, as when PyTorch's schedulers change a group's `lr`.
    pub fn set_lr(&mut self, lr: f64) {
        self.lr = lr;
    }
}

impl Optimizer for Adam {
    fn step(&mut self) -> Result<()> {
        let _no_grad = no_grad();
        let (beta1, beta2) = self.betas;
        for (p, state) in self.params.iter().zip(&mut self.state) {
            let Some(g) = p.grad() else { continue };
            // Everything is computed before anything is written: an error leaves the parameter
            // and the optimizer's state as they were.
            let (steps, m, v) = match state {
                Some((steps, m, v)) => (
                    steps.saturating_add(1),
                    ops::try_add(
                        &ops::try_mul(m, &scalar(beta1, m)?)?,
                        &ops::try_mul(&g, &scalar(1.0 - beta1, &g)?)?,
                    )?,
                    ops::try_add(
                        &ops::try_mul(v, &scalar(beta2, v)?)?,
                        &ops::try_mul(&ops::try_mul(&g, &g)?, &scalar(1.0 - beta2, &g)?)?,
                    )?,
                ),
                // From zero moments: m = (1−β₁)g, v = (1−β₂)g².
                None => (
                    1,
                    ops::try_mul(&g, &scalar(1.0 - beta1, &g)?)?,
                    ops::try_mul(&ops::try_mul(&g, &g)?, &scalar(1.0 - beta2, &g)?)?,
                ),
            };
            let correction1 = 1.0 - beta1.powi(steps.min(i32::MAX as u32) as i32);
            let correction2 = 1.0 - beta2.powi(steps.min(i32::MAX as u32) as i32);
            // lr·m̂ / (√v̂ + ε) = (lr / c₁)·m / (√v / √c₂ + ε)
            let denominator = ops::try_add(
                &ops::try_div(&ops::try_sqrt(&v)?, &scalar(correction2.sqrt(), &v)?)?,
                &scalar(self.eps, &v)?,
            )?;
            let step = ops::try_div(
                &ops::try_mul(&m, &scalar(self.lr / correction1, &m)?)?,
                &denominator,
            )?;
            ops::try_sub_(&mut p.clone(), &step)?;
            *state = Some((steps, m, v));
        }
        Ok(())
    }

    fn params(&self) -> &[Tensor] {
        &self.params
    }
}
