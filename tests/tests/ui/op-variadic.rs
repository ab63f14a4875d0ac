use switchyard::{Tensor, op};

#[op(name = "concat")]
pub fn concat(first: &Tensor, rest: ...) -> Tensor;

fn main() {}
