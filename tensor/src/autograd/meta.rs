//! What autograd keeps: per tensor ([`AutogradMeta`]), per recorded op ([`Node`]), per value a
//! node needs later ([`Saved`]).

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};

use switchyard::{DType, DispatchError};

use crate::{Device, Tensor};

type Result<T> = std::result::Result<T, DispatchError>;

/// Autograd's record of one tensor that requires grad: the node that made it, or, for a leaf
/// (made by the user and marked with [`Tensor::requires_grad_`]), the slot its gradient
/// accumulates in. Shared by the tensor's clones (they are one header); not by its views, which
/// have records of their own.
pub struct AutogradMeta {
    /// The node whose output this tensor is; `None` for a leaf.
    pub(crate) grad_fn: Option<Arc<Node>>,
    /// A leaf's accumulated gradient (`None` until a backward pass reaches it, or after
    /// `zero_grad`).
    pub(crate) grad: Mutex<Option<Tensor>>,
}

impl AutogradMeta {
    pub(crate) fn leaf() -> Arc<AutogradMeta> {
        Arc::new(AutogradMeta {
            grad_fn: None,
            grad: Mutex::new(None),
        })
    }

    pub(crate) fn output_of(node: Arc<Node>) -> Arc<AutogradMeta> {
        Arc::new(AutogradMeta {
            grad_fn: Some(node),
            grad: Mutex::new(None),
        })
    }

    /// The leaf's gradient slot (a poisoned lock still holds a whole `Option<Tensor>`: a panic
    /// cannot leave it half-written).
    pub(crate) fn grad_slot(&self) -> std::sync::MutexGuard<'_, Option<Tensor>> {
        self.grad.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for AutogradMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.grad_fn {
            Some(node) => write!(f, "AutogradMeta {{ grad_fn: {} }}", node.name),
            None => f.write_str("AutogradMeta { leaf }"),
        }
    }
}

/// Where the gradient of one input of a node goes.
#[derive(Clone)]
pub(crate) enum Edge {
    /// Into the backward of the node that made the input.
    Node(Arc<Node>),
    /// Into a leaf's gradient slot.
    Leaf(Arc<AutogradMeta>),
}

/// What a gradient for one input must look like: the input's shape, dtype and device.
#[derive(Clone, Debug)]
pub(crate) struct InputInfo {
    pub(crate) shape: Vec<usize>,
    pub(crate) dtype: DType,
    pub(crate) device: Device,
}

impl InputInfo {
    pub(crate) fn of(x: &Tensor) -> InputInfo {
        InputInfo {
            shape: x.shape().to_vec(),
            dtype: x.dtype(),
            device: x.device(),
        }
    }
}

/// A derivative: from the gradient of the op's output to one gradient per input (`None` where
/// an input needs none).
/// Unwind-safe, so that a tensor stays `UnwindSafe` and `RefUnwindSafe` (it may be caught
/// across `catch_unwind`): a derivative holds no interior mutability a panic could leave torn.
pub(crate) type BackwardFn = Box<dyn Backward>;

/// What [`BackwardFn`] boxes.
pub(crate) trait Backward:
    Fn(&Tensor) -> Result<Vec<Option<Tensor>>> + Send + Sync + RefUnwindSafe + UnwindSafe + 'static
{
}

impl<F> Backward for F where
    F: Fn(&Tensor) -> Result<Vec<Option<Tensor>>>
        + Send
        + Sync
        + RefUnwindSafe
        + UnwindSafe
        + 'static
{
}

/// One recorded op: where its inputs' gradients go and how to compute them.
pub(crate) struct Node {
    /// The op's name, for errors and `grad_fn()`.
    pub(crate) name: &'static str,
    /// Per input: where its gradient goes (`None`: the input does not require grad).
    pub(crate) edges: Vec<Option<Edge>>,
    /// Per input: what its gradient must look like.
    pub(crate) inputs: Vec<InputInfo>,
    pub(crate) backward: BackwardFn,
}

/// Frees the nodes this one alone keeps alive one after another, not by recursion: a graph can
/// be a chain as long as the loop that made it (a loss summed over many steps), and dropping it
/// node within node would overflow the thread's stack, an abort.
impl Drop for Node {
    fn drop(&mut self) {
        let mut orphans: Vec<Arc<Node>> = Vec::new();
        take_node_edges(&mut self.edges, &mut orphans);
        while let Some(node) = orphans.pop() {
            // The last handle on `node`: empty its edges here, so its own drop has nothing to
            // follow. Another handle elsewhere keeps it (and what it leads to) alive.
            if let Some(mut node) = Arc::into_inner(node) {
                take_node_edges(&mut node.edges, &mut orphans);
            }
        }
    }
}

/// Moves the node handles out of `edges` into `into`.
fn take_node_edges(edges: &mut Vec<Option<Edge>>, into: &mut Vec<Arc<Node>>) {
    for edge in edges.drain(..).flatten() {
        if let Edge::Node(node) = edge {
            into.push(node);
        }
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Backward", self.name)
    }
}

/// A tensor a derivative needs, with the storage version it had when saved: an in-place write
/// since makes the backward pass fail (naming the op and both versions) instead of computing
/// with changed values. What a derivative kernel saves (see [`record`](crate::autograd::record)).
pub struct SavedTensor {
    op: &'static str,
    /// Detached (no autograd record, so a node saving its own output makes no cycle), sharing
    /// the storage and its version counter.
    tensor: Tensor,
    version: u64,
}

impl SavedTensor {
    /// Saves `x` for `op`'s derivative (a handle on its storage, without its history). An
    /// inference tensor has no version counter, so it cannot be saved (as in c10): an error.
    pub fn new(op: &'static str, x: &Tensor) -> Result<SavedTensor> {
        if x.is_inference() {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "an inference tensor ({}, made inside `inference_mode`) cannot be saved for \
                     backward: it has no version counter; make it outside inference mode",
                    x.summary()
                ),
            ));
        }
        Ok(SavedTensor {
            op,
            tensor: x.detach(),
            version: x.version(),
        })
    }

    /// The saved tensor, or the error that says it was modified in place since.
    pub fn get(&self) -> Result<&Tensor> {
        let now = self.tensor.version();
        if now != self.version {
            return Err(DispatchError::kernel(
                self.op,
                format!(
                    "a tensor that the derivative of `{}` needs ({}) was modified by an in-place \
                     operation after it was saved: saved at version {}, now at version {now}; \
                     use the out-of-place op, or modify it after `backward()`",
                    self.op,
                    self.tensor.summary(),
                    self.version
                ),
            ));
        }
        Ok(&self.tensor)
    }
}

impl fmt::Debug for SavedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SavedTensor {{ op: {}, tensor: {}, version: {} }}",
            self.op,
            self.tensor.summary(),
            self.version
        )
    }
}
