use switchyard::ops::neg;
use switchyard::{Tensor, kernel};

#[kernel(op = "neg", key = CpuNaive, cpu = "avx2")]
fn neg_cpu(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
