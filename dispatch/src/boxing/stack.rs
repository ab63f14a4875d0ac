//! The stack a boxed call passes arguments and results on.

use std::fmt;
use std::mem::MaybeUninit;

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
pub struct Stack {
    /// While `spilled` is `None`, the values: `inline[..len]` are initialised, the rest are not.
    inline: [MaybeUninit<Value>; INLINE],
    len: usize,
    /// Every value, once more than `INLINE` were on the stack at once (or the stack was made
    /// from a `Vec`); `len` is then 0.
    spilled: Option<Vec<Value>>,
}

/// How many values a stack holds without allocating: an op's arguments, or the written values
/// and the result after the call. A typed call boxed for a fallback (`__via_boxed`) makes its
/// stack in its own frame, so it neither allocates nor touches a thread-local.
const INLINE: usize = 6;

impl Stack {
    /// An empty stack. It holds a few values without allocating.
    #[inline]
    pub fn new() -> Self {
        Stack {
            inline: [const { MaybeUninit::uninit() }; INLINE],
            len: 0,
            spilled: None,
        }
    }

    /// Pushes one value.
    #[inline]
    pub fn push(&mut self, value: impl Into<Value>) {
        self.push_value(value.into());
    }

    /// Writes `value` to the next slot. The slot is chosen first and the value written once,
    /// in place: a value built in a temporary and copied would be read back wider than it was
    /// written, which stalls the CPU's store forwarding.
    #[inline]
    #[allow(unsafe_code)] // counts a written heap slot; see the SAFETY line
    fn push_value(&mut self, value: Value) {
        let inline = self.spilled.is_none() && self.len < INLINE;
        let slot = match self.inline.get_mut(self.len) {
            Some(slot) if inline => slot,
            _ => self.heap_slot(),
        };
        slot.write(value);
        match &mut self.spilled {
            None => self.len += 1,
            // SAFETY: the values are spilled, so the slot came from `heap_slot` (the inline
            // slot is taken only while they are not, and writing it spills nothing): the slot
            // at `values.len()`, reserved there and written just above, so the first
            // `len + 1` elements are initialised.
            Some(values) => unsafe { values.set_len(values.len() + 1) },
        }
    }

    /// The next free slot on the heap, moving the values there first if they are still
    /// inline: where a push goes that does not fit.
    #[cold]
    #[inline(never)]
    fn heap_slot(&mut self) -> &mut MaybeUninit<Value> {
        if self.spilled.is_none() {
            let mut values = Vec::with_capacity(2 * INLINE);
            while let Some(value) = self.pop_inline() {
                values.push(value);
            }
            values.reverse();
            self.spilled = Some(values);
        }
        let values = self.spilled.get_or_insert_default();
        values.reserve(1);
        &mut values.spare_capacity_mut()[0]
    }

    /// Pops the top inline value (`None` when there is none, or the values are spilled).
    #[inline]
    #[allow(unsafe_code)] // moves a value out of its slot; see the SAFETY line
    fn pop_inline(&mut self) -> Option<Value> {
        let len = self.len.checked_sub(1)?;
        let slot = self.inline.get(len)?;
        self.len = len;
        // SAFETY: `inline[..len]` are initialised (the field's invariant), so the slot at the
        // old `len - 1` is; `len` no longer counts it, so the value is read out exactly once and
        // the slot is left as uninitialised.
        Some(unsafe { slot.assume_init_read() })
    }

    /// Pops the top value.
    #[inline]
    pub fn pop(&mut self) -> Option<Value> {
        match &mut self.spilled {
            Some(values) => values.pop(),
            None => self.pop_inline(),
        }
    }

    /// The number of values.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.spilled {
            Some(values) => values.len(),
            None => self.len,
        }
    }

    /// Whether the stack is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values, bottom first.
    #[inline]
    #[allow(unsafe_code)] // views the initialised slots as values; see the SAFETY line
    pub fn values(&self) -> &[Value] {
        match &self.spilled {
            Some(values) => values,
            // SAFETY: `inline[..len]` are initialised (the field's invariant), and the borrow of
            // `self` keeps them so.
            None => unsafe { self.inline[..self.len].assume_init_ref() },
        }
    }

    /// The values, bottom first, to inspect or rewrite in place.
    #[inline]
    #[allow(unsafe_code)] // views the initialised slots as values; see the SAFETY line
    pub fn values_mut(&mut self) -> &mut [Value] {
        match &mut self.spilled {
            Some(values) => values,
            // SAFETY: `inline[..len]` are initialised (the field's invariant); what the caller
            // writes through the slice are values, so they stay initialised.
            None => unsafe { self.inline[..self.len].assume_init_mut() },
        }
    }

    /// The top `n` values (the last `n` pushed), or all of them if there are fewer.
    pub fn top(&self, n: usize) -> &[Value] {
        let values = self.values();
        &values[values.len().saturating_sub(n)..]
    }

    /// Removes every value.
    #[allow(unsafe_code)] // drops the initialised slots; see the SAFETY line
    pub fn clear(&mut self) {
        match &mut self.spilled {
            Some(values) => values.clear(),
            None => {
                let len = std::mem::take(&mut self.len);
                // SAFETY: `inline[..len]` were initialised (the field's invariant) and `len` no
                // longer counts them, so each is dropped exactly once and is then uninitialised.
                // (Were a drop to panic, the rest would leak, never drop twice.)
                unsafe { self.inline[..len].assume_init_drop() }
            }
        }
    }

    /// Checks that the stack holds at least an op's `arity` arguments; fewer is the op's arity
    /// error. Then `pop_arg` takes them, last first. (Generated code calls it through
    /// `__private_v1`.)
    #[inline]
    pub(crate) fn check_args(
        &self,
        arity: usize,
        op: &'static str,
        schema: &'static str,
    ) -> Result<(), DispatchError> {
        if self.len() < arity {
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
        if self.len() != arity {
            return Err(self.arity_error(arity, op, schema));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn arity_error(&self, arity: usize, op: &'static str, schema: &'static str) -> DispatchError {
        DispatchError::new(ErrorKind::BoxedArity {
            op,
            schema,
            expected: arity,
            found: self.len(),
        })
    }

    /// Pops one argument checked by `check_args` (`Value::None` if there is none).
    #[inline]
    pub(crate) fn pop_arg(&mut self) -> Value {
        match self.pop() {
            Some(value) => value,
            None => Value::None,
        }
    }

    /// Checks that a boxed call of an op with `&mut` parameters left exactly their written
    /// values (`written` names the parameters, in order) and the result.
    #[inline]
    pub(crate) fn check_written(
        &self,
        op: &'static str,
        written: &[&'static str],
    ) -> Result<(), DispatchError> {
        if self.len() != written.len() + 1 {
            return Err(self.written_error(op, written));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn written_error(&self, op: &'static str, written: &[&'static str]) -> DispatchError {
        let names: Vec<String> = written.iter().map(|name| format!("`{name}`")).collect();
        let values = |n: usize| if n == 1 { "value" } else { "values" };
        let len = self.len();
        DispatchError::kernel(
            op,
            format!(
                "a boxed kernel left {} {} on the stack; expected {}: the written {} of {}, then the result",
                len,
                values(len),
                written.len() + 1,
                values(written.len()),
                names.join(", "),
            ),
        )
    }

    /// Pops the result a kernel pushed.
    #[inline]
    pub(crate) fn pop_result(&mut self, op: &'static str) -> Result<Value, DispatchError> {
        match self.pop() {
            Some(value) => Ok(value),
            None => Err(no_result(op)),
        }
    }
}

#[cold]
#[inline(never)]
fn no_result(op: &'static str) -> DispatchError {
    DispatchError::kernel(op, "a boxed kernel returned without pushing its result")
}

impl Drop for Stack {
    #[inline]
    fn drop(&mut self) {
        // The spilled `Vec` drops itself; the inline values are dropped here.
        if self.len != 0 {
            self.clear();
        }
    }
}

impl Default for Stack {
    fn default() -> Self {
        Stack::new()
    }
}

impl Clone for Stack {
    fn clone(&self) -> Self {
        self.values().iter().cloned().collect()
    }
}

impl fmt::Debug for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stack")
            .field("values", &self.values())
            .finish()
    }
}

impl From<Vec<Value>> for Stack {
    fn from(values: Vec<Value>) -> Self {
        let mut stack = Stack::new();
        stack.spilled = Some(values);
        stack
    }
}

impl FromIterator<Value> for Stack {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Self {
        let mut stack = Stack::new();
        for value in iter {
            stack.push_value(value);
        }
        stack
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(stack: &Stack) -> Vec<i64> {
        stack
            .values()
            .iter()
            .map(|v| match v {
                Value::Int(i) => *i,
                other => panic!("not an int: {other}"),
            })
            .collect()
    }

    #[test]
    fn values_past_the_inline_ones_spill_in_order() {
        let mut stack = Stack::new();
        for i in 0..20 {
            stack.push(i);
            assert_eq!(stack.len(), usize::try_from(i).unwrap() + 1);
        }
        assert_eq!(ints(&stack), (0..20).collect::<Vec<_>>());
        for i in (0..20).rev() {
            assert!(matches!(stack.pop(), Some(Value::Int(n)) if n == i));
        }
        assert!(stack.pop().is_none());
        assert!(stack.is_empty());
        stack.push(7);
        assert_eq!(ints(&stack), [7]);
    }

    #[test]
    fn strings_are_dropped_once_inline_spilled_and_cleared() {
        // Values with heap memory: a double drop or a leak shows under Miri (and ASan).
        let mut stack = Stack::new();
        for n in 0..INLINE {
            stack.push(format!("v{n}"));
        }
        let snapshot = stack.clone();
        stack.push("spills");
        assert_eq!(stack.len(), INLINE + 1);
        assert_eq!(snapshot.len(), INLINE);
        assert_eq!(stack.top(2)[0].to_string(), format!("\"v{}\"", INLINE - 1));
        stack.clear();
        assert!(stack.is_empty());
        let mut other = snapshot.clone();
        other.values_mut()[0] = Value::Str("replaced".into());
        assert_eq!(other.values()[0].to_string(), "\"replaced\"");
        assert_eq!(
            other.pop().unwrap().to_string(),
            format!("\"v{}\"", INLINE - 1)
        );
        drop(other);
        drop(snapshot);
    }

    #[test]
    fn a_stack_from_a_vec_or_an_iterator_holds_its_values() {
        let from_vec = Stack::from(vec![Value::Int(1), Value::Str("x".into())]);
        assert_eq!(from_vec.len(), 2);
        let collected: Stack = (0..10).map(Value::Int).collect();
        assert_eq!(ints(&collected), (0..10).collect::<Vec<_>>());
        assert_eq!(
            format!("{:?}", Stack::from(vec![Value::Int(1)])),
            "Stack { values: [Int(1)] }"
        );
        let mut empty = Stack::from(Vec::new());
        empty.push(3);
        assert_eq!(ints(&empty), [3]);
    }
}
