use switchyard::ops::mul;
use switchyard::{Tensor, kernel};

#[kernel(op = "mul", key = CpuNaive, key = CpuSimd)]
fn mul_naive(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

fn main() {}
