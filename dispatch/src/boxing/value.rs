//! The boxed value.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::device::Device;
use crate::key::DispatchKeySet;
use crate::tensor::Tensor;

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
    /// A tensor (a reference-counted handle; boxing does not copy its data).
    Tensor(Tensor),
    /// A device (factories such as `full` dispatch on it).
    Device(Device),
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
            Value::Device(_) => "Device",
            Value::Custom(custom) => custom.type_name,
        }
    }

    /// The dispatch keys this value contributes to a boxed call, as its typed form would.
    pub fn dispatch_keys(&self) -> DispatchKeySet {
        match self {
            Value::Tensor(tensor) => tensor.keys(),
            Value::Device(device) => device.keys(),
            Value::List(items) | Value::Tuple(items) => items
                .iter()
                .fold(DispatchKeySet::EMPTY, |keys, v| keys | v.dispatch_keys()),
            Value::Custom(custom) => custom.keys,
            Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => {
                DispatchKeySet::EMPTY
            }
        }
    }

    /// The tensor, if this is one.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            Value::Tensor(tensor) => Some(tensor),
            _ => None,
        }
    }

    /// Boxes a user type; `keys` is what it contributes to dispatch (its `DispatchArg` keys).
    pub fn custom<T: Any + Send + Sync + fmt::Debug>(value: T, keys: DispatchKeySet) -> Value {
        Value::Custom(Custom {
            value: Arc::new(value),
            type_name: std::any::type_name::<T>(),
            keys,
        })
    }
}

/// A boxed user type: shared, so cloning a `Value` stays cheap.
#[derive(Clone)]
pub struct Custom {
    value: Arc<dyn Any + Send + Sync>,
    type_name: &'static str,
    keys: DispatchKeySet,
}

impl Custom {
    /// The value, if it is a `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.value.downcast_ref()
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

/// How a value reads in a trace or an error: tensors by shape and device, not by data.
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
            Value::Tensor(t) => write!(f, "Tensor{:?}@{}", t.shape(), t.device().name()),
            Value::Device(d) => f.write_str(d.name()),
            Value::Custom(c) => f.write_str(c.type_name),
        }
    }
}
