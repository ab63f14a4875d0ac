use switchyard::ops::neg;
use switchyard::{Tensor, kernel};

#[kernel(op = "neg", key = CpuSimd, cpu = "avx2,neon")]
fn neg_simd(x: &Tensor) -> Tensor {
    x.clone()
}

#[kernel(op = "neg", key = CpuSimd, cpu = "simd128,neon")]
fn neg_wasm_arm(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
