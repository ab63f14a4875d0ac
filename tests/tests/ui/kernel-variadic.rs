use switchyard::ops::neg;
use switchyard::{Tensor, kernel};

#[kernel(op = "neg", key = CpuNaive)]
fn neg_many(x: &Tensor, rest: ...) -> Tensor {
    x.clone()
}

fn main() {}
