use switchyard::{Tensor, op};

pub struct Padding {
    pub left: usize,
    pub right: usize,
}

// Taken by reference, and `unboxed`, so that the only error is the missing `DispatchArg`: once,
// on the whole type.
#[op(name = "pad_ref", unboxed)]
pub fn pad_ref(x: &Tensor, padding: &Padding) -> Tensor;

fn main() {}
