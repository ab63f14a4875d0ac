//! Conversions between typed arguments and results and [`Value`]s.

use super::stack::Stack;
use super::value::Value;
pub use crate::error::TypeMismatch;

/// Boxes a value: every argument and result type of a boxable op implements it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be boxed into a `switchyard::Value`",
    label = "this type has no boxed form",
    note = "every argument and result of an op converts to and from `Value`, so that fallbacks \
            (tracing, profiling) and `call_boxed` can handle the op",
    note = "implement `ToValue` and `FromValue` (`switchyard::boxable!(YourType);` does both), or \
            opt the op out of boxing with `#[op(unboxed)]`"
)]
pub trait ToValue {
    /// The boxed form.
    fn to_value(&self) -> Value;

    /// The boxed form of an owned value: by default [`ToValue::to_value`]; a tensor type moves
    /// its handle's reference count into the value instead of taking another
    /// ([`boxable_tensor!`](crate::boxable_tensor) implements it).
    #[inline]
    fn into_value(self) -> Value
    where
        Self: Sized,
    {
        self.to_value()
    }

    /// Pushes the value onto a stack that may borrow it for `'s`, as a typed call boxed for a
    /// fallback does with its arguments: by default its boxed form ([`ToValue::to_value`]); a
    /// tensor type lends itself instead ([`Stack::push_lent`]: no reference count), which is
    /// what [`boxable_tensor!`](crate::boxable_tensor) implements.
    #[inline]
    fn push_onto<'s>(&'s self, stack: &mut Stack<'s>) {
        stack.push_with(|| self.to_value());
    }
}

/// Unboxes an owned value; fails when the value holds another type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be unboxed from a `switchyard::Value`",
    label = "this type has no boxed form",
    note = "implement `ToValue` and `FromValue` (`switchyard::boxable!(YourType);` does both), or \
            opt the op out of boxing with `#[op(unboxed)]`"
)]
pub trait FromValue: Sized {
    /// The typed value, or what was found instead.
    fn from_value(value: Value) -> Result<Self, TypeMismatch>;

    /// Pops the top value of `stack` if the stack lent it ([`ToValue::push_onto`]) and it is a
    /// `Self`, and returns it borrowed: how a typed kernel reached through a boxed fallback gets
    /// back the very tensors the typed call passed, with no reference count. By default `None`,
    /// leaving the value (it is then popped and unboxed owned, [`FromValue::from_value`]); a
    /// tensor type returns [`Stack::pop_lent`], which is what
    /// [`boxable_tensor!`](crate::boxable_tensor) implements.
    #[inline]
    fn from_lent<'s>(stack: &mut Stack<'s>) -> Option<&'s Self> {
        let _ = stack;
        None
    }

    /// Pops the top value of `stack` and unboxes it where it lies, if it can (a number, a flag,
    /// a tensor of this type: [`Stack::pop_tensor`]): how a result, or an owned argument, is
    /// unboxed without copying the whole value, whose slot was written moments ago (a copy
    /// reads it back wider than it was written, which stalls the CPU's store forwarding). By
    /// default `None`, leaving the value (it is then popped and unboxed with
    /// [`FromValue::from_value`]), as it is for a value of another type or out of range, which
    /// `from_value` then reports.
    #[inline]
    fn pop_from(stack: &mut Stack<'_>) -> Option<Self> {
        let _ = stack;
        None
    }
}

/// An op argument's boxed form, both ways. Boxing is [`ToValue`]; unboxing may borrow: the value
/// is first converted into an owned `Holder` (kept alive by the caller), then the argument is
/// taken from it (`&Tensor` from a `Tensor`, `&[usize]` from a `Vec<usize>`, `&mut T` from a
/// `T`, which the kernel may then write).
///
/// A *written* argument (`&mut T`) goes both ways in a boxed call: after the kernel returns, its
/// holder is boxed again ([`Unbox::written`]) and handed back on the stack, under the result
/// (see [`Stack`](crate::Stack)).
///
/// Generated code names only this trait for arguments, so an unboxable argument type is one
/// error, on the type.
#[diagnostic::on_unimplemented(
    message = "op argument type `{Self}` cannot be unboxed from a `switchyard::Value`",
    label = "this type has no boxed form",
    note = "implement `ToValue` and `FromValue` (`switchyard::boxable!(YourType);` does both), or \
            opt the op out of boxing with `#[op(unboxed)]`"
)]
pub trait Unbox<'a>: Sized {
    /// The owned value the argument is taken from.
    type Holder: FromValue + ToValue;
    /// The argument, taken from its holder (mutably, so that a `&mut T` argument can be).
    fn unbox(holder: &'a mut Self::Holder) -> Self;
    /// Unboxes the holder from a value.
    fn holder(value: Value) -> Result<Self::Holder, TypeMismatch> {
        Self::Holder::from_value(value)
    }
    /// Pops the argument off a stack, which may have lent it, into its holder: by default
    /// [`Unbox::holder`] of its owned value; a `&T` keeps a lent `T` borrowed ([`Held`]).
    #[inline]
    fn take(stack: &mut Stack<'a>) -> Result<Self::Holder, TypeMismatch> {
        Self::holder(stack.pop_arg())
    }
    /// The argument's boxed form.
    fn boxed(&self) -> Value;
    /// Pushes the argument for a boxed call that lives no longer than it: by default its
    /// boxed form; a `&T` whose `T` lends itself ([`ToValue::push_onto`], tensors) is lent.
    #[inline]
    fn lend(&self, stack: &mut Stack<'a>) {
        stack.push_with(|| self.boxed());
    }
    /// The holder boxed again once the kernel has run: what a written (`&mut T`) argument hands
    /// back to its caller. Generated code calls it for `&mut` parameters only.
    fn written(holder: &Self::Holder) -> Value {
        holder.to_value()
    }
}

/// A result's boxed form, both ways; generated code names only this trait for results, so an
/// unboxable result type is reported on the type.
#[diagnostic::on_unimplemented(
    message = "op result type `{Self}` cannot be boxed into a `switchyard::Value`",
    label = "this type has no boxed form",
    note = "every argument and result of an op converts to and from `Value`, so that fallbacks \
            (tracing, profiling) and `call_boxed` can handle the op",
    note = "implement `ToValue` and `FromValue` (`switchyard::boxable!(YourType);` does both), or \
            opt the op out of boxing with `#[op(unboxed)]`"
)]
pub trait BoxedResult: Sized {
    /// Boxes the result.
    fn boxed(&self) -> Value;
    /// Unboxes the result.
    fn unboxed(value: Value) -> Result<Self, TypeMismatch>;
    /// Boxes an owned result: by default [`BoxedResult::boxed`].
    #[inline]
    fn into_boxed(self) -> Value {
        self.boxed()
    }
    /// Pops the result off a stack where it lies, if it can ([`FromValue::pop_from`]); by
    /// default `None` (it is popped and unboxed with [`BoxedResult::unboxed`]).
    #[inline]
    fn unboxed_from(stack: &mut Stack<'_>) -> Option<Self> {
        let _ = stack;
        None
    }
}

#[diagnostic::do_not_recommend]
impl<T: ToValue + FromValue> BoxedResult for T {
    #[inline]
    fn boxed(&self) -> Value {
        self.to_value()
    }
    #[inline]
    fn unboxed(value: Value) -> Result<Self, TypeMismatch> {
        T::from_value(value)
    }
    #[inline]
    fn into_boxed(self) -> Value {
        self.into_value()
    }
    #[inline]
    fn unboxed_from(stack: &mut Stack<'_>) -> Option<Self> {
        T::pop_from(stack)
    }
}

// `TypeMismatch` itself is declared in `error` (below this layer), which holds it in
// `ErrorKind::BoxedType`; what builds one from a `Value` lives here.
impl TypeMismatch {
    /// `expected` was needed; `value` was found.
    #[cold]
    pub fn new(expected: &'static str, value: &Value) -> Self {
        TypeMismatch {
            expected,
            found: format!("{} `{value}`", value.kind()),
        }
    }
}

// ---- references and containers ----

#[diagnostic::do_not_recommend]
impl<T: ToValue + ?Sized> ToValue for &T {
    #[inline]
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
    #[inline]
    fn push_onto<'s>(&'s self, stack: &mut Stack<'s>) {
        (**self).push_onto(stack);
    }
}

/// A borrowed argument: lent through the stack where its type lends itself (tensors), so the
/// kernel gets the caller's own value back; otherwise unboxed into an owned holder.
#[diagnostic::do_not_recommend]
impl<'a, T: FromValue + ToValue> Unbox<'a> for &'a T {
    type Holder = Held<'a, T>;
    #[inline]
    fn unbox(holder: &'a mut Held<'a, T>) -> Self {
        match holder {
            Held::Owned(value) => value,
            Held::Lent(value) => value,
        }
    }
    #[inline]
    fn take(stack: &mut Stack<'a>) -> Result<Held<'a, T>, TypeMismatch> {
        if let Some(value) = T::from_lent(stack) {
            return Ok(Held::Lent(value));
        }
        match T::pop_from(stack) {
            Some(value) => Ok(Held::Owned(value)),
            None => take_owned(stack),
        }
    }
    #[inline]
    fn boxed(&self) -> Value {
        self.to_value()
    }
    #[inline]
    fn lend(&self, stack: &mut Stack<'a>) {
        T::push_onto(*self, stack);
    }
}

/// A `&T` argument's holder from an owned value: out of line, so that taking a lent one stays
/// small enough to inline.
#[inline(never)]
fn take_owned<'a, T: FromValue>(stack: &mut Stack<'a>) -> Result<Held<'a, T>, TypeMismatch> {
    T::from_value(stack.pop_arg()).map(Held::Owned)
}

/// What a `&T` argument of a boxed call is taken from ([`Unbox::take`]): the caller's own `T`,
/// when the stack lent it, or a `T` unboxed from the stack's owned value.
#[derive(Debug)]
pub enum Held<'a, T> {
    /// Unboxed from an owned value.
    Owned(T),
    /// The value the stack lent.
    Lent(&'a T),
}

#[diagnostic::do_not_recommend]
impl<T: FromValue> FromValue for Held<'_, T> {
    #[inline]
    fn from_value(value: Value) -> Result<Self, TypeMismatch> {
        T::from_value(value).map(Held::Owned)
    }
}

#[diagnostic::do_not_recommend]
impl<T: ToValue> ToValue for Held<'_, T> {
    fn to_value(&self) -> Value {
        match self {
            Held::Owned(value) => value.to_value(),
            Held::Lent(value) => value.to_value(),
        }
    }
}

#[diagnostic::do_not_recommend]
impl<T: ToValue + ?Sized> ToValue for &mut T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

/// A written argument: boxed as its value; unboxed into an owned `T` that the kernel writes
/// through the `&mut`, and that goes back to the caller after the call ([`Unbox::written`]).
#[diagnostic::do_not_recommend]
impl<'a, T: FromValue + ToValue> Unbox<'a> for &'a mut T {
    type Holder = T;
    fn unbox(holder: &'a mut T) -> Self {
        holder
    }
    fn boxed(&self) -> Value {
        self.to_value()
    }
}

#[diagnostic::do_not_recommend]
impl<T: ToValue> ToValue for [T] {
    fn to_value(&self) -> Value {
        Value::List(self.iter().map(ToValue::to_value).collect())
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T: FromValue + ToValue> Unbox<'a> for &'a [T] {
    type Holder = Vec<T>;
    fn unbox(holder: &'a mut Vec<T>) -> Self {
        holder
    }
    fn boxed(&self) -> Value {
        self.to_value()
    }
}

#[diagnostic::do_not_recommend]
impl<T: ToValue, const N: usize> ToValue for [T; N] {
    fn to_value(&self) -> Value {
        self.as_slice().to_value()
    }
}

#[diagnostic::do_not_recommend]
impl<T: ToValue> ToValue for Vec<T> {
    fn to_value(&self) -> Value {
        self.as_slice().to_value()
    }
}

#[diagnostic::do_not_recommend]
impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(value: Value) -> Result<Self, TypeMismatch> {
        match value {
            Value::List(items) => items.into_iter().map(T::from_value).collect(),
            other => Err(TypeMismatch::new("list", &other)),
        }
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T: FromValue + ToValue + Clone> Unbox<'a> for Vec<T> {
    type Holder = Vec<T>;
    fn unbox(holder: &'a mut Vec<T>) -> Self {
        holder.clone()
    }
    fn boxed(&self) -> Value {
        self.to_value()
    }
}

#[diagnostic::do_not_recommend]
impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::None, ToValue::to_value)
    }
}

#[diagnostic::do_not_recommend]
impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: Value) -> Result<Self, TypeMismatch> {
        match value {
            Value::None => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T: FromValue + ToValue> Unbox<'a> for Option<&'a T> {
    type Holder = Option<T>;
    fn unbox(holder: &'a mut Option<T>) -> Self {
        holder.as_ref()
    }
    fn boxed(&self) -> Value {
        self.to_value()
    }
}

#[diagnostic::do_not_recommend]
impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Str(self.to_owned())
    }
}

#[diagnostic::do_not_recommend]
impl<'a> Unbox<'a> for &'a str {
    type Holder = String;
    fn unbox(holder: &'a mut String) -> Self {
        holder
    }
    fn boxed(&self) -> Value {
        self.to_value()
    }
}
