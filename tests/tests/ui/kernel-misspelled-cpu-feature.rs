use switchyard::ops::{mul, neg};
use switchyard::{Tensor, kernel};

#[kernel(op = "mul", key = CpuSimd, cpu = "avx2,fmaa")]
fn mul_simd(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

#[kernel(op = "neg", key = CpuSimd, cpu = "AVX2")]
fn neg_simd(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
