//! The backward pass: from a tensor's gradient to the gradients of the leaves it was made from.

use std::collections::HashMap;
use std::sync::Arc;

use switchyard::DispatchError;

use crate::Tensor;
use crate::autograd::meta::{AutogradMeta, Edge, InputInfo, Node};
use crate::autograd::no_grad;
use crate::ops;

type Result<T> = std::result::Result<T, DispatchError>;

const OP: &str = "backward";

/// Runs the backward pass from `root` with gradient `seed` (ones for a one-element root when
/// `None`) and accumulates into the leaves' gradients. Nothing is accumulated unless the whole
/// pass succeeds. The graph is kept, so a second pass over it works (and accumulates again).
pub(crate) fn backward(root: &Tensor, seed: Option<&Tensor>) -> Result<()> {
    let Some(meta) = root.inner.autograd.as_ref() else {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "{} does not require grad and has no backward node: mark its leaves with \
                 `requires_grad_(true)` before computing it (and outside `no_grad`)",
                root.summary()
            ),
        ));
    };
    let _no_grad = no_grad();
    let grad = match seed {
        Some(seed) => {
            check_gradient("the given gradient", seed, &InputInfo::of(root))?;
            seed.clone()
        }
        None if root.numel() == 1 => ops::try_full(root.shape(), 1.0, root.dtype(), root.device())?,
        None => {
            return Err(DispatchError::kernel(
                OP,
                format!(
                    "a gradient can be implied only for a one-element tensor; {} has {} \
                     elements: reduce it (`sum`, `mean`) or pass its gradient to `backward_with`",
                    root.summary(),
                    root.numel()
                ),
            ));
        }
    };
    let mut leaves = LeafGradients::default();
    match &meta.grad_fn {
        None => leaves.add(meta, grad)?,
        Some(node) => run(node, grad, &mut leaves)?,
    }
    leaves.accumulate()
}

/// A node's identity while a pass runs (its `Arc` keeps it alive).
fn id(node: &Arc<Node>) -> *const Node {
    Arc::as_ptr(node)
}

/// Runs every node reachable from `root`, each once all the nodes that feed it gradients have
/// run (counted first), in that order.
fn run(root: &Arc<Node>, grad: Tensor, leaves: &mut LeafGradients) -> Result<()> {
    let mut waiting_for = HashMap::<*const Node, usize>::new();
    let mut stack = vec![Arc::clone(root)];
    let mut seen = std::collections::HashSet::from([id(root)]);
    while let Some(node) = stack.pop() {
        for edge in node.edges.iter().flatten() {
            if let Edge::Node(next) = edge {
                *waiting_for.entry(id(next)).or_default() += 1;
                if seen.insert(id(next)) {
                    stack.push(Arc::clone(next));
                }
            }
        }
    }
    let mut gradients = HashMap::from([(id(root), grad)]);
    let mut ready = vec![Arc::clone(root)];
    while let Some(node) = ready.pop() {
        let Some(grad) = gradients.remove(&id(&node)) else {
            continue; // unreachable: a node becomes ready with its gradient summed
        };
        let grads = call_derivative(&node, &grad)?;
        if grads.len() != node.edges.len() {
            return Err(DispatchError::kernel(
                node.name,
                format!(
                    "the derivative of `{}` returned {} gradients for {} inputs",
                    node.name,
                    grads.len(),
                    node.edges.len()
                ),
            ));
        }
        for (index, ((edge, grad), info)) in
            node.edges.iter().zip(grads).zip(&node.inputs).enumerate()
        {
            let Some(edge) = edge else { continue };
            let Some(grad) = grad else {
                return Err(DispatchError::kernel(
                    node.name,
                    format!(
                        "the derivative of `{}` gave no gradient for its input {index}, which \
                         requires grad",
                        node.name
                    ),
                ));
            };
            let what = format!("the gradient of `{}`'s input {index}", node.name);
            check_gradient(&what, &grad, info)?;
            match edge {
                Edge::Leaf(meta) => leaves.add(meta, grad)?,
                Edge::Node(next) => {
                    let summed = match gradients.remove(&id(next)) {
                        Some(earlier) => ops::try_add(&earlier, &grad)?,
                        None => grad,
                    };
                    gradients.insert(id(next), summed);
                    let count = waiting_for.entry(id(next)).or_default();
                    *count -= 1;
                    if *count == 0 {
                        ready.push(Arc::clone(next));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Runs `node`'s derivative on `grad`. A derivative that panics (a bug in a downstream one) is
/// an error of the pass like any other, so `try_backward` returns it and no gradient is added;
/// derivatives are unwind-safe by their bound (`meta::Backward`), so nothing they touch is left
/// torn.
fn call_derivative(node: &Node, grad: &Tensor) -> Result<Vec<Option<Tensor>>> {
    match std::panic::catch_unwind(|| (node.backward)(grad)) {
        Ok(result) => result.map_err(|e| in_backward_of(node, e)),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic without a message");
            Err(DispatchError::kernel(
                node.name,
                format!(
                    "in the backward pass, the derivative of `{}` panicked: {message}",
                    node.name
                ),
            ))
        }
    }
}

/// An error of a derivative, said to have happened in the backward pass.
fn in_backward_of(node: &Node, error: DispatchError) -> DispatchError {
    DispatchError::kernel(
        node.name,
        format!(
            "in the backward pass, the derivative of `{}` failed: {error}",
            node.name
        ),
    )
}

/// A gradient must have its input's shape, dtype and device: autograd never broadcasts,
/// converts or moves one silently.
fn check_gradient(what: &str, grad: &Tensor, info: &InputInfo) -> Result<()> {
    if grad.shape() == info.shape && grad.dtype() == info.dtype && grad.device() == info.device {
        return Ok(());
    }
    Err(DispatchError::kernel(
        OP,
        format!(
            "{what} is {}, but the tensor it is for is Tensor{:?}:{}@{}",
            grad.summary(),
            info.shape,
            info.dtype,
            info.device
        ),
    ))
}

/// The leaves' gradients of one pass, summed, applied only at its end.
#[derive(Default)]
struct LeafGradients {
    grads: HashMap<*const AutogradMeta, (Arc<AutogradMeta>, Tensor)>,
}

impl LeafGradients {
    fn add(&mut self, meta: &Arc<AutogradMeta>, grad: Tensor) -> Result<()> {
        match self.grads.get_mut(&Arc::as_ptr(meta)) {
            Some((_, sum)) => *sum = ops::try_add(sum, &grad)?,
            None => {
                self.grads
                    .insert(Arc::as_ptr(meta), (Arc::clone(meta), grad));
            }
        }
        Ok(())
    }

    /// Adds each gradient into its leaf's, computing every sum before writing any. Every slot
    /// stays locked from its read to its write (locks taken in address order, so two passes
    /// never wait for each other in a cycle): a pass on another thread adding to the same leaf
    /// waits instead of losing its gradient or this one's.
    fn accumulate(self) -> Result<()> {
        let mut grads: Vec<(Arc<AutogradMeta>, Tensor)> = self.grads.into_values().collect();
        grads.sort_by_key(|(meta, _)| Arc::as_ptr(meta));
        let mut slots: Vec<_> = grads.iter().map(|(meta, _)| meta.grad_slot()).collect();
        let mut sums = Vec::with_capacity(grads.len());
        for ((_, grad), slot) in grads.iter().zip(&slots) {
            sums.push(match &**slot {
                Some(earlier) => ops::try_add(earlier, grad)?,
                None => grad.clone(),
            });
        }
        for (slot, sum) in slots.iter_mut().zip(sums) {
            **slot = Some(sum);
        }
        Ok(())
    }
}
