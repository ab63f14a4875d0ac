use switchyard::{Tensor, op};

pub struct Padding {
    pub left: usize,
    pub right: usize,
}

// `unboxed`, so that the only error is the missing `DispatchArg`.
#[op(name = "pad", unboxed)]
pub fn pad(x: &Tensor, padding: Padding) -> Tensor;

fn main() {}
