//! The stack a boxed call passes arguments and results on.

use std::cell::Cell;

use super::value::Value;
use crate::error::{DispatchError, ErrorKind};

/// The arguments of a boxed call, in order; after the call, its result.
///
/// A boxed kernel pops its op's arguments off the top and pushes the result, as PyTorch's do.
#[derive(Clone, Debug, Default)]
pub struct Stack {
    values: Vec<Value>,
}

thread_local! {
    /// One spare buffer per thread: a typed call that is boxed for a fallback takes it and gives
    /// it back, so the boxed path does not allocate per call.
    static SPARE: Cell<Vec<Value>> = const { Cell::new(Vec::new()) };
}

/// Buffers above this capacity are not kept, so one huge call does not pin its memory.
const SPARE_CAPACITY: usize = 16;

impl Stack {
    /// An empty stack (reusing this thread's spare buffer when there is one).
    pub fn new() -> Self {
        Stack {
            // `try_with`: in a thread-local destructor the spare may already be destroyed; then
            // the stack starts with a fresh buffer.
            values: SPARE.try_with(Cell::take).unwrap_or_default(),
        }
    }

    /// Pushes one value.
    pub fn push(&mut self, value: impl Into<Value>) {
        self.values.push(value.into());
    }

    /// Pops the top value.
    pub fn pop(&mut self) -> Option<Value> {
        self.values.pop()
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the stack is empty.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values, bottom first.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// The values, bottom first, to inspect or rewrite in place.
    pub fn values_mut(&mut self) -> &mut [Value] {
        &mut self.values
    }

    /// The top `n` values (the last `n` pushed), or all of them if there are fewer.
    pub fn top(&self, n: usize) -> &[Value] {
        &self.values[self.values.len().saturating_sub(n)..]
    }

    /// Removes every value.
    pub fn clear(&mut self) {
        self.values.clear();
    }

    /// Checks that the stack holds at least an op's `arity` arguments; fewer is the op's arity
    /// error. Then `pop_arg` takes them, last first. (Generated code calls it through
    /// `__private_v1`.)
    pub(crate) fn check_args(
        &self,
        arity: usize,
        op: &'static str,
        schema: &'static str,
    ) -> Result<(), DispatchError> {
        if self.values.len() < arity {
            return Err(self.arity_error(arity, op, schema));
        }
        Ok(())
    }

    /// Checks that the stack holds exactly an op's `arity` arguments: what a top-level boxed
    /// call must pass.
    pub(crate) fn check_exact_args(
        &self,
        arity: usize,
        op: &'static str,
        schema: &'static str,
    ) -> Result<(), DispatchError> {
        if self.values.len() != arity {
            return Err(self.arity_error(arity, op, schema));
        }
        Ok(())
    }

    #[cold]
    fn arity_error(&self, arity: usize, op: &'static str, schema: &'static str) -> DispatchError {
        DispatchError::new(ErrorKind::BoxedArity {
            op,
            schema,
            expected: arity,
            found: self.values.len(),
        })
    }

    /// Pops one argument checked by `check_args` (`Value::None` if there is none).
    #[inline]
    pub(crate) fn pop_arg(&mut self) -> Value {
        match self.values.pop() {
            Some(value) => value,
            None => Value::None,
        }
    }

    /// Pops the result a kernel pushed.
    pub(crate) fn pop_result(&mut self, op: &'static str) -> Result<Value, DispatchError> {
        self.values.pop().ok_or_else(|| {
            DispatchError::kernel(op, "a boxed kernel returned without pushing its result")
        })
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if self.values.capacity() == 0 || self.values.capacity() > SPARE_CAPACITY {
            return;
        }
        self.values.clear();
        let buffer = std::mem::take(&mut self.values);
        // `try_with`: during thread teardown the spare may be gone; then the buffer just drops.
        let _ = SPARE.try_with(|spare| spare.replace(buffer));
    }
}

impl From<Vec<Value>> for Stack {
    fn from(values: Vec<Value>) -> Self {
        Stack { values }
    }
}

impl FromIterator<Value> for Stack {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Self {
        Stack {
            values: iter.into_iter().collect(),
        }
    }
}

macro_rules! value_from {
    ($($ty:ty => $variant:ident),*) => {$(
        impl From<$ty> for Value {
            fn from(value: $ty) -> Self {
                Value::$variant(value.into())
            }
        }
    )*};
}

value_from!(
    bool => Bool,
    i64 => Int,
    i32 => Int,
    f64 => Float,
    f32 => Float,
    String => Str,
    &str => Str
);
