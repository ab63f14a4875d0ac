use switchyard::ops::mul;
use switchyard::{Tensor, kernel};

#[kernel(op = "mul", key = CpuSimd)]
unsafe fn mul_avx2(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

fn main() {}
