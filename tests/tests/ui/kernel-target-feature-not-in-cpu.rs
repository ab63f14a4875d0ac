use switchyard::ops::neg;
use switchyard::{Tensor, kernel};

// `cpu` must cover every feature `#[target_feature]` enables: the kernel is installed only where
// the features in `cpu` were detected.
#[kernel(op = "neg", key = CpuSimd, cpu = "avx2")]
#[target_feature(enable = "avx2,fma")]
fn neg_avx2(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
