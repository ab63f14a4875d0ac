use switchyard::{Tensor, kernel, op};

#[op]
pub fn gelu(x: &Tensor) -> Tensor;

#[kernel(op = "gleu", key = CpuNaive)]
fn gelu_naive(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
