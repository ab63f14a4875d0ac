//! The stack a boxed call passes arguments and results on.

use std::cell::Cell;

use super::value::Value;
use crate::error::{DispatchError, ErrorKind};

/// The arguments of a boxed call, in order; after the call, its result.
///
/// A boxed kernel pops its op's arguments off the top and pushes the result, as PyTorch's do.
///
/// **Written arguments.** A parameter of type `&mut T` is an in/out argument. It goes in as
/// `T`'s boxed value, in its place among the arguments, like any other. A boxed kernel of such
/// an op pops the arguments and pushes the *written value* of each `&mut` argument (its value
/// after the call, in parameter order), then the result on top: the call replaces its `n`
/// arguments with `w + 1` values, `w` the number of `&mut` parameters. For
/// `add_(x: &mut T, y: &T) -> T`, `[x, y]` becomes `[x', result]`. So:
///
/// - a fallback writes the argument by replacing its slot before it redispatches (the kernel
///   below sees the new value, and hands back what it makes of it), by replacing the written
///   value after the redispatch (at the index where the arguments began), or, if it computes
///   the op itself, by pushing the written values before the result;
/// - a typed caller that reached the fallback (`add_(&mut x, &y)`) gets the written value in
///   `x` once the whole call succeeded: the written values and the result are all unboxed first,
///   and only then is `x` assigned. On an error (the call's, or a written value or result of the
///   wrong type or missing) `x` is unchanged; a stack of the wrong length is an error naming the
///   values it should hold. What a boxed caller's stack holds after an error is unspecified.
/// - A tensor whose handle shares its storage (a clone of the handle sees the same data) shows
///   an in-place write of its data through any clone, written back or not; the written value is
///   for a kernel or fallback that replaces the handle itself (`*x = new`).
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

    /// Checks that a boxed call of an op with `&mut` parameters left exactly their written
    /// values (`written` names the parameters, in order) and the result.
    pub(crate) fn check_written(
        &self,
        op: &'static str,
        written: &[&'static str],
    ) -> Result<(), DispatchError> {
        if self.values.len() != written.len() + 1 {
            return Err(self.written_error(op, written));
        }
        Ok(())
    }

    #[cold]
    fn written_error(&self, op: &'static str, written: &[&'static str]) -> DispatchError {
        let names: Vec<String> = written.iter().map(|name| format!("`{name}`")).collect();
        let values = |n: usize| if n == 1 { "value" } else { "values" };
        DispatchError::kernel(
            op,
            format!(
                "a boxed kernel left {} {} on the stack; expected {}: the written {} of {}, then the result",
                self.values.len(),
                values(self.values.len()),
                written.len() + 1,
                values(written.len()),
                names.join(", "),
            ),
        )
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
