//! `div` with a rounding mode, PyTorch's `div(x, y, rounding_mode="trunc" | "floor")`: the op
//! `div_rounded` and its [`Rounding`] argument. Its kernels live in `switchyard-backends`, its
//! derivative (zero for both operands, as PyTorch's) in the autograd formulas.

use switchyard::{DispatchArg, DispatchKeySet, op};

use crate::Tensor;

/// How [`div_rounded`](fn@div_rounded) rounds the quotient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Toward zero, as C's integer division (`rounding_mode="trunc"`): `-7 / 2 = -3`.
    Trunc,
    /// Toward negative infinity, as Python's `//` (`rounding_mode="floor"`): `-7 / 2 = -4`.
    Floor,
}

/// A rounding mode carries no device and no dtype: it leaves the dispatch keys alone.
// Not offered to a user whose own type lacks `DispatchArg`: rustc would list it as an example.
#[diagnostic::do_not_recommend]
impl DispatchArg for Rounding {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::EMPTY
    }
}
switchyard::boxable!(Rounding);

/// `x / y` rounded as `mode` says, elementwise, broadcast and promoted as [`add`](fn@crate::ops::add)
/// (the 0-d rule included), PyTorch's `div(x, y, rounding_mode=…)`: integers stay integers
/// (`Trunc` divides as C, `Floor` as Python's `//`; a zero divisor is an error naming the op, its
/// dtypes and shapes), floats stay floats (`Trunc` is `trunc(x / y)`; `Floor` is the quotient
/// PyTorch computes from `fmod`, so `-0.0`, infinities and NaN come out as there). Two `bool`
/// operands are refused. Its gradient is zero for both operands, as PyTorch's.
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{Tensor, ops::{self, Rounding}};
/// let x = Tensor::from_vec(vec![7i64, -7], &[2]).unwrap();
/// let y = Tensor::from_vec(vec![2i64, 2], &[2]).unwrap();
/// assert_eq!(ops::div_rounded(&x, &y, Rounding::Trunc).to_vec::<i64>(), [3, -3]);
/// assert_eq!(ops::div_rounded(&x, &y, Rounding::Floor).to_vec::<i64>(), [3, -4]);
/// ```
#[op(name = "switchyard::div_rounded")]
pub fn div_rounded(x: &Tensor, y: &Tensor, mode: Rounding) -> Tensor;
