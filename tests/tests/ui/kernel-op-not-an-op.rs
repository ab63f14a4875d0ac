use switchyard::{Tensor, kernel};

// A plain function, not declared with `#[op]`.
pub fn fused_mul_add(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

#[kernel(op = "fused_mul_add", key = CpuNaive)]
fn fused_mul_add_naive(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

fn main() {}
