//! Method forms of the ops that reshape, convert, move or write a tensor in place:
//! `x.transpose(0, 1)` is `ops::transpose(&x, 0, 1)`, `x.add_(&y)` is `ops::add_(&mut x, &y)`.
//! Each panics with the op's error; its `try_` twin returns it.

use switchyard::{DType, DispatchError};

use crate::Tensor;
use crate::ops;

macro_rules! methods {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident / $try_name:ident ($($arg:ident: $ty:ty),*) => $op:ident / $try_op:ident;
    )*) => {
        impl Tensor {$(
            $(#[doc = $doc])*
            #[doc = ""]
            #[doc = concat!("Panics with the error of [`Tensor::", stringify!($try_name), "`].")]
            #[track_caller]
            pub fn $name(&self $(, $arg: $ty)*) -> Tensor {
                ops::$op(self $(, $arg)*)
            }

            $(#[doc = $doc])*
            #[doc = ""]
            #[doc = concat!("The op [`ops::", stringify!($op), "()`]; errors instead of panicking.")]
            pub fn $try_name(&self $(, $arg: $ty)*) -> Result<Tensor, DispatchError> {
                ops::$try_op(self $(, $arg)*)
            }
        )*}
    };
}

methods! {
    /// This tensor with `shape` (one entry may be `-1`), sharing storage; no copy.
    view / try_view(shape: &[isize]) => view / try_view;
    /// This tensor with `shape` (one entry may be `-1`): a view when possible, else a copy.
    reshape / try_reshape(shape: &[isize]) => reshape / try_reshape;
    /// Dimensions `d0` and `d1` swapped (a view).
    transpose / try_transpose(d0: isize, d1: isize) => transpose / try_transpose;
    /// Dimensions reordered: dimension `i` of the result is `dims[i]` of this one (a view).
    permute / try_permute(dims: &[isize]) => permute / try_permute;
    /// Elements `start..start + len` along `dim` (a view).
    narrow / try_narrow(dim: isize, start: isize, len: usize) => narrow / try_narrow;
    /// Elements `start..end` along `dim`, every `step`-th (a view).
    slice / try_slice(dim: isize, start: isize, end: isize, step: usize) => slice / try_slice;
    /// The sub-tensor at `index` along `dim`, without that dimension (a view).
    select / try_select(dim: isize, index: isize) => select / try_select;
    /// Broadcast to `shape` (a view; in-place writes into it are refused); `-1` keeps an extent.
    expand / try_expand(shape: &[isize]) => expand / try_expand;
    /// Without dimensions of extent 1 (`None`), or without `dim` if its extent is 1 (a view).
    squeeze / try_squeeze(dim: Option<isize>) => squeeze / try_squeeze;
    /// Without those of `dims` whose extent is 1 (a view).
    squeeze_dims / try_squeeze_dims(dims: &[isize]) => squeeze_dims / try_squeeze_dims;
    /// With a new dimension of extent 1 at `dim` (a view).
    unsqueeze / try_unsqueeze(dim: isize) => unsqueeze / try_unsqueeze;
    /// The elements laid out row-major in a storage of their own (this tensor if they are).
    contiguous / try_contiguous() => contiguous / try_contiguous;
    /// Converted to `dtype` (this tensor if it has it).
    to_dtype / try_to_dtype(dtype: DType) => to_dtype / try_to_dtype;
}

impl Tensor {
    /// The transpose of a 2-dimensional tensor (a view); panics for other ranks.
    #[track_caller]
    pub fn t(&self) -> Tensor {
        self.transpose(0, 1)
    }
}

macro_rules! in_place_methods {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident / $try_name:ident ($($arg:ident: $ty:ty),*);
    )*) => {
        impl Tensor {$(
            $(#[doc = $doc])*
            #[doc = ""]
            #[doc = concat!("Panics with the error of [`Tensor::", stringify!($try_name), "`].")]
            #[track_caller]
            pub fn $name(&mut self $(, $arg: $ty)*) {
                ops::$name(self $(, $arg)*)
            }

            $(#[doc = $doc])*
            #[doc = ""]
            #[doc = concat!("The op [`ops::", stringify!($name), "()`]; errors instead of \
                             panicking, and then has written nothing.")]
            pub fn $try_name(&mut self $(, $arg: $ty)*) -> Result<(), DispatchError> {
                ops::$try_name(self $(, $arg)*)
            }
        )*}
    };
}

in_place_methods! {
    /// Writes `src` into this tensor's elements (broadcast to its shape, converted to its dtype).
    copy_ / try_copy_(src: &Tensor);
    /// Sets every element to `value` (converted to this tensor's dtype).
    fill_ / try_fill_(value: f64);
    /// Sets every element to zero.
    zero_ / try_zero_();
    /// `self += y` in place (`y` broadcast to this tensor's shape).
    add_ / try_add_(y: &Tensor);
    /// `self -= y` in place (`y` broadcast to this tensor's shape).
    sub_ / try_sub_(y: &Tensor);
    /// `self *= y` in place (`y` broadcast to this tensor's shape).
    mul_ / try_mul_(y: &Tensor);
    /// `self /= y` in place (`y` broadcast to this tensor's shape).
    div_ / try_div_(y: &Tensor);
    /// `self = -self` in place.
    neg_ / try_neg_();
    /// `self = max(self, 0)` in place.
    relu_ / try_relu_();
    /// `self = e^self` in place.
    exp_ / try_exp_();
}
