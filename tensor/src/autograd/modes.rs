//! `no_grad` and `inference_mode`: scoped guards over the thread's dispatch keys.

use std::cell::Cell;
use std::marker::PhantomData;

use switchyard::{DispatchKeySet, KeyGuard};

thread_local! {
    // How many `inference_mode` guards live on this thread. `const`, `Copy`, no destructor: read
    // when a storage is made, also from thread-local destructors.
    static INFERENCE_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// While alive, this thread records no autograd: the autograd keys are excluded, so every op
/// runs its backend kernel and makes results that do not require grad. Nests; dropping every
/// guard (in any order, panics included) restores what was before. See [`no_grad()`].
#[must_use = "the guard turns autograd off only while it is alive"]
#[derive(Debug)]
pub struct NoGradGuard {
    _keys: KeyGuard,
}

/// Turns autograd off on this thread while the returned guard lives: what an optimizer's update
/// and an evaluation loop run under (PyTorch's `torch.no_grad()`).
///
/// ```
/// use switchyard::{Tensor, autograd, ops};
/// use switchyard_backends as _; // the kernels
///
/// let mut w = Tensor::vector(&[1.0, 2.0]);
/// w.requires_grad_(true);
/// {
///     let _no_grad = autograd::no_grad();
///     assert!(!ops::mul(&w, &w).requires_grad());
/// }
/// assert!(ops::mul(&w, &w).requires_grad());
/// ```
pub fn no_grad() -> NoGradGuard {
    NoGradGuard {
        _keys: switchyard::exclude(DispatchKeySet::AUTOGRAD),
    }
}

/// Whether ops on this thread record autograd now: no autograd key is excluded (no
/// [`no_grad()`] or [`inference_mode()`] guard, nor an `exclude` of an autograd key, is alive).
pub fn is_grad_enabled() -> bool {
    !switchyard::local_keys()
        .excluded
        .intersects(DispatchKeySet::AUTOGRAD)
}

/// While alive, autograd is off (as under [`no_grad()`]) and every storage made on this thread
/// belongs to *inference tensors*, which have no version counter: writes count no version,
/// and autograd refuses to save one for backward (c10's inference mode). Nests and restores
/// exactly, like every guard.
#[must_use = "inference mode lasts only while the guard is alive"]
#[derive(Debug)]
pub struct InferenceModeGuard {
    _keys: KeyGuard,
    _depth: InferenceDepth,
}

/// One count of `INFERENCE_DEPTH`, given back on drop (so the count does not depend on the
/// order guards drop in). `!Send`, like the key guard beside it.
#[derive(Debug)]
struct InferenceDepth(PhantomData<*const ()>);

impl Drop for InferenceDepth {
    fn drop(&mut self) {
        INFERENCE_DEPTH.with(|depth| depth.set(depth.get() - 1));
    }
}

/// Enters inference mode on this thread while the returned guard lives: no autograd, and
/// tensors made inside have no version counter ([`Tensor::is_inference`](crate::Tensor::is_inference)).
///
/// ```
/// use switchyard::{Tensor, autograd, ops};
/// use switchyard_backends as _; // the kernels
///
/// let x = {
///     let _inference = autograd::inference_mode();
///     ops::mul(&Tensor::vector(&[1.0, 2.0]), &Tensor::scalar(3.0))
/// };
/// assert!(x.is_inference() && !x.requires_grad());
/// ```
pub fn inference_mode() -> InferenceModeGuard {
    let keys = switchyard::exclude(DispatchKeySet::AUTOGRAD);
    INFERENCE_DEPTH.with(|depth| depth.set(depth.get() + 1));
    InferenceModeGuard {
        _keys: keys,
        _depth: InferenceDepth(PhantomData),
    }
}

/// Whether an [`inference_mode()`] guard is alive on this thread.
#[inline] // asked by every new tensor; a call across crates cost more than the read
pub fn is_inference_mode_enabled() -> bool {
    INFERENCE_DEPTH.with(|depth| depth.get() != 0)
}
