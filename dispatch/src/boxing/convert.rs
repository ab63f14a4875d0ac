//! Conversions between typed arguments and results and [`Value`]s.

use super::value::{Plain, Value};
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
    /// The argument's boxed form.
    fn boxed(&self) -> Value;
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
}

#[diagnostic::do_not_recommend]
impl<T: ToValue + FromValue> BoxedResult for T {
    fn boxed(&self) -> Value {
        self.to_value()
    }
    fn unboxed(value: Value) -> Result<Self, TypeMismatch> {
        T::from_value(value)
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
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T: FromValue + ToValue> Unbox<'a> for &'a T {
    type Holder = T;
    fn unbox(holder: &'a mut T) -> Self {
        holder
    }
    fn boxed(&self) -> Value {
        self.to_value()
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

// ---- owned leaf types ----

/// `ToValue`, `FromValue` and owned `Unbox` for a type with one `Value` variant.
macro_rules! leaf {
    ($ty:ty, $name:literal, |$v:ident| $to:expr, $variant:pat => $from:expr) => {
        #[diagnostic::do_not_recommend]
        impl ToValue for $ty {
            fn to_value(&self) -> Value {
                let $v = self;
                $to
            }
        }
        #[diagnostic::do_not_recommend]
        impl FromValue for $ty {
            fn from_value(value: Value) -> Result<Self, TypeMismatch> {
                match value {
                    $variant => $from,
                    #[allow(unreachable_patterns)]
                    other => Err(TypeMismatch::new($name, &other)),
                }
            }
        }
        owned_unbox!($ty);
    };
}

/// An owned argument is unboxed by cloning it out of its holder (for tensors, a reference count).
macro_rules! owned_unbox {
    ($($ty:ty),*) => {$(
        #[diagnostic::do_not_recommend]
        impl<'a> Unbox<'a> for $ty {
            type Holder = $ty;
            #[inline]
            fn unbox(holder: &'a mut $ty) -> Self {
                holder.clone()
            }
            #[inline]
            fn boxed(&self) -> Value {
                self.to_value()
            }
        }
        #[diagnostic::do_not_recommend]
        impl<'a> Unbox<'a> for Option<$ty> {
            type Holder = Option<$ty>;
            fn unbox(holder: &'a mut Option<$ty>) -> Self {
                holder.clone()
            }
            fn boxed(&self) -> Value {
                self.to_value()
            }
        }
    )*};
}

leaf!(String, "str", |s| Value::Str(s.clone()), Value::Str(s) => Ok(s));

/// `ToValue`, `FromValue` and owned `Unbox` for a type whose boxed form is a plain value
/// (`Value::into_plain`): unboxing it calls no drop glue.
macro_rules! plain {
    ($ty:ty, $name:expr, |$v:ident| $to:expr, |$p:ident| $from:expr) => {
        #[diagnostic::do_not_recommend]
        impl ToValue for $ty {
            #[inline]
            fn to_value(&self) -> Value {
                let $v = *self;
                $to
            }
        }
        #[diagnostic::do_not_recommend]
        impl FromValue for $ty {
            #[inline]
            fn from_value(value: Value) -> Result<Self, TypeMismatch> {
                let found = match value.into_plain() {
                    Ok($p) => match $from {
                        Some(unboxed) => return unboxed,
                        None => $p.value(),
                    },
                    Err(other) => other,
                };
                Err(TypeMismatch::new($name, &found))
            }
        }
        owned_unbox!($ty);
    };
}

plain!(bool, "bool", |b| Value::Bool(b), |p| match p {
    Plain::Bool(b) => Some(Ok(b)),
    _ => None,
});
plain!((), "None", |_u| Value::None, |p| match p {
    Plain::None => Some(Ok(())),
    _ => None,
});

/// Floats box as `Float(f64)`; an int is accepted where a float is expected, as in a Python call.
macro_rules! float {
    ($($ty:ty),*) => {$(
        plain!($ty, "float", |x| Value::Float(f64::from(x)), |p| match p {
            // Narrowing to `f32` rounds, as `f32` arithmetic would.
            Plain::Float(x) => Some(Ok(x as $ty)),
            Plain::Int(i) => Some(Ok(i as $ty)),
            _ => None,
        });
    )*};
}

float!(f32, f64);

/// Integers box as `Int(i64)`; unboxing checks the range.
macro_rules! int {
    ($($ty:ty),*) => {$(
        // Every integer type up to 64 bits fits; `u64`/`usize` above `i64::MAX` (no real shape
        // or index) saturates rather than wrapping into a negative number.
        plain!(
            $ty,
            concat!("int (", stringify!($ty), ")"),
            |n| Value::Int(i64::try_from(n).unwrap_or(i64::MAX)),
            |p| match p {
                Plain::Int(i) => Some(<$ty>::try_from(i).map_err(|_| {
                    TypeMismatch::new(concat!("int in range of ", stringify!($ty)), &Value::Int(i))
                })),
                _ => None,
            }
        );
    )*};
}

int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// Tuples (2 to 4 elements) box as `Value::Tuple`, element by element, so that an op may return
/// several results (`-> (Tensor, Tensor)`). An owned tuple argument is cloned out of its holder.
macro_rules! tuple {
    ($len:literal: $($t:ident $v:ident $i:tt),+) => {
        #[diagnostic::do_not_recommend]
        impl<$($t: ToValue),+> ToValue for ($($t,)+) {
            fn to_value(&self) -> Value {
                Value::Tuple(vec![$(self.$i.to_value()),+])
            }
        }
        #[diagnostic::do_not_recommend]
        impl<$($t: FromValue),+> FromValue for ($($t,)+) {
            fn from_value(value: Value) -> Result<Self, TypeMismatch> {
                let expected = concat!("a tuple of ", stringify!($len), " values");
                match value {
                    Value::Tuple(items) => match <[Value; $len]>::try_from(items) {
                        Ok([$($v),+]) => Ok(($($t::from_value($v)?,)+)),
                        Err(items) => Err(TypeMismatch::new(expected, &Value::Tuple(items))),
                    },
                    other => Err(TypeMismatch::new(expected, &other)),
                }
            }
        }
        #[diagnostic::do_not_recommend]
        impl<'a, $($t: FromValue + ToValue + Clone),+> Unbox<'a> for ($($t,)+) {
            type Holder = Self;
            fn unbox(holder: &'a mut Self) -> Self {
                holder.clone()
            }
            fn boxed(&self) -> Value {
                self.to_value()
            }
        }
    };
}

tuple!(2: A a 0, B b 1);
tuple!(3: A a 0, B b 1, C c 2);
tuple!(4: A a 0, B b 1, C c 2, D d 3);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(usize::from_value(3usize.to_value()), Ok(3));
        assert_eq!(f32::from_value(Value::Int(2)), Ok(2.0));
        assert_eq!(
            Vec::<usize>::from_value([1usize, 2].to_value()),
            Ok(vec![1, 2])
        );
        assert_eq!(Option::<bool>::from_value(Value::None), Ok(None));
        let mut holder = Vec::<usize>::from_value(vec![4usize].to_value()).unwrap();
        assert_eq!(<&[usize] as Unbox<'_>>::unbox(&mut holder), &[4]);
    }

    #[test]
    fn mismatches_say_what_was_found() {
        let err = usize::from_value(Value::Int(-1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected int in range of usize, found int `-1`"
        );
        let err = bool::from_value(Value::Str("x".into())).unwrap_err();
        assert_eq!(err.to_string(), "expected bool, found str `\"x\"`");
    }

    #[test]
    fn tuples_round_trip_element_by_element() {
        let value = (3usize, true).to_value();
        assert_eq!(value.to_string(), "(3, true)");
        assert_eq!(<(usize, bool)>::from_value(value), Ok((3, true)));
        let four = (1u8, 2i32, 3.5f64, String::from("x"));
        assert_eq!(
            <(u8, i32, f64, String)>::from_value(four.to_value()),
            Ok(four)
        );
    }

    #[test]
    fn tuple_mismatches_name_the_arity_and_the_element() {
        let err = <(usize, usize)>::from_value((1usize, 2usize, 3usize).to_value()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected a tuple of 2 values, found tuple `(1, 2, 3)`"
        );
        let err = <(usize, bool)>::from_value((1usize, 2usize).to_value()).unwrap_err();
        assert_eq!(err.to_string(), "expected bool, found int `2`");
        let err = <(usize, bool)>::from_value(Value::Int(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected a tuple of 2 values, found int `1`"
        );
    }
}
