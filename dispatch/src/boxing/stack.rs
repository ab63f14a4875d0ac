//! The stack a boxed call passes arguments and results on.

use std::fmt;
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::sync::Arc;

use super::tensor::BoxedTensor;
use super::value::Value;
use super::{SharedTensor, TensorValue};

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
///
/// **Lent tensors.** A stack may borrow tensors for its lifetime `'s` instead of sharing them
/// ([`Stack::push_lent`]): a typed call boxed for a fallback lends its tensor arguments, and a
/// typed kernel that the fallback redispatches to gets them back as they were, so the round trip
/// takes no reference count. Nothing of this shows: a lent tensor reads as any other
/// ([`values`](Stack::values), [`top`](Stack::top)), and one that leaves the stack
/// ([`pop`](Stack::pop), [`values_mut`](Stack::values_mut), a clone) is owned first. `'s` is
/// inferred; a stack made with [`Stack::new`] alone may live as long as its owner wants.
pub struct Stack<'s> {
    /// The values while they fit: while `len` is at most `INLINE`, `inline[..len]` are
    /// initialised and the rest are not; spilled, none is.
    inline: [MaybeUninit<Value>; INLINE],
    /// How many values are inline, or `SPILLED`: then they are all in `heap`.
    len: usize,
    /// The values, once more than `INLINE` were on the stack at once (or the stack was made from
    /// a `Vec`); empty and unallocated before. (`ManuallyDrop`: `Drop for Stack` drops it, out
    /// of line, so that dropping a stack that never spilled is two tests.)
    heap: ManuallyDrop<Vec<Value>>,
    /// Whether a value may be lent (`push_lent`): then `values_mut` makes them owned first.
    has_lent: bool,
    /// Lent values borrow their tensors for `'s`.
    lent: PhantomData<&'s ()>,
}

/// How many values a stack holds without allocating: an op's arguments, or the written values
/// and the result after the call. A typed call boxed for a fallback (`__via_boxed`) makes its
/// stack in its own frame, so it neither allocates nor touches a thread-local.
pub(super) const INLINE: usize = 6;

/// `Stack::len` once the values moved to the heap: above `INLINE`, so that one comparison tells
/// an inline slot from everything else.
const SPILLED: usize = usize::MAX;

impl<'s> Stack<'s> {
    /// An empty stack. It holds a few values without allocating.
    #[inline]
    pub fn new() -> Self {
        Stack {
            inline: [const { MaybeUninit::uninit() }; INLINE],
            len: 0,
            heap: ManuallyDrop::new(Vec::new()),
            has_lent: false,
            lent: PhantomData,
        }
    }

    /// Pushes a tensor that the stack borrows for `'s` instead of sharing it: no reference
    /// count, unless the value leaves the stack (see the type's docs). A kernel that takes
    /// `&H` gets `tensor` itself back ([`Stack::pop_lent`]). ([`ToValue::push_onto`] of a
    /// tensor type calls it.)
    ///
    /// [`ToValue::push_onto`]: crate::ToValue::push_onto
    #[inline]
    pub fn push_lent<H: SharedTensor + Sync + 'static>(&mut self, tensor: &'s H) {
        self.has_lent = true;
        self.push_with(|| Value::Tensor(BoxedTensor::lend(tensor)));
    }

    /// Pushes one value.
    #[inline]
    pub fn push(&mut self, value: impl Into<Value>) {
        self.push_with(|| value.into());
    }

    /// Pushes the value `make` builds, built in its slot: the slot is chosen first, so the value
    /// is written once, in place. (A value built in a temporary and copied would be read back
    /// wider than it was written, which stalls the CPU's store forwarding.)
    #[inline(always)]
    pub(crate) fn push_with(&mut self, make: impl FnOnce() -> Value) {
        match self.inline.get_mut(self.len) {
            Some(slot) => {
                slot.write(make());
                self.len += 1;
            }
            None => self.push_heap(make()),
        }
    }

    /// Pushes onto the heap, moving the values there first if they are still inline: where a
    /// push goes that does not fit.
    #[cold]
    #[inline(never)]
    fn push_heap(&mut self, value: Value) {
        if self.len != SPILLED {
            let mut values = Vec::with_capacity(2 * INLINE);
            while let Some(value) = self.pop_inline() {
                values.push(value);
            }
            values.reverse();
            *self.heap = values;
            self.len = SPILLED;
        }
        self.heap.push(value);
    }

    /// Pops the top inline value (`None` when there is none, or the values are spilled).
    #[inline]
    #[allow(unsafe_code)] // moves a value out of its slot; see the SAFETY line
    fn pop_inline(&mut self) -> Option<Value> {
        let top = self.len.checked_sub(1)?;
        let slot = self.inline.get(top)?;
        self.len = top;
        // SAFETY: the slot exists, so the old `len` was at most `INLINE` (not spilled) and
        // `inline[..len]` were initialised (the field's invariant), this slot among them; `len`
        // no longer counts it, so the value is read out exactly once and the slot is left as
        // uninitialised.
        Some(unsafe { slot.assume_init_read() })
    }

    /// Pops the top value (owned: a lent tensor takes its reference count now).
    #[inline]
    pub fn pop(&mut self) -> Option<Value> {
        let mut value = if self.len == SPILLED {
            self.heap.pop()
        } else {
            self.pop_inline()
        }?;
        value.own();
        Some(value)
    }

    /// Pops the top value if it is a tensor of type `H` that the stack lent
    /// ([`Stack::push_lent`]), and returns the tensor itself, borrowed as it was lent: how a
    /// kernel reached through a boxed fallback gets back the tensor its typed caller passed
    /// ([`FromValue::from_lent`](crate::FromValue::from_lent)). Anything else stays on the
    /// stack.
    #[inline]
    #[allow(unsafe_code)] // reads the lent handle; see the SAFETY line
    pub fn pop_lent<H: 'static>(&mut self) -> Option<&'s H> {
        // Inline values only: a spilled stack's lent tensors are popped owned (a reference count
        // each), which is rare enough.
        let (top, Value::Tensor(tensor)) = self.top_inline()? else {
            return None;
        };
        let handle = tensor.lent_handle::<H>()?;
        // A lent value holds nothing to drop: popping it is forgetting it.
        self.len = top;
        // SAFETY: a value is lent only by `Stack::push_lent`, from an `&'s H` for the stack's
        // `'s` (the type id says it is an `H`); a lent value never leaves its stack but this way
        // (every other way out makes it owned), so the handle is borrowed, shared, for `'s`.
        Some(unsafe { handle.as_ref() })
    }

    /// Pops the top value if it is a tensor whose shared value is an `S`, and returns its `Arc`
    /// (owned; a lent tensor takes a reference count), read where it lies; anything else stays
    /// on the stack. How a tensor result, or an owned tensor argument, is unboxed without copying
    /// the whole value ([`FromValue::pop_from`](crate::FromValue::pop_from)). Inline values
    /// only: a spilled stack's values are popped and unboxed whole.
    #[inline]
    #[allow(unsafe_code)] // takes a value's count in place; see the SAFETY line
    pub fn pop_tensor<S: TensorValue>(&mut self) -> Option<Arc<S>> {
        let (top, Value::Tensor(tensor)) = self.top_inline()? else {
            return None;
        };
        // SAFETY: on `Some`, the slot is forgotten right below: `len` no longer counts it and
        // nothing reads or drops it again, as `take_shared` requires.
        let shared = unsafe { tensor.take_shared::<S>() }?;
        self.len = top;
        Some(shared)
    }

    /// The top value and its index, if it is inline (`None` when the stack is empty or
    /// spilled).
    #[inline]
    #[allow(unsafe_code)] // views an initialised slot as a value; see the SAFETY line
    fn top_inline(&self) -> Option<(usize, &Value)> {
        let top = self.len.checked_sub(1)?;
        // A spilled stack's `len` is `SPILLED`: `top` is then past the slots.
        let slot = self.inline.get(top)?;
        // SAFETY: the slot exists, so `len` (`top + 1`) is at most `INLINE` (not spilled) and
        // `inline[..len]` are initialised (the field's invariant), this slot among them.
        Some((top, unsafe { slot.assume_init_ref() }))
    }

    /// Pops the top value as `read` reads it where it lies, if `read` can (`Some`): how a plain
    /// result (a number, a flag) is unboxed without moving it. (Its slot was written moments
    /// ago, narrowly; a copy of the whole value would read it back wider, which stalls the CPU's
    /// store forwarding.) Inline values only: a spilled stack pops its values whole.
    #[inline]
    #[allow(unsafe_code)] // drops the read slot's value; see the SAFETY line
    pub(crate) fn pop_read<R>(&mut self, read: impl FnOnce(&Value) -> Option<R>) -> Option<R> {
        let (top, value) = self.top_inline()?;
        let result = read(value)?;
        self.len = top;
        if let Some(slot) = self.inline.get_mut(top) {
            // SAFETY: `top_inline` found this slot initialised below `len`; `len` no longer
            // counts it, so its value is dropped (or, holding nothing to drop, left) once, and
            // the slot is then uninitialised.
            unsafe {
                if slot.assume_init_ref().needs_drop() {
                    slot.assume_init_drop();
                }
            }
        }
        Some(result)
    }

    /// The number of values.
    #[inline]
    pub fn len(&self) -> usize {
        if self.len == SPILLED {
            self.heap.len()
        } else {
            self.len
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
        match self.inline.get(..self.len) {
            // SAFETY: `get(..len)` succeeded, so `len` is at most `INLINE` (not spilled) and
            // `inline[..len]` are initialised (the field's invariant); the borrow of `self`
            // keeps them so.
            Some(slots) => unsafe { slots.assume_init_ref() },
            None => &self.heap,
        }
    }

    /// The values, bottom first, to inspect or rewrite in place (a value taken out this way
    /// leaves the stack: lent tensors are made owned first).
    #[inline]
    pub fn values_mut(&mut self) -> &mut [Value] {
        if self.has_lent {
            self.own_all();
        }
        self.values_lent()
    }

    /// Makes every lent value owned (a reference count each).
    #[inline(never)]
    fn own_all(&mut self) {
        self.values_lent().iter_mut().for_each(Value::own);
        self.has_lent = false;
    }

    /// The values as they are, lent or not: never handed out, since a value moved out of the
    /// slice would leave the stack still lent.
    #[inline]
    #[allow(unsafe_code)] // views the initialised slots as values; see the SAFETY line
    fn values_lent(&mut self) -> &mut [Value] {
        match self.inline.get_mut(..self.len) {
            // SAFETY: `get_mut(..len)` succeeded, so `len` is at most `INLINE` (not spilled)
            // and `inline[..len]` are initialised (the field's invariant); what is written
            // through the slice are values, so they stay initialised.
            Some(slots) => unsafe { slots.assume_init_mut() },
            None => &mut self.heap,
        }
    }

    /// The top `n` values (the last `n` pushed), or all of them if there are fewer.
    pub fn top(&self, n: usize) -> &[Value] {
        let values = self.values();
        &values[values.len().saturating_sub(n)..]
    }

    /// Keeps the first `len` values and drops the rest (nothing, if there are no more).
    #[inline]
    #[allow(unsafe_code)] // drops initialised slots; see the SAFETY line
    pub fn truncate(&mut self, len: usize) {
        let Some(slots) = self.inline.get_mut(len..self.len) else {
            if self.len == SPILLED {
                truncate_heap(&mut self.heap, len);
            }
            return;
        };
        self.len = len;
        for slot in slots {
            // SAFETY: `get_mut(len..old len)` succeeded, so the old `len` was at most `INLINE`
            // (not spilled), and the slots were below it, so they are initialised (the field's
            // invariant), and `len` no longer counts them: each is dropped (or, holding nothing
            // to drop, left) once, and is then uninitialised.
            unsafe {
                if slot.assume_init_ref().needs_drop() {
                    slot.assume_init_drop();
                }
            }
        }
    }

    /// Removes every value.
    pub fn clear(&mut self) {
        self.truncate(0);
    }
}

impl Drop for Stack<'_> {
    #[inline]
    fn drop(&mut self) {
        // Out of line: a stack that a call emptied (the usual end of a boxed call) drops with
        // two tests.
        if self.len != 0 {
            self.drop_values();
        }
    }
}

#[inline(never)]
fn truncate_heap(values: &mut Vec<Value>, len: usize) {
    values.truncate(len);
}

impl Stack<'_> {
    #[inline(never)]
    fn drop_values(&mut self) {
        self.clear();
        drop(std::mem::take(&mut *self.heap));
    }
}

impl Default for Stack<'_> {
    fn default() -> Self {
        Stack::new()
    }
}

/// A clone holds owned values (a lent tensor's clone takes a reference count).
impl Clone for Stack<'_> {
    fn clone(&self) -> Self {
        self.values().iter().cloned().collect()
    }
}

impl fmt::Debug for Stack<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stack")
            .field("values", &self.values())
            .finish()
    }
}

impl From<Vec<Value>> for Stack<'_> {
    fn from(values: Vec<Value>) -> Self {
        let mut stack = Stack::new();
        *stack.heap = values;
        stack.len = SPILLED;
        stack
    }
}

impl FromIterator<Value> for Stack<'_> {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Self {
        let mut stack = Stack::new();
        for value in iter {
            stack.push_with(|| value);
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
