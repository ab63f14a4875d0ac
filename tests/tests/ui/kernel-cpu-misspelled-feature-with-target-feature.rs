use switchyard::ops::neg;
use switchyard::{Tensor, kernel};

// `fma3` is not a feature name (`fma` is): one error, on the string, and none about
// `#[target_feature]` needing `cpu`.
#[kernel(op = "neg", key = CpuSimd, cpu = "avx2,fma3")]
#[target_feature(enable = "avx2,fma")]
fn neg_avx2(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
