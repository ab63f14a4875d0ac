use switchyard::{Tensor, op};

#[op(name = "neg2", alias = "negate")]
pub fn neg2(x: &Tensor) -> Tensor;

fn main() {}
