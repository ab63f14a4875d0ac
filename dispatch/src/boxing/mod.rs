//! Boxed calls: every op can also be called with a [`Stack`] of [`Value`]s, and every boxed
//! fallback sees its arguments that way.
//!
//! The typed path never boxes: a typed call that lands on a boxed slot (a fallback) is boxed there,
//! by the adapter the `#[op]` macro generates, and unboxed again when the fallback redispatches to
//! a typed kernel. Conversions are the traits [`ToValue`] (box), [`FromValue`] (unbox an owned
//! value) and [`Unbox`] (unbox an argument that may borrow, like `&Tensor` or `&[usize]`).

mod convert;
mod leaf;
mod protocol;
mod stack;
mod tensor;
#[cfg(test)]
mod tests;
mod value;

pub use convert::{BoxedResult, FromValue, Held, ToValue, TypeMismatch, Unbox};
pub use stack::Stack;
pub use tensor::{BoxedTensor, TensorValue};
pub use value::{Custom, Value};

/// A tensor type whose handle is one shared value (`struct Tensor(Arc<Inner>)`): what
/// [`boxable_tensor!`](crate::boxable_tensor) needs to box it as a [`Value::Tensor`] without
/// allocating, and to lend it to a stack without a reference count ([`Stack::push_lent`]).
pub trait SharedTensor: Clone {
    /// The value every handle of one tensor shares.
    type Shared: TensorValue;
    /// This handle's shared value, borrowed (`&self.0`): boxing clones it (a reference count),
    /// lending only borrows it.
    fn shared(&self) -> &std::sync::Arc<Self::Shared>;
    /// This handle's shared value, taken (`self.0`): boxing an owned handle (an op's result)
    /// moves its count instead of taking another. By default a clone of
    /// [`shared`](SharedTensor::shared).
    #[inline]
    fn into_shared(self) -> std::sync::Arc<Self::Shared> {
        std::sync::Arc::clone(self.shared())
    }
    /// The handle of a shared value.
    fn from_shared(shared: std::sync::Arc<Self::Shared>) -> Self;
}

/// Gives a user type a boxed form (the `Custom` escape hatch), so that ops may take and return
/// it: implements [`ToValue`], [`FromValue`], [`Unbox`] and `From<T>`/`From<&T>` for
/// [`Value`] (so [`Stack::push`] takes it).
///
/// The type must be `Clone + Debug + Send + Sync + 'static` and implement
/// [`DispatchArg`](crate::DispatchArg): its keys travel with the boxed value, so a boxed call
/// dispatches as the typed one would.
///
/// ```
/// use switchyard::{DispatchArg, DispatchKeySet, FromValue, ToValue, boxable};
///
/// #[derive(Clone, Debug, PartialEq)]
/// pub struct Window(pub usize);
///
/// impl DispatchArg for Window {
///     fn dispatch_keys(&self) -> DispatchKeySet {
///         DispatchKeySet::EMPTY
///     }
/// }
/// boxable!(Window);
///
/// assert_eq!(Window::from_value(Window(3).to_value()), Ok(Window(3)));
/// assert!(Window::from_value(switchyard::Value::Int(3)).is_err());
/// ```
#[macro_export]
macro_rules! boxable {
    ($ty:ty) => {
        #[diagnostic::do_not_recommend]
        impl $crate::ToValue for $ty {
            fn to_value(&self) -> $crate::Value {
                $crate::Value::custom(
                    ::core::clone::Clone::clone(self),
                    $crate::DispatchArg::dispatch_keys(self),
                )
            }
        }

        #[diagnostic::do_not_recommend]
        impl $crate::FromValue for $ty {
            fn from_value(
                value: $crate::Value,
            ) -> ::core::result::Result<Self, $crate::boxing::TypeMismatch> {
                let found = match &value {
                    $crate::Value::Custom(custom) => custom.downcast_ref::<$ty>().cloned(),
                    _ => ::core::option::Option::None,
                };
                found.ok_or_else(|| $crate::boxing::TypeMismatch::new(stringify!($ty), &value))
            }
        }

        $crate::__owned_boxing!($ty);
    };
}

/// Gives a tensor type its boxed form, [`Value::Tensor`]: implements [`ToValue`], [`FromValue`]
/// and [`Unbox`] through its [`SharedTensor`] impl (`&T`, `Option<&T>` and `&[T]` arguments
/// follow from those), and `From<T>`/`From<&T>` for [`Value`] (so [`Stack::push`] takes it).
/// The type must be `Sync + 'static`.
///
/// This is the door every tensor type boxes through, the framework's own included: boxing costs
/// one reference count, a `&T` argument of a typed call boxed for a fallback none (it is lent,
/// [`Stack::push_lent`], and its kernel gets it back), and [`trace`](crate::trace) links a tensor
/// an op returned to the ops that read it (`%n`), whatever the tensor type.
///
/// ```
/// use std::fmt;
/// use std::sync::Arc;
/// use switchyard::boxing::{SharedTensor, TensorValue};
/// use switchyard::{DispatchArg, DispatchKeySet, FromValue, ToValue, Value, boxable_tensor};
///
/// #[derive(Debug)]
/// pub struct Grid { rows: usize, cols: usize }
///
/// impl TensorValue for Grid {
///     fn dispatch_keys(&self) -> DispatchKeySet { DispatchKeySet::CPU_NAIVE }
///     fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         write!(f, "Grid[{}, {}]", self.rows, self.cols)
///     }
/// }
///
/// #[derive(Clone, Debug)]
/// pub struct GridTensor(Arc<Grid>);
///
/// impl SharedTensor for GridTensor {
///     type Shared = Grid;
///     fn shared(&self) -> &Arc<Grid> { &self.0 }
///     fn from_shared(shared: Arc<Grid>) -> Self { GridTensor(shared) }
/// }
/// impl DispatchArg for GridTensor {
///     fn dispatch_keys(&self) -> DispatchKeySet { self.0.dispatch_keys() }
/// }
/// boxable_tensor!(GridTensor);
///
/// let t = GridTensor(Arc::new(Grid { rows: 2, cols: 3 }));
/// let boxed = t.to_value();
/// assert_eq!(boxed.to_string(), "Grid[2, 3]");
/// let back = GridTensor::from_value(boxed).unwrap();
/// assert!(Arc::ptr_eq(&back.0, &t.0)); // the same tensor, not a copy
/// assert!(GridTensor::from_value(Value::Int(1)).is_err());
/// ```
#[macro_export]
macro_rules! boxable_tensor {
    ($ty:ty) => {
        #[diagnostic::do_not_recommend]
        impl $crate::ToValue for $ty {
            #[inline(always)]
            fn to_value(&self) -> $crate::Value {
                $crate::Value::Tensor($crate::boxing::BoxedTensor::new(::std::sync::Arc::clone(
                    $crate::boxing::SharedTensor::shared(self),
                )))
            }

            #[inline(always)]
            fn into_value(self) -> $crate::Value {
                $crate::Value::Tensor($crate::boxing::BoxedTensor::new(
                    $crate::boxing::SharedTensor::into_shared(self),
                ))
            }

            #[inline(always)]
            fn push_onto<'s>(&'s self, stack: &mut $crate::Stack<'s>) {
                stack.push_lent(self);
            }
        }

        #[diagnostic::do_not_recommend]
        impl $crate::FromValue for $ty {
            #[inline(always)]
            fn from_value(
                value: $crate::Value,
            ) -> ::core::result::Result<Self, $crate::boxing::TypeMismatch> {
                match value {
                    $crate::Value::Tensor(boxed) => {
                        match boxed.downcast::<<$ty as $crate::boxing::SharedTensor>::Shared>() {
                            ::core::result::Result::Ok(shared) => ::core::result::Result::Ok(
                                <$ty as $crate::boxing::SharedTensor>::from_shared(shared),
                            ),
                            ::core::result::Result::Err(boxed) => {
                                ::core::result::Result::Err($crate::boxing::TypeMismatch::new(
                                    ::core::stringify!($ty),
                                    &$crate::Value::Tensor(boxed),
                                ))
                            }
                        }
                    }
                    other => ::core::result::Result::Err($crate::boxing::TypeMismatch::new(
                        ::core::stringify!($ty),
                        &other,
                    )),
                }
            }

            #[inline(always)]
            fn from_lent<'s>(stack: &mut $crate::Stack<'s>) -> ::core::option::Option<&'s Self> {
                stack.pop_lent::<Self>()
            }

            #[inline(always)]
            fn pop_from(stack: &mut $crate::Stack<'_>) -> ::core::option::Option<Self> {
                stack
                    .pop_tensor::<<$ty as $crate::boxing::SharedTensor>::Shared>()
                    .map(<$ty as $crate::boxing::SharedTensor>::from_shared)
            }
        }

        $crate::__owned_boxing!($ty);
    };
}

/// What [`boxable!`](crate::boxable) and [`boxable_tensor!`](crate::boxable_tensor) share once
/// `ToValue` and `FromValue` exist: the owned argument form (`Unbox`, a clone out of its holder)
/// and `From<T>`/`From<&T>` for `Value`. Only implements safe traits; not for direct use.
#[doc(hidden)]
#[macro_export]
macro_rules! __owned_boxing {
    ($ty:ty) => {
        #[diagnostic::do_not_recommend]
        impl<'a> $crate::boxing::Unbox<'a> for $ty {
            type Holder = $ty;
            fn unbox(holder: &'a mut $ty) -> Self {
                ::core::clone::Clone::clone(holder)
            }
            fn boxed(&self) -> $crate::Value {
                $crate::ToValue::to_value(self)
            }
        }

        impl ::core::convert::From<$ty> for $crate::Value {
            fn from(value: $ty) -> $crate::Value {
                $crate::ToValue::to_value(&value)
            }
        }

        impl ::core::convert::From<&$ty> for $crate::Value {
            fn from(value: &$ty) -> $crate::Value {
                $crate::ToValue::to_value(value)
            }
        }
    };
}
