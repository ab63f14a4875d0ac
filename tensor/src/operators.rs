//! Arithmetic operators: `&a + &b` is [`ops::add`](crate::ops::add), and so on for `-`, `*`, `/`
//! and unary `-`, on tensors and references to them in any mix. Like the ops they call, they
//! panic with the op's error (an incompatible shape, a device mismatch); call the `try_` ops to
//! handle it.

use std::ops::{Add, Div, Mul, Neg, Sub};

use crate::Tensor;
use crate::ops;

macro_rules! binary_operator {
    ($($trait:ident $method:ident => $op:ident;)*) => {$(
        impl $trait<&Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                ops::$op(self, rhs)
            }
        }

        impl $trait<Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                ops::$op(self, &rhs)
            }
        }

        impl $trait<&Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                ops::$op(&self, rhs)
            }
        }

        impl $trait<Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                ops::$op(&self, &rhs)
            }
        }
    )*};
}

binary_operator! {
    Add add => add;
    Sub sub => sub;
    Mul mul => mul;
    Div div => div;
}

impl Neg for &Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        ops::neg(self)
    }
}

impl Neg for Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        ops::neg(&self)
    }
}
