//! What a derivative kernel uses: the keys below autograd, the inputs' edges, recording a node,
//! and fitting a gradient to its input (undoing a broadcast and a promotion).

use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use switchyard::{AliasKey, DispatchError, DispatchKeySet};

use crate::Tensor;
use crate::autograd::meta::{AutogradMeta, Edge, InputInfo, Node};
use crate::ops;

type Result<T> = std::result::Result<T, DispatchError>;

/// The keys a derivative kernel continues with: the call's, below every autograd key.
#[inline]
pub(crate) fn below(keys: DispatchKeySet) -> DispatchKeySet {
    keys.below(AliasKey::Autograd)
}

/// Runs `f`, an autograd kernel's call below autograd, with autograd off on this thread: ops that
/// the backend's kernel calls in turn (a composite, a kernel built from other ops) must not
/// record nodes of their own, as PyTorch's `AutoDispatchBelowAutograd` guard ensures.
#[inline]
pub fn run_below<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    let _below = crate::autograd::no_grad();
    f()
}

/// Where `x`'s gradient goes, if it requires grad.
fn edge(x: &Tensor) -> Option<Edge> {
    let meta = x.inner.autograd.as_ref()?;
    Some(match &meta.grad_fn {
        Some(node) => Edge::Node(Arc::clone(node)),
        None => Edge::Leaf(Arc::clone(meta)),
    })
}

/// Whether any of `inputs` requires grad (so the call must be recorded).
pub(crate) fn any_requires_grad(inputs: &[&Tensor]) -> bool {
    inputs.iter().any(|x| x.requires_grad())
}

/// `out`, recorded as `op`'s result on `inputs` with derivative `backward`: the output's
/// gradient → one gradient per input (each of its input's shape, dtype and device; `None` for
/// an input that does not require grad, and only for such). What an autograd kernel returns.
/// An output that cannot require grad (not a float tensor), or inputs none of which requires
/// grad, are not recorded: `out` comes back as it was.
///
/// `backward` runs under [`no_grad`](crate::autograd::no_grad), once per backward pass; the
/// tensors it needs are captured as [`SavedTensor`](crate::autograd::SavedTensor)s. It must be
/// unwind-safe (no `Cell` or `RefCell` inside), so that tensors stay `UnwindSafe`.
///
/// ```
/// use switchyard::autograd::{self, SavedTensor};
/// use switchyard::{AliasKey, DispatchKeySet, Tensor, kernel, op, ops};
/// use switchyard_backends as _; // the kernels
///
/// #[op(name = "docs::square")]
/// pub fn square(x: &Tensor) -> Tensor {
///     ops::try_mul(x, x)
/// }
///
/// // Without this, autograd would differentiate the body (`mul`); a kernel of its own wins.
/// #[kernel(op = "square", key = Autograd)]
/// fn square_autograd(keys: DispatchKeySet, x: &Tensor) -> switchyard::Result<Tensor> {
///     let out = square::redispatch(keys.below(AliasKey::Autograd), x)?;
///     let saved = SavedTensor::new("docs::square", x)?;
///     Ok(autograd::record("docs::square", &[x], out, move |g| {
///         let x = saved.get()?;
///         let two_x = ops::try_add(x, x)?;
///         Ok(vec![Some(ops::try_mul(g, &two_x)?)])
///     }))
/// }
///
/// fn main() {
///     let mut x = Tensor::vector(&[3.0]);
///     x.requires_grad_(true);
///     ops::sum(&square(&x)).backward();
///     assert_eq!(x.grad().unwrap().to_vec::<f32>(), [6.0]);
/// }
/// ```
pub fn record(
    op: &'static str,
    inputs: &[&Tensor],
    out: Tensor,
    backward: impl Fn(&Tensor) -> Result<Vec<Option<Tensor>>>
    + Send
    + Sync
    + RefUnwindSafe
    + UnwindSafe
    + 'static,
) -> Tensor {
    if !out.dtype().is_float() || !any_requires_grad(inputs) {
        return out;
    }
    let node = Node {
        name: op,
        edges: inputs.iter().map(|x| edge(x)).collect(),
        inputs: inputs.iter().map(|x| InputInfo::of(x)).collect(),
        backward: Box::new(backward),
    };
    out.with_autograd(Some(AutogradMeta::output_of(Arc::new(node))))
}

/// `grad` made to fit an input described by `info`: summed over the dimensions the input was
/// broadcast along, converted to its dtype. (Devices always match: an op's inputs share one.)
pub(crate) fn fit(grad: Tensor, info: &InputInfo) -> Result<Tensor> {
    let grad = sum_to(grad, &info.shape)?;
    if grad.dtype() == info.dtype {
        return Ok(grad);
    }
    ops::try_to_dtype(&grad, info.dtype)
}

/// `grad` summed to `shape`, which broadcasts to `grad`'s shape: over its leading dimensions,
/// and over each dimension where `shape` has extent 1 and `grad` more. What the gradient of a
/// broadcast operand is.
pub fn sum_to(grad: Tensor, shape: &[usize]) -> Result<Tensor> {
    if grad.shape() == shape {
        return Ok(grad);
    }
    let Some(lead) = grad.dim().checked_sub(shape.len()) else {
        return Err(DispatchError::shape(
            "backward",
            format!(
                "a gradient of shape {:?} cannot be summed to shape {shape:?}",
                grad.shape()
            ),
        ));
    };
    let dims: Vec<isize> = (0..grad.dim())
        .filter(|&d| d < lead || (shape[d - lead] == 1 && grad.shape()[d] != 1))
        .map(|d| d as isize)
        .collect();
    let summed = if dims.is_empty() {
        grad
    } else {
        ops::try_sum_dim(&grad, &dims, true)?
    };
    let shape: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    ops::try_reshape(&summed, &shape)
}

/// Information about `x` for a derivative that needs only its shape, dtype and device.
pub(crate) fn info(x: &Tensor) -> InputInfo {
    InputInfo::of(x)
}
