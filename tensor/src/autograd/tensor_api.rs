//! Autograd's methods on `Tensor`: marking leaves, reading gradients, running backward.

use std::sync::Arc;

use switchyard::{DispatchError, DispatchKeySet};

use crate::Tensor;
use crate::autograd::engine;
use crate::autograd::meta::AutogradMeta;

type Result<T> = std::result::Result<T, DispatchError>;

impl Tensor {
    /// Whether autograd records ops on this tensor: a leaf marked with
    /// [`requires_grad_`](Tensor::requires_grad_), or the result of a recorded op.
    #[inline]
    pub fn requires_grad(&self) -> bool {
        self.inner.autograd.is_some()
    }

    /// Marks this handle as a leaf whose gradient [`backward`](Tensor::backward) accumulates
    /// (`true`), or as one that does not require grad (`false`). Clones made *before* keep
    /// their state (a tensor handle is immutable; this one is replaced): mark a parameter once,
    /// when it is made, and clone it after.
    ///
    /// Panics with the error of [`Tensor::try_requires_grad_`].
    #[track_caller]
    pub fn requires_grad_(&mut self, requires: bool) -> &mut Tensor {
        if let Err(e) = self.try_requires_grad_(requires) {
            e.panic()
        }
        self
    }

    /// [`Tensor::requires_grad_`]; errors for a tensor that is not a float tensor (its values
    /// have no gradient), for one seen as a user dtype (no derivatives are known for it) and for
    /// turning off a result of a recorded op (use
    /// [`detach`](Tensor::detach)). Marking a tensor that requires grad already changes nothing.
    pub fn try_requires_grad_(&mut self, requires: bool) -> Result<()> {
        const OP: &str = "requires_grad_";
        match (requires, &self.inner.autograd) {
            (true, Some(_)) | (false, None) => Ok(()),
            (true, None) if self.user_dtype().is_some() => Err(DispatchError::kernel(
                OP,
                format!(
                    "{} is seen as the user dtype `{}`, and autograd knows derivatives of the \
                     built-in dtypes only; `as_storage_dtype()` gives its `{}` storage as a \
                     tensor of that dtype",
                    self.summary(),
                    self.dtype_name(),
                    self.dtype()
                ),
            )),
            (true, None) if !self.dtype().is_float() => Err(DispatchError::kernel(
                OP,
                format!(
                    "only float tensors can require grad; {} holds {} values",
                    self.summary(),
                    self.dtype()
                ),
            )),
            (true, None) => {
                *self = self.clone().with_autograd(Some(AutogradMeta::leaf()));
                Ok(())
            }
            (false, Some(meta)) if meta.grad_fn.is_some() => Err(DispatchError::kernel(
                OP,
                format!(
                    "{} is the result of `{}`, not a leaf: only a leaf can stop requiring grad; \
                     `detach()` it for a tensor without history",
                    self.summary(),
                    self.grad_fn().unwrap_or("an op")
                ),
            )),
            (false, Some(_)) => {
                *self = self.clone().with_autograd(None);
                Ok(())
            }
        }
    }

    /// Whether this is a leaf of the autograd graph: made by the user rather than by a recorded
    /// op (every tensor that does not require grad is one).
    pub fn is_leaf(&self) -> bool {
        self.inner
            .autograd
            .as_ref()
            .is_none_or(|meta| meta.grad_fn.is_none())
    }

    /// The name of the op that made this tensor, if autograd recorded it (`Some("mul")`).
    pub fn grad_fn(&self) -> Option<&'static str> {
        let meta = self.inner.autograd.as_ref()?;
        meta.grad_fn.as_ref().map(|node| node.name)
    }

    /// The gradient accumulated in this leaf by [`backward`](Tensor::backward) (a tensor of its
    /// shape, dtype and device), or `None` before any backward pass reached it, after
    /// [`zero_grad`](Tensor::zero_grad), and for a tensor that is not a leaf requiring grad.
    pub fn grad(&self) -> Option<Tensor> {
        let meta = self.inner.autograd.as_ref()?;
        meta.grad_slot().clone()
    }

    /// Replaces this leaf's gradient (`None` forgets it), as PyTorch's `p.grad = g`: what an
    /// optimizer or a gradient scaler that rewrites gradients uses. Errors for a tensor that is
    /// not a leaf requiring grad, and for a gradient whose shape, dtype or device is not the
    /// leaf's.
    pub fn try_set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        const OP: &str = "set_grad";
        let Some(meta) = self.inner.autograd.as_ref().filter(|m| m.grad_fn.is_none()) else {
            return Err(DispatchError::kernel(
                OP,
                format!(
                    "{} is not a leaf that requires grad: it has no gradient to set",
                    self.summary()
                ),
            ));
        };
        if let Some(g) = &grad
            && (g.shape() != self.shape()
                || g.dtype() != self.dtype()
                || g.device() != self.device())
        {
            return Err(DispatchError::kernel(
                OP,
                format!(
                    "the gradient of {} must be a tensor like it, not {}",
                    self.summary(),
                    g.summary()
                ),
            ));
        }
        *meta.grad_slot() = grad.map(|g| g.detach());
        Ok(())
    }

    /// Forgets this leaf's accumulated gradient (the next backward pass starts it afresh), as
    /// PyTorch's `zero_grad(set_to_none=True)`.
    pub fn zero_grad(&self) {
        if let Some(meta) = &self.inner.autograd {
            *meta.grad_slot() = None;
        }
    }

    /// This tensor without autograd history: the same storage (writes through either are seen by
    /// both, and the version counter is shared), not requiring grad.
    pub fn detach(&self) -> Tensor {
        self.clone().with_autograd(None)
    }

    /// Computes the gradient of this one-element tensor with respect to every leaf it was made
    /// from, adding it into each leaf's [`grad`](Tensor::grad).
    ///
    /// Panics with the error of [`Tensor::try_backward`].
    ///
    /// ```
    /// use switchyard::{Tensor, ops};
    /// use switchyard_backends as _; // the kernels
    ///
    /// let mut x = Tensor::vector(&[1.0, 2.0, 3.0]);
    /// x.requires_grad_(true);
    /// let loss = ops::sum(&ops::mul(&x, &x)); // Σ x²
    /// loss.backward();
    /// assert_eq!(x.grad().unwrap().to_vec::<f32>(), [2.0, 4.0, 6.0]); // 2x
    /// ```
    #[track_caller]
    pub fn backward(&self) {
        if let Err(e) = self.try_backward() {
            e.panic()
        }
    }

    /// [`Tensor::backward`]; errors when this tensor does not require grad, has more than one
    /// element, or a derivative fails (a saved tensor modified in place since, an op without a
    /// derivative). On error no leaf's gradient changes.
    pub fn try_backward(&self) -> Result<()> {
        engine::backward(self, None)
    }

    /// The backward pass from this tensor with `grad` as its gradient (its shape, dtype and
    /// device), for a tensor of any shape.
    ///
    /// Panics with the error of [`Tensor::try_backward_with`].
    #[track_caller]
    pub fn backward_with(&self, grad: &Tensor) {
        if let Err(e) = self.try_backward_with(grad) {
            e.panic()
        }
    }

    /// [`Tensor::backward_with`], returning its error.
    pub fn try_backward_with(&self, grad: &Tensor) -> Result<()> {
        engine::backward(self, Some(grad))
    }

    /// Whether this tensor's storage was made inside
    /// [`inference_mode`](crate::autograd::inference_mode): it has no version counter, and
    /// autograd cannot save it for backward.
    pub fn is_inference(&self) -> bool {
        self.storage().is_inference()
    }

    /// This tensor with autograd record `meta` (and the matching autograd key): the same header
    /// when this is its only handle, else a new header over the same layout and storage.
    pub(crate) fn with_autograd(mut self, meta: Option<Arc<AutogradMeta>>) -> Tensor {
        let mut keys = self.keys().difference(DispatchKeySet::AUTOGRAD);
        if meta.is_some() {
            keys |= self.device().autograd_keys();
        }
        if let Some(inner) = self.inner.get_mut() {
            inner.keys = keys;
            inner.autograd = meta;
            return self;
        }
        let mut alias = self.restrided(
            self.numel(),
            self.storage_offset(),
            self.inner.sizes.clone(),
            self.inner.strides.clone(),
        );
        let inner = alias
            .inner
            .get_mut()
            .expect("a header just made has one handle");
        inner.keys = keys;
        inner.autograd = meta;
        alias
    }

    /// `Tensor[2, 3]:f32@cpu`, as errors name a tensor.
    pub(crate) fn summary(&self) -> String {
        format!(
            "Tensor{:?}:{}@{}",
            self.shape(),
            self.dtype_name(),
            self.device()
        )
    }
}
