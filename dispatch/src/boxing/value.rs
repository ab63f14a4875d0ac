//! The boxed value.

use std::any::{Any, TypeId};
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::Arc;

use super::SharedTensor;
use crate::key::DispatchKeySet;

/// What a tensor type's shared inner value offers the engine: its keys (a boxed call dispatches
/// as the typed one would) and a one-line summary for traces and errors (`Tensor[2, 3]:f32@cpu`).
///
/// A tensor library implements it for the value its tensor handle shares (for an
/// `Arc<Inner>` handle, `Inner`), and boxes through [`BoxedTensor::new`]: that turns the handle's
/// `Arc` into a [`Value::Tensor`] without allocating, and [`BoxedTensor::downcast`] turns it back.
/// Two boxed tensors are the same tensor when they share that value ([`BoxedTensor::same`]),
/// which is how [`trace`](crate::trace) links a tensor an op produced to the op that reads it.
/// [`boxable_tensor!`](crate::boxable_tensor) writes the conversions.
pub trait TensorValue: Any + Send + Sync {
    /// The keys the tensor contributes to a call (its [`DispatchArg`](crate::DispatchArg) keys).
    fn dispatch_keys(&self) -> DispatchKeySet;

    /// A short description by shape and device, not by data, e.g. `Tensor[2, 3]:f32@cpu`.
    fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// A boxed tensor of any tensor type: a handle to its [`TensorValue`], cheap to clone.
///
/// It is *owned*, holding one reference count of the tensor's shared value as an `Arc` does, or,
/// on a [`Stack`](crate::Stack) only, *lent* ([`Stack::push_lent`](crate::Stack::push_lent)):
/// borrowing a typed tensor handle for as long as the stack may hold it, with no count. A lent
/// value never leaves its stack as one: popping it, or handing out the stack's values to rewrite
/// ([`Stack::values_mut`](crate::Stack::values_mut)), makes it owned first (one count), and a
/// clone is always owned. So a typed call that a boxed fallback only passes on takes no
/// reference count at all.
///
/// It keeps the concrete types' `TypeId`s beside the pointer, so that unboxing (every boxed call
/// unboxes each tensor argument and the result) compares two words instead of making a virtual
/// call to `Any::type_id`.
pub struct BoxedTensor {
    /// The shared value. Owned (`lent` is `None`): an `Arc<dyn TensorValue>`'s pointer, whose
    /// count this value holds and gives back when dropped. Lent: the value of an `Arc` that the
    /// lender borrows for as long as the stack holding this value lives; no count is held.
    shared: *const dyn TensorValue,
    /// The concrete types behind the pointers; set at construction, never changed.
    types: &'static TensorTypes,
    /// Lent: the typed handle it was lent from (an `&H`, `H` the type `types.handle` names).
    lent: Option<NonNull<()>>,
}

/// The concrete types of a boxed tensor.
#[derive(Debug)]
struct TensorTypes {
    /// Of the shared value.
    shared: TypeId,
    /// Of the handle a lent value was lent from (read only while it is lent).
    handle: TypeId,
}

/// `TensorTypes` for a shared value `S` and a handle `H`, as a constant (`&'static`, so a boxed
/// tensor stays three words).
struct TypesOf<S, H>(PhantomData<fn() -> (S, H)>);

impl<S: 'static, H: 'static> TypesOf<S, H> {
    const TYPES: &'static TensorTypes = &TensorTypes {
        shared: TypeId::of::<S>(),
        handle: TypeId::of::<H>(),
    };
}

// SAFETY: owned, a `BoxedTensor` is an `Arc<dyn TensorValue>` (`TensorValue: Send + Sync`);
// lent, it is a shared borrow of such an `Arc`'s value and of a handle `H: Sync` (the bound of
// `Stack::push_lent`, the one place that lends). Both may be sent to and shared between threads.
#[allow(unsafe_code)]
unsafe impl Send for BoxedTensor {}
// SAFETY: as for `Send`: every access through `&BoxedTensor` only reads the shared value or the
// handle, both `Sync`, or takes a reference count, which is atomic.
#[allow(unsafe_code)]
unsafe impl Sync for BoxedTensor {}

impl BoxedTensor {
    /// Boxes a tensor's shared value; an `Arc` already held is reused (no allocation).
    #[inline]
    pub fn new<T: TensorValue>(shared: Arc<T>) -> BoxedTensor {
        let shared: Arc<dyn TensorValue> = shared;
        BoxedTensor {
            shared: Arc::into_raw(shared),
            types: TypesOf::<T, T>::TYPES,
            lent: None,
        }
    }

    /// A value lent from `handle`: no count. Only [`Stack::push_lent`](crate::Stack::push_lent)
    /// makes one, for a stack that lives no longer than the borrow of `handle`.
    #[inline]
    pub(crate) fn lend<H: SharedTensor + Sync + 'static>(handle: &H) -> BoxedTensor {
        // The `Arc` is borrowed as long as `handle` is (`shared` returns a borrow of `self`).
        let shared: *const H::Shared = Arc::as_ptr(handle.shared());
        let shared: *const dyn TensorValue = shared;
        BoxedTensor {
            shared,
            types: TypesOf::<H::Shared, H>::TYPES,
            lent: Some(NonNull::from(handle).cast()),
        }
    }

    /// The shared value.
    #[inline]
    #[allow(unsafe_code)] // reads through the pointer; see the SAFETY line
    fn value(&self) -> &dyn TensorValue {
        // SAFETY: owned, `shared` is the pointer of an `Arc` whose count this value holds; lent,
        // it is the value of an `Arc` borrowed for as long as the stack holding this value lives,
        // which outlives the borrow of `self`. Either way the value is alive, and only read.
        unsafe { &*self.shared }
    }

    /// Whether this value is lent (see the type's docs).
    #[inline]
    pub(crate) fn is_lent(&self) -> bool {
        self.lent.is_some()
    }

    /// Makes a lent value owned, taking a reference count; an owned one is left as it is. What a
    /// stack does to a value before it leaves the stack.
    #[inline]
    pub(crate) fn own(&mut self) {
        if self.is_lent() {
            self.take_count();
        }
    }

    #[inline(never)]
    #[allow(unsafe_code)] // adds a reference count; see the SAFETY line
    fn take_count(&mut self) {
        // SAFETY: lent, `shared` is `Arc::as_ptr` of an `Arc` borrowed for as long as `self` can
        // be reached (see `value`), so that `Arc` is alive with a count of at least one, and its
        // pointer is what `Arc::into_raw` of it would return (`as_ptr` and `into_raw` give the
        // same pointer; the `dyn` coercion keeps the data pointer). The count taken here is the
        // one the value now owns.
        unsafe { Arc::increment_strong_count(self.shared) };
        self.lent = None;
    }

    /// The handle this value was lent from, if it is lent from an `H`.
    #[inline]
    pub(crate) fn lent_handle<H: 'static>(&self) -> Option<NonNull<H>> {
        match self.lent {
            Some(handle) if self.types.handle == TypeId::of::<H>() => Some(handle.cast()),
            _ => None,
        }
    }

    /// The shared value as an owned `Arc<S>`, if it is an `S`, read where it lies (field by
    /// field: no copy of the whole value). An owned value's count moves into the `Arc`; a lent
    /// one takes a count.
    ///
    /// # Safety
    ///
    /// On `Some`, the caller forgets `self`: never drops it or reads it again (its count, if it
    /// held one, is the returned `Arc`'s now).
    #[inline]
    #[allow(unsafe_code)] // takes over or adds a reference count; see the SAFETY lines
    pub(crate) unsafe fn take_shared<S: TensorValue>(&self) -> Option<Arc<S>> {
        if self.types.shared != TypeId::of::<S>() {
            return None;
        }
        let raw = self.shared.cast::<S>();
        if self.is_lent() {
            // SAFETY: lent, `shared` is `Arc::as_ptr` of an `Arc` alive while `self` is
            // borrowed (see `value`), the pointer `Arc::into_raw` would return; the count taken
            // here is the returned `Arc`'s.
            unsafe { Arc::increment_strong_count(raw) };
        }
        // SAFETY: equal type ids mean `shared` was made from an `Arc<S>` by unsized coercion
        // (`types` is private and names the type of `shared`'s value, see `downcast`), so `raw`
        // points to the `S` of an `Arc<S>` allocation. The count `from_raw` takes over is the
        // owned value's own (the caller forgets the value) or the one just taken.
        Some(unsafe { Arc::from_raw(raw) })
    }

    /// The shared value, if it is a `T`; else the boxed tensor back.
    #[inline]
    #[allow(unsafe_code)] // one pointer cast; see the SAFETY line
    pub fn downcast<T: TensorValue>(mut self) -> Result<Arc<T>, BoxedTensor> {
        if self.types.shared != TypeId::of::<T>() {
            return Err(self);
        }
        self.own();
        let this = ManuallyDrop::new(self);
        let raw = this.shared.cast::<T>();
        // SAFETY: `types` is private and set only by `new::<U>` (from an `Arc<U>`) and by
        // `lend::<H>` (from an `Arc<H::Shared>`) to name the type of `shared`'s value, so equal
        // ids mean `shared` was made from an `Arc<T>` by unsized coercion; its data pointer
        // (`raw`) then points to the `T` of an `Arc<T>` allocation, which is what
        // `Arc::from_raw::<T>` requires ("constructed through `Arc<T>` and converted to `Arc<U>`
        // through an unsized coercion"). The value is owned (`own`), and the count it holds is the
        // one `from_raw` takes over (`ManuallyDrop`: this value does not give it back as well).
        Ok(unsafe { Arc::from_raw(raw) })
    }

    /// The shared value, if it is a `T`.
    #[inline]
    pub fn downcast_ref<T: TensorValue>(&self) -> Option<&T> {
        let any: &dyn Any = self.value();
        any.downcast_ref::<T>()
    }

    /// Whether both are handles of one tensor (one shared value).
    pub fn same(&self, other: &BoxedTensor) -> bool {
        std::ptr::addr_eq(self.shared, other.shared)
    }

    /// The tensor's dispatch keys.
    pub fn keys(&self) -> DispatchKeySet {
        self.value().dispatch_keys()
    }
}

/// A clone is owned, lent or not: it takes a reference count.
impl Clone for BoxedTensor {
    #[inline]
    #[allow(unsafe_code)] // adds a reference count; see the SAFETY line
    fn clone(&self) -> Self {
        // SAFETY: owned or lent, `shared` is the pointer of an `Arc` that is alive while `self`
        // is borrowed (see `value`), as `Arc::into_raw` returns it (owned: from `into_raw`; lent:
        // `as_ptr`, the same pointer). The count taken here is the clone's.
        unsafe { Arc::increment_strong_count(self.shared) };
        BoxedTensor {
            shared: self.shared,
            types: self.types,
            lent: None,
        }
    }
}

impl Drop for BoxedTensor {
    #[inline]
    #[allow(unsafe_code)] // gives back the value's reference count; see the SAFETY line
    fn drop(&mut self) {
        if self.is_lent() {
            return; // a lent value holds no count
        }
        // SAFETY: owned, `shared` is an `Arc<dyn TensorValue>`'s pointer (from `Arc::into_raw`
        // in `new`, or the same pointer with a count taken by `clone` or `take_count`), and this
        // value holds one count of it, given back here, once.
        drop(unsafe { Arc::from_raw(self.shared) });
    }
}

impl fmt::Debug for BoxedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value().summary(f)
    }
}

impl fmt::Display for BoxedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value().summary(f)
    }
}

/// One boxed argument or result.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Value {
    /// Nothing: `()` or an absent `Option`.
    None,
    /// A `bool`.
    Bool(bool),
    /// Any integer type.
    Int(i64),
    /// `f32` or `f64`.
    Float(f64),
    /// A string.
    Str(String),
    /// A slice, `Vec` or array.
    List(Vec<Value>),
    /// A tuple (2 to 4 elements), e.g. an op's `(Tensor, Tensor)` result; its elements in order.
    Tuple(Vec<Value>),
    /// A tensor of any tensor type (a shared handle; boxing neither copies its data nor
    /// allocates), see [`TensorValue`].
    Tensor(BoxedTensor),
    /// Any other type: the escape hatch for user types (see [`crate::boxable!`]).
    Custom(Custom),
}

impl Value {
    /// What kind of value this is, for error messages: `Tensor`, `int`, `float`, …
    pub fn kind(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Tensor(_) => "Tensor",
            Value::Custom(custom) => custom.type_name,
        }
    }

    /// The dispatch keys this value contributes to a boxed call, as its typed form would.
    pub fn dispatch_keys(&self) -> DispatchKeySet {
        match self {
            Value::Tensor(tensor) => tensor.keys(),
            Value::List(items) | Value::Tuple(items) => items
                .iter()
                .fold(DispatchKeySet::EMPTY, |keys, v| keys | v.dispatch_keys()),
            Value::Custom(custom) => custom.keys,
            Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => {
                DispatchKeySet::EMPTY
            }
        }
    }

    /// The boxed tensor, if this is one.
    pub fn as_tensor(&self) -> Option<&BoxedTensor> {
        match self {
            Value::Tensor(tensor) => Some(tensor),
            _ => None,
        }
    }

    /// Makes a lent tensor owned (see [`BoxedTensor`]); every other value already is.
    #[inline]
    pub(crate) fn own(&mut self) {
        if let Value::Tensor(tensor) = self {
            tensor.own();
        }
    }

    /// The value, if it is plain (`None`, `Bool`, `Int`, `Float`), read where it lies.
    #[inline(always)]
    pub(crate) fn as_plain(&self) -> Option<Plain> {
        match *self {
            Value::None => Some(Plain::None),
            Value::Bool(b) => Some(Plain::Bool(b)),
            Value::Int(i) => Some(Plain::Int(i)),
            Value::Float(x) => Some(Plain::Float(x)),
            _ => None,
        }
    }

    /// Whether dropping the value does anything: not for a plain value or a lent tensor. (A
    /// stack tests this before it calls the drop glue, which is recursive and never inlined.)
    #[inline(always)]
    pub(crate) fn needs_drop(&self) -> bool {
        match self {
            Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) => false,
            Value::Tensor(tensor) => !tensor.is_lent(),
            Value::Str(_) | Value::List(_) | Value::Tuple(_) | Value::Custom(_) => true,
        }
    }

    /// The value, if it is plain (`None`, `Bool`, `Int`, `Float`: nothing to drop), or the
    /// value back. What the scalar conversions unbox through: taking a plain value apart calls
    /// no drop glue (`Value`'s is recursive, through `List`, so it is never inlined and each
    /// drop would be a call).
    #[inline(always)]
    pub(crate) fn into_plain(self) -> Result<Plain, Value> {
        let plain = match self {
            Value::None => Plain::None,
            Value::Bool(b) => Plain::Bool(b),
            Value::Int(i) => Plain::Int(i),
            Value::Float(x) => Plain::Float(x),
            other => return Err(other),
        };
        // `self` is plain: forgetting it leaks nothing.
        std::mem::forget(self);
        Ok(plain)
    }

    /// Boxes a user type; `keys` is what it contributes to dispatch (its `DispatchArg` keys).
    pub fn custom<T: Any + Send + Sync + fmt::Debug>(value: T, keys: DispatchKeySet) -> Value {
        // (`Arc<T>` to `Arc<dyn CustomValue>`: the blanket impl below covers every such `T`.)
        Value::Custom(Custom {
            value: Arc::new(value),
            type_name: std::any::type_name::<T>(),
            keys,
        })
    }
}

/// A plain [`Value`]: one that holds nothing to drop ([`Value::into_plain`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plain {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Plain {
    /// The value again (for an error message).
    pub(crate) fn value(self) -> Value {
        match self {
            Plain::None => Value::None,
            Plain::Bool(b) => Value::Bool(b),
            Plain::Int(i) => Value::Int(i),
            Plain::Float(x) => Value::Float(x),
        }
    }
}

/// What a custom value offers: `Any` to unbox it, `Debug` to print it in traces and errors.
trait CustomValue: Any + Send + Sync + fmt::Debug {}
impl<T: Any + Send + Sync + fmt::Debug> CustomValue for T {}

/// A boxed user type: shared, so cloning a `Value` stays cheap.
#[derive(Clone)]
pub struct Custom {
    value: Arc<dyn CustomValue>,
    type_name: &'static str,
    keys: DispatchKeySet,
}

impl Custom {
    /// The value, if it is a `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.value;
        any.downcast_ref()
    }

    /// The boxed type's name.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Debug for Custom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Custom({})", self.type_name)
    }
}

/// How a value reads in a trace or an error: tensors by their summary (shape and device, not
/// data), custom values by their `Debug` form.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::None => f.write_str("None"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Tuple(items) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
            Value::Tensor(t) => write!(f, "{t}"),
            Value::Custom(c) => write!(f, "{:?}", c.value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Grid(usize);
    #[derive(Debug)]
    struct Cube(usize);

    impl TensorValue for Grid {
        fn dispatch_keys(&self) -> DispatchKeySet {
            DispatchKeySet::CPU_NAIVE
        }
        fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "Grid[{}]", self.0)
        }
    }
    impl TensorValue for Cube {
        fn dispatch_keys(&self) -> DispatchKeySet {
            DispatchKeySet::WGPU
        }
        fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "Cube[{}]", self.0)
        }
    }

    #[test]
    fn a_boxed_tensor_unboxes_only_as_its_own_type_and_shares_the_value() {
        let grid = Arc::new(Grid(3));
        let boxed = BoxedTensor::new(grid.clone());
        assert_eq!(
            Arc::strong_count(&grid),
            2,
            "boxing shares, it does not copy"
        );
        assert!(boxed.same(&boxed.clone()));
        assert!(!boxed.same(&BoxedTensor::new(Arc::new(Grid(3)))));
        let boxed = boxed.downcast::<Cube>().expect_err("a Grid is not a Cube");
        assert_eq!(
            Arc::strong_count(&grid),
            2,
            "a failed unboxing gives the handle back"
        );
        assert_eq!(boxed.keys(), DispatchKeySet::CPU_NAIVE);
        assert_eq!(Value::Tensor(boxed.clone()).to_string(), "Grid[3]");
        assert!(boxed.downcast_ref::<Cube>().is_none());
        let back = boxed.downcast::<Grid>().unwrap();
        assert!(Arc::ptr_eq(&back, &grid));
        drop(back);
        assert_eq!(
            Arc::strong_count(&grid),
            1,
            "unboxing took over the boxed count"
        );
    }
}
