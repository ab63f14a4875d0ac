use switchyard::{Tensor, op};

#[op(name = "add_pair")]
pub fn add_pair((x, y): (&Tensor, &Tensor)) -> Tensor;

fn main() {}
