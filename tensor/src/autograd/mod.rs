//! Reverse-mode automatic differentiation, built as a layer of the dispatcher.
//!
//! A tensor that requires grad ([`Tensor::requires_grad_`](crate::Tensor::requires_grad_))
//! carries its device's autograd key (`AutogradCpu`, `AutogradWgpu`, …), so any call with such
//! an argument lands first on the op's kernel at the [`Autograd`](switchyard::AliasKey::Autograd)
//! alias: one derivative per op serves every backend. That kernel runs the op below autograd
//! (`keys.below(AliasKey::Autograd)`: the backend kernel, unchanged), then records a backward
//! node on the result: which inputs' gradients to compute, from what it saved. Calls whose
//! arguments do not require grad never meet autograd: their keys have no autograd bit, so the
//! hot path is the one it was.
//!
//! [`Tensor::backward`](crate::Tensor::backward) walks the nodes from a one-element result back
//! to the leaves, each once all its consumers have given their gradients, and adds each leaf's
//! gradient into [`Tensor::grad`](crate::Tensor::grad). Gradients are computed with ordinary
//! ops on the device the forward pass ran on. The graph is kept after a pass (a second
//! `backward` accumulates again); it is freed with the tensors that hold it.
//!
//! - **Modes.** [`no_grad()`] excludes the autograd keys (an optimizer step, evaluation);
//!   [`inference_mode()`] does too, and the storages made inside have no version counter.
//!   Both are guards that nest and restore exactly.
//! - **Saved tensors** keep the version of their storage; a backward pass that finds it changed
//!   (an in-place write since) fails naming the op and both versions.
//! - **In-place ops** on a tensor that requires grad, or writing one that does, are refused
//!   while grad is enabled (history is not rewritten yet); under `no_grad` they run.
//! - **An op without a derivative** reached by a tensor that requires grad is an error naming
//!   the op (a missing kernel at its autograd key); [`warn_not_implemented`] makes it a warning.
//!   Ops with a body (composites: the in-place ops, `softmax`, `cross_entropy`, …) are
//!   differentiated through their decomposition and need no derivative of their own.
//! - Not yet: higher-order gradients (backward runs under `no_grad`), `retain_grad` of
//!   non-leaves, ops with several tensor results.
//!
//! # Your own derivative
//!
//! A derivative is a kernel at the `Autograd` alias key, taking the call's keys: it runs the op
//! below autograd, then [`record`]s how to take a gradient back through it, from what it
//! [saved](SavedTensor). [`gradcheck`] compares it with finite differences.
//!
//! ```
//! use switchyard::autograd::{self, SavedTensor};
//! use switchyard::{AliasKey, DispatchKeySet, Tensor, kernel, op, ops};
//! use switchyard_backends as _; // the kernels
//!
//! /// x³. Its body makes it run on every backend that has `mul`.
//! #[op(name = "docs::cube")]
//! pub fn cube(x: &Tensor) -> Tensor {
//!     ops::try_mul(&ops::try_mul(x, x)?, x)
//! }
//!
//! /// d(x³)/dx = 3x², for every backend. Without it, autograd would go through the body's `mul`s.
//! #[kernel(op = "cube", key = Autograd)]
//! fn cube_autograd(keys: DispatchKeySet, x: &Tensor) -> switchyard::Result<Tensor> {
//!     let out = cube::redispatch(keys.below(AliasKey::Autograd), x)?;
//!     let saved = SavedTensor::new("docs::cube", x)?;
//!     Ok(autograd::record("docs::cube", &[x], out, move |grad| {
//!         let x = saved.get()?;
//!         let x2 = ops::try_mul(x, x)?;
//!         let three_x2 = ops::try_add(&x2, &ops::try_add(&x2, &x2)?)?;
//!         Ok(vec![Some(ops::try_mul(grad, &three_x2)?)])
//!     }))
//! }
//!
//! fn main() {
//!     let mut x = Tensor::vector(&[2.0]);
//!     x.requires_grad_(true);
//!     ops::sum(&cube(&x)).backward();
//!     assert_eq!(x.grad().unwrap().to_vec::<f32>(), [12.0]);
//!
//!     let mut x = Tensor::from_vec(vec![0.5f64, -1.5], &[2]).unwrap();
//!     x.requires_grad_(true);
//!     autograd::gradcheck(|t| try_cube(&t[0]), &[x]).unwrap();
//! }
//! ```

mod engine;
mod formulas;
mod formulas_nn;
mod gradcheck;
pub(crate) mod meta;
mod modes;
mod not_implemented;
pub(crate) mod record;
mod tensor_api;

pub use gradcheck::{GradcheckError, Tolerance, gradcheck, gradcheck_with};
pub use meta::{AutogradMeta, SavedTensor};
pub use modes::{
    InferenceModeGuard, NoGradGuard, inference_mode, is_grad_enabled, is_inference_mode_enabled,
    no_grad,
};
pub use not_implemented::{NotImplementedWarnings, warn_not_implemented};
pub use record::{record, run_below, sum_to};
