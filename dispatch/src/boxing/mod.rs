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

pub use convert::{FromValue, ToValue, TypeMismatch, Unbox};
pub use stack::Stack;
pub use value::{Custom, Value};
