//! `GradScaler`: loss scaling for `f16` training, PyTorch's `torch.amp.GradScaler`.

use switchyard::DispatchError;

use crate::autograd::no_grad;
use crate::ops;
use crate::optim::Optimizer;
use crate::tensor::Tensor;

type Result<T> = std::result::Result<T, DispatchError>;

/// Scales a loss up before its backward pass, so that small gradients survive `f16` (whose
/// smallest normal number is 6·10⁻⁵), and unscales the gradients before the optimizer's step:
///
/// ```
/// use switchyard::autocast::GradScaler;
/// use switchyard::optim::{Optimizer, Sgd};
/// use switchyard::{Tensor, ops};
/// # use switchyard_backends as _;
///
/// let mut w = Tensor::vector(&[4.0]);
/// w.requires_grad_(true);
/// let mut sgd = Sgd::new(vec![w.clone()], 0.25);
/// let mut scaler = GradScaler::new();
/// for _ in 0..20 {
///     sgd.zero_grad();
///     let loss = ops::sum(&ops::mul(&w, &w));
///     scaler.scale(&loss).unwrap().backward();
///     scaler.step(&mut sgd).unwrap(); // unscales, and skips the step on inf or NaN
///     scaler.update();
/// }
/// assert!(w.to_vec::<f32>()[0].abs() < 1e-3);
/// ```
///
/// A step whose gradients hold an infinity or a NaN (the scale was too large) is skipped and the
/// scale halves; after `growth_interval` good steps in a row it doubles.
#[derive(Clone, Debug)]
pub struct GradScaler {
    scale: f64,
    growth_factor: f64,
    backoff_factor: f64,
    growth_interval: u32,
    good_steps: u32,
    found_inf: bool,
}

impl Default for GradScaler {
    fn default() -> Self {
        GradScaler::new()
    }
}

impl GradScaler {
    /// PyTorch's defaults: scale 2¹⁶, doubled after 2000 good steps, halved on a bad one.
    pub fn new() -> GradScaler {
        GradScaler::with(65536.0, 2.0, 0.5, 2000)
    }

    /// A scaler starting at `scale`, multiplied by `growth_factor` after `growth_interval` good
    /// steps in a row and by `backoff_factor` after a skipped one.
    pub fn with(
        scale: f64,
        growth_factor: f64,
        backoff_factor: f64,
        growth_interval: u32,
    ) -> GradScaler {
        GradScaler {
            scale,
            growth_factor,
            backoff_factor,
            growth_interval: growth_interval.max(1),
            good_steps: 0,
            found_inf: false,
        }
    }

    /// The scale now.
    pub fn scale_factor(&self) -> f64 {
        self.scale
    }

    /// `loss` times the scale: call `backward()` on this instead of the loss.
    pub fn scale(&self, loss: &Tensor) -> Result<Tensor> {
        let factor = ops::try_full(&[], self.scale, loss.dtype(), loss.device())?;
        ops::try_mul(loss, &factor)
    }

    /// Divides every gradient of `optimizer`'s parameters by the scale, then runs its step, unless
    /// a gradient holds an infinity or a NaN: then the step is skipped (the gradients are left
    /// unscaled). Returns whether the step ran. Call [`update`](GradScaler::update) after it.
    pub fn step(&mut self, optimizer: &mut impl Optimizer) -> Result<bool> {
        let _no_grad = no_grad();
        self.found_inf = false;
        let mut unscaled = Vec::with_capacity(optimizer.params().len());
        for p in optimizer.params() {
            let Some(g) = p.grad() else { continue };
            // `0 · g` is 0 for every finite element and NaN for ±∞ and NaN: its sum tells whether
            // any element is not finite, on any device, with one value read back.
            let zero = ops::try_full(&[], 0.0, g.dtype(), g.device())?;
            let probe = ops::try_sum(&ops::try_mul(&g, &zero)?)?
                .try_item()?
                .as_f64();
            if probe.is_nan() {
                self.found_inf = true;
                return Ok(false);
            }
            let inverse = ops::try_full(&[], 1.0 / self.scale, g.dtype(), g.device())?;
            unscaled.push((p.clone(), ops::try_mul(&g, &inverse)?));
        }
        for (p, g) in unscaled {
            p.try_set_grad(Some(g))?;
        }
        optimizer.step()?;
        Ok(true)
    }

    /// Adapts the scale after a [`step`](GradScaler::step): smaller after a skipped one, larger
    /// after `growth_interval` good ones in a row.
    pub fn update(&mut self) {
        if self.found_inf {
            self.scale *= self.backoff_factor;
            self.good_steps = 0;
        } else {
            self.good_steps += 1;
            if self.good_steps >= self.growth_interval {
                self.scale *= self.growth_factor;
                self.good_steps = 0;
            }
        }
        self.found_inf = false;
    }
}
