//! Boxed calls: every op can also be called with a [`Stack`] of [`Value`]s, and every boxed
//! fallback sees its arguments that way (DESIGN §4).
//!
//! The typed path never boxes: a typed call that lands on a boxed slot (a fallback) is boxed there,
//! by the adapter the `#[op]` macro generates, and unboxed again when the fallback redispatches to
//! a typed kernel. Conversions are the traits [`ToValue`] (box), [`FromValue`] (unbox an owned
//! value) and [`Unbox`] (unbox an argument that may borrow, like `&Tensor` or `&[usize]`).

mod convert;
mod stack;
mod value;

pub use convert::{BoxedResult, FromValue, ToValue, TypeMismatch, Unbox};
pub use stack::Stack;
pub use value::{Custom, Value};

/// Gives a user type a boxed form (the `Custom` escape hatch), so that ops may take and return
/// it: implements [`ToValue`], [`FromValue`] and [`Unbox`].
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
        impl $crate::ToValue for $ty {
            fn to_value(&self) -> $crate::Value {
                $crate::Value::custom(
                    ::core::clone::Clone::clone(self),
                    $crate::DispatchArg::dispatch_keys(self),
                )
            }
        }

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

        impl<'a> $crate::boxing::Unbox<'a> for $ty {
            type Holder = $ty;
            fn unbox(holder: &'a $ty) -> Self {
                ::core::clone::Clone::clone(holder)
            }
            fn boxed(&self) -> $crate::Value {
                $crate::ToValue::to_value(self)
            }
        }
    };
}
