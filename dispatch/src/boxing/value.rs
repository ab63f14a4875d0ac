//! The boxed value.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

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

/// A boxed tensor of any tensor type: a shared handle to its [`TensorValue`], cheap to clone.
///
/// It keeps the concrete type's `TypeId` beside the pointer, so that unboxing (every boxed call
/// unboxes each tensor argument and the result) compares two words instead of making a virtual
/// call to `Any::type_id`.
#[derive(Clone)]
pub struct BoxedTensor {
    shared: Arc<dyn TensorValue>,
    /// `TypeId::of::<T>()` for the `T` that `shared` was made from; never changed after `new`.
    type_id: TypeId,
}

impl BoxedTensor {
    /// Boxes a tensor's shared value; an `Arc` already held is reused (no allocation).
    #[inline]
    pub fn new<T: TensorValue>(shared: Arc<T>) -> BoxedTensor {
        BoxedTensor {
            shared,
            type_id: TypeId::of::<T>(),
        }
    }

    /// The shared value, if it is a `T`; else the boxed tensor back.
    #[inline]
    #[allow(unsafe_code)] // one pointer cast; see the SAFETY line
    pub fn downcast<T: TensorValue>(self) -> Result<Arc<T>, BoxedTensor> {
        if self.type_id != TypeId::of::<T>() {
            return Err(self);
        }
        let raw = Arc::into_raw(self.shared).cast::<T>();
        // SAFETY: `type_id` is private and set only by `new::<U>` from an `Arc<U>`, so equal ids
        // mean `shared` was made from an `Arc<T>` by unsized coercion; its data pointer (`raw`)
        // then points to the `T` of an `Arc<T>` allocation, which is what `Arc::from_raw::<T>`
        // requires ("constructed through `Arc<T>` and converted to `Arc<U>` through an unsized
        // coercion"). The reference count `into_raw` kept is the one `from_raw` takes over.
        Ok(unsafe { Arc::from_raw(raw) })
    }

    /// The shared value, if it is a `T`.
    #[inline]
    pub fn downcast_ref<T: TensorValue>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.shared;
        any.downcast_ref::<T>()
    }

    /// Whether both are handles of one tensor (one shared value).
    pub fn same(&self, other: &BoxedTensor) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.shared), Arc::as_ptr(&other.shared))
    }

    /// The tensor's dispatch keys.
    pub fn keys(&self) -> DispatchKeySet {
        self.shared.dispatch_keys()
    }
}

impl fmt::Debug for BoxedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shared.summary(f)
    }
}

impl fmt::Display for BoxedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shared.summary(f)
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
