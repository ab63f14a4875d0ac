//! The standard ops' autocast policies: one kernel at `Autocast` per op that has one, each
//! casting its arguments ([`cast`]) and calling the op again without autocast, as a downstream
//! op's policy does.

use switchyard::{Result, kernel};

use super::{Policy, below_autocast, cast, cast_all};
use crate::ops::{
    self, Rounding, add, cat, cross_entropy, div, div_rounded, exp, log, log_softmax, matmul, mean,
    mean_dim, mul, softmax, stack, sub, sum, sum_dim, where_cond,
};
use crate::tensor::Tensor;

macro_rules! one_tensor {
    ($($name:ident: $op:literal => $call:ident ($($arg:ident: $ty:ty),*) as $policy:ident;)*) => {$(
        #[kernel(op = $op, key = Autocast)]
        fn $name(x: &Tensor $(, $arg: $ty)*) -> Result<Tensor> {
            let [x] = cast(Policy::$policy, [x])?;
            below_autocast(|| ops::$call(&x $(, $arg)*))
        }
    )*};
}

one_tensor! {
    exp_autocast: "exp" => try_exp() as Float32;
    log_autocast: "log" => try_log() as Float32;
    sum_autocast: "sum" => try_sum() as Float32;
    mean_autocast: "mean" => try_mean() as Float32;
    sum_dim_autocast: "sum_dim" => try_sum_dim(dims: &[isize], keepdim: bool) as Float32;
    mean_dim_autocast: "mean_dim" => try_mean_dim(dims: &[isize], keepdim: bool) as Float32;
    softmax_autocast: "softmax" => try_softmax(dim: isize) as Float32;
    log_softmax_autocast: "log_softmax" => try_log_softmax(dim: isize) as Float32;
}

macro_rules! two_tensors {
    ($($name:ident: $op:literal => $call:ident as $policy:ident;)*) => {$(
        #[kernel(op = $op, key = Autocast)]
        fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            let [x, y] = cast(Policy::$policy, [x, y])?;
            below_autocast(|| ops::$call(&x, &y))
        }
    )*};
}

two_tensors! {
    matmul_autocast: "matmul" => try_matmul as Lower;
    add_autocast: "add" => try_add as Promote;
    sub_autocast: "sub" => try_sub as Promote;
    mul_autocast: "mul" => try_mul as Promote;
    div_autocast: "div" => try_div as Promote;
    // The targets are integers: only the logits are cast.
    cross_entropy_autocast: "cross_entropy" => try_cross_entropy as Float32;
}

#[kernel(op = div_rounded, key = Autocast)]
fn div_rounded_autocast(x: &Tensor, y: &Tensor, mode: Rounding) -> Result<Tensor> {
    let [x, y] = cast(Policy::Promote, [x, y])?;
    below_autocast(|| ops::try_div_rounded(&x, &y, mode))
}

#[kernel(op = where_cond, key = Autocast)]
fn where_autocast(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let [x, y] = cast(Policy::Promote, [x, y])?;
    below_autocast(|| ops::try_where_cond(cond, &x, &y))
}

#[kernel(op = "cat", key = Autocast)]
fn cat_autocast(xs: &[Tensor], dim: isize) -> Result<Tensor> {
    let xs = cast_all(Policy::Promote, xs)?;
    below_autocast(|| ops::try_cat(&xs, dim))
}

#[kernel(op = "stack", key = Autocast)]
fn stack_autocast(xs: &[Tensor], dim: isize) -> Result<Tensor> {
    let xs = cast_all(Policy::Promote, xs)?;
    below_autocast(|| ops::try_stack(&xs, dim))
}
