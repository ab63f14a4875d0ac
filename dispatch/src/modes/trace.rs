//! Tracing: `trace(|| loss(&x, &y))` records the graph of the top-level ops called.

use std::cell::RefCell;
use std::fmt::{self, Write as _};

use crate::boxing::BoxedTensor;
use crate::error::location_here;
use crate::registry::{FallbackRegistration, KernelMeta};
use crate::{
    DispatchError, DispatchKey, DispatchKeySet, OpHandle, Stack, Value, include, with_excluded,
};

/// One recorded op call: its name, and its inputs and outputs described by shape and device.
#[derive(Clone, Debug, PartialEq)]
pub struct TracedCall {
    /// The op's name.
    pub op: &'static str,
    /// Each argument: `%n` for a tensor an earlier traced call produced, else
    /// `Tensor[2, 3]:f32@cpu`, or the value itself for scalars.
    pub inputs: Vec<String>,
    /// The result, described like the inputs; then, for an op with `&mut` parameters, each
    /// written argument as the call left it (`%n`: a tensor the trace has seen, the result
    /// included, or a new one, which takes the next number here).
    pub outputs: Vec<String>,
    /// The result's value number (`%n`) if it is a tensor.
    pub id: Option<usize>,
    /// Where each argument came from, for [`Graph::to_dot`].
    pub(super) sources: Vec<Source>,
}

/// Where an argument of a traced call came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// The tensor `%n`, which an earlier traced call produced.
    Produced(usize),
    /// A tensor from outside the trace: the closure's `n`-th distinct input tensor.
    Input(usize),
    /// Not a tensor.
    Value,
}

/// The ops a traced closure called, in call order. Displays as one line per call:
/// `%1 = mul(%0, Tensor[3]:f32@cpu) -> Tensor[3]:f32@cpu`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    /// The calls, in order.
    pub calls: Vec<TracedCall>,
}

impl Graph {
    /// The names of the ops called, in order.
    pub fn op_names(&self) -> Vec<&'static str> {
        self.calls.iter().map(|c| c.op).collect()
    }
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for call in &self.calls {
            let mut line = String::new();
            if let Some(id) = call.id {
                let _ = write!(line, "%{id} = ");
            }
            let _ = write!(
                line,
                "{}({}) -> {}",
                call.op,
                call.inputs.join(", "),
                call.outputs.join(", ")
            );
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// A trace being recorded: the calls so far, and the tensors they produced (to name them `%n`).
#[derive(Default)]
struct Recorder {
    graph: Graph,
    /// Kept alive while the trace records, so that no other tensor can reuse their addresses.
    produced: Vec<BoxedTensor>,
    /// The tensors from outside the trace that calls took, in order of first use; kept alive
    /// for the same reason.
    inputs: Vec<BoxedTensor>,
}

impl Recorder {
    fn describe(&self, value: &Value) -> String {
        match value {
            Value::Tensor(t) => match self.produced.iter().position(|p| p.same(t)) {
                Some(id) => format!("%{id}"),
                None => t.to_string(),
            },
            other => other.to_string(),
        }
    }

    /// Where `value` came from, numbering a tensor from outside the trace at its first use.
    fn source(&mut self, value: &Value) -> Source {
        let Value::Tensor(t) = value else {
            return Source::Value;
        };
        if let Some(id) = self.produced.iter().position(|p| p.same(t)) {
            return Source::Produced(id);
        }
        match self.inputs.iter().position(|p| p.same(t)) {
            Some(n) => Source::Input(n),
            None => {
                self.inputs.push(t.clone());
                Source::Input(self.inputs.len() - 1)
            }
        }
    }
}

thread_local! {
    /// Nested `trace` calls each record into their own recorder; the innermost is last.
    static RECORDERS: RefCell<Vec<Recorder>> = const { RefCell::new(Vec::new()) };
}

/// Records every op called at top level inside the thread's innermost `trace`, then runs it.
/// Ops called by the op's own kernels run with `BuiltinTrace` excluded, so they are not recorded
/// again.
fn record_call(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    let (inputs, sources): (Vec<String>, Vec<Source>) = RECORDERS
        .try_with(|r| match r.borrow_mut().last_mut() {
            Some(recorder) => stack
                .top(op.arity())
                .iter()
                .map(|v| (recorder.describe(v), recorder.source(v)))
                .unzip(),
            None => (Vec::new(), Vec::new()),
        })
        .unwrap_or_default();
    let base = stack.len().saturating_sub(op.arity());
    with_excluded(DispatchKey::BuiltinTrace, || {
        op.redispatch_boxed(keys.below(DispatchKey::BuiltinTrace), stack)
    })?;
    let _ = RECORDERS.try_with(|r| {
        if let Some(recorder) = r.borrow_mut().last_mut() {
            // The call left the written value of each `&mut` argument, then the result on top.
            let (result, written) = match stack.values().get(base..).and_then(<[Value]>::split_last)
            {
                Some((result, written)) => (Some(result), written),
                None => (None, &[][..]),
            };
            let mut outputs: Vec<String> =
                result.map(|v| recorder.describe(v)).into_iter().collect();
            let id = match result {
                Some(Value::Tensor(t)) => {
                    recorder.produced.push(t.clone());
                    Some(recorder.produced.len() - 1)
                }
                _ => None,
            };
            // A written argument that is a tensor the trace has not seen (a replaced handle)
            // gets the next number, so that later calls reading it link to this one.
            for value in written {
                if let Value::Tensor(t) = value
                    && !recorder.produced.iter().any(|p| p.same(t))
                {
                    recorder.produced.push(t.clone());
                }
                outputs.push(recorder.describe(value));
            }
            recorder.graph.calls.push(TracedCall {
                op: op.name(),
                inputs,
                outputs,
                id,
                sources,
            });
        }
    });
    Ok(())
}

// At the library's own key, so that `Tracing` stays free for users' modes.
#[allow(unsafe_code)] // linkme's `link_section`
#[cfg_attr(
    not(target_family = "wasm"),
    linkme::distributed_slice(crate::registry::SWITCHYARD_FALLBACKS)
)]
static RECORD_CALL: FallbackRegistration = FallbackRegistration::builtin(
    DispatchKey::BuiltinTrace,
    record_call,
    KernelMeta::new("record_call", location_here!()),
);
#[cfg(target_family = "wasm")]
crate::__switchyard_submit!(crate::registry::SWITCHYARD_FALLBACKS, RECORD_CALL);

/// Pops the recorder even if the traced closure panics.
struct RecorderScope;

impl Drop for RecorderScope {
    fn drop(&mut self) {
        let _ = RECORDERS.try_with(|r| r.borrow_mut().pop());
    }
}

/// Runs `f` with tracing on and returns its result with the graph of the top-level ops it called
/// (name, input and output shapes and devices).
///
/// Called from a thread-local destructor after this thread's trace state was destroyed, it runs
/// `f` untraced and returns an empty graph.
///
/// ```
/// use switchyard::ops::{mean, mul};
/// use switchyard::{Tensor, trace};
/// use switchyard_backends as _;
///
/// let (x, y) = (Tensor::vector(&[1.0, 2.0]), Tensor::vector(&[3.0, 4.0]));
/// let (loss, graph) = trace(|| mean(&mul(&x, &y)));
/// assert_eq!(loss.to_vec::<f32>(), [5.5]);
/// assert_eq!(graph.op_names(), ["switchyard::mul", "switchyard::mean"]);
/// assert_eq!(
///     graph.to_string(),
///     "%0 = switchyard::mul(Tensor[2]:f32@cpu, Tensor[2]:f32@cpu) -> Tensor[2]:f32@cpu\n\
///      %1 = switchyard::mean(%0) -> Tensor[]:f32@cpu\n"
/// );
/// ```
pub fn trace<R>(f: impl FnOnce() -> R) -> (R, Graph) {
    // In a thread-local destructor, after this thread's recorders were destroyed, there is
    // nowhere to record: `f` runs untraced and the graph is empty.
    if RECORDERS
        .try_with(|r| r.borrow_mut().push(Recorder::default()))
        .is_err()
    {
        return (f(), Graph::default());
    }
    let scope = RecorderScope;
    let value = {
        let _tracing = include(DispatchKey::BuiltinTrace);
        f()
    };
    let graph = RECORDERS.try_with(|r| {
        r.borrow_mut()
            .last_mut()
            .map(|rec| std::mem::take(&mut rec.graph))
    });
    drop(scope);
    (value, graph.ok().flatten().unwrap_or_default())
}
