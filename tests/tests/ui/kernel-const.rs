use switchyard::ops::neg;
use switchyard::{Tensor, kernel};

#[kernel(op = "neg", key = CpuNaive)]
const fn neg_const(x: &Tensor) -> Tensor {
    let _ = x;
    todo!()
}

fn main() {}
