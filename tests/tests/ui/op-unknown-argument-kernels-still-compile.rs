use switchyard::{Tensor, kernel, op};

// An unknown argument is one error: the op is still generated, so its kernel and callers compile.
#[op(name = "neg3", alias = "negate")]
pub fn neg3(x: &Tensor) -> Tensor;

#[kernel(op = neg3, key = CpuNaive)]
fn neg3_naive(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {
    let _ = neg3(&Tensor::scalar(1.0));
}
