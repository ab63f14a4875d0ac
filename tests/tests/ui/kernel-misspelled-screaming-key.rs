use switchyard::ops::mul;
use switchyard::{Tensor, kernel};

#[kernel(op = mul, key = CPU_SMID)]
fn mul_simd(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

fn main() {}
