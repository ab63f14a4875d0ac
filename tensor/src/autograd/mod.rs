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
//! - **Your own derivative:** `#[kernel(op = "my_op", key = Autograd)]` taking the call's keys,
//!   as the standard ops' do (`autograd/formulas.rs`); check it with [`gradcheck`].
//! - Not yet: higher-order gradients (backward runs under `no_grad`), `retain_grad` of
//!   non-leaves, ops with several tensor results.

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
