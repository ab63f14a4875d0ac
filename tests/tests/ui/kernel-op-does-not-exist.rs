use switchyard::{Tensor, kernel, op};

#[op]
pub fn relu(x: &Tensor) -> Tensor;

// `relu6` was never declared with `#[op]`.
#[kernel(op = relu6, key = CpuNaive)]
fn relu6_naive(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
