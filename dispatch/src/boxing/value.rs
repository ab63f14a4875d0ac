//! The boxed value.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use super::tensor::BoxedTensor;
use crate::key::DispatchKeySet;

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
    /// allocates), see [`TensorValue`](crate::TensorValue).
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
