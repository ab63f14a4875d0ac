//! The boxed tensor: any tensor type's shared value, owned or lent.

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
/// `Arc` into a [`Value::Tensor`](crate::Value::Tensor) without allocating, and [`BoxedTensor::downcast`] turns it back.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boxing::Value;

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
