//! The owned leaf types' conversions: strings, flags, numbers (plain values, unboxed without
//! calling the value's drop glue) and tuples.

use super::convert::{FromValue, ToValue, TypeMismatch, Unbox};
use super::stack::Stack;
use super::value::{Plain, Value};

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
            #[inline]
            fn pop_from(stack: &mut Stack<'_>) -> Option<Self> {
                stack.pop_read(|value| {
                    let $p = value.as_plain()?;
                    let unboxed: Option<Result<Self, TypeMismatch>> = $from;
                    unboxed?.ok()
                })
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
