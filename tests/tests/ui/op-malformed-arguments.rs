use switchyard::{Tensor, kernel, op};

// `name: "…"` instead of `name = "…"`: one error, and the op and its kernel are still generated,
// so that nothing else is reported.
#[op(name: "halve")]
pub fn halve(x: &Tensor) -> Tensor;

#[kernel(op = halve, key = CpuNaive)]
fn halve_naive(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {
    let _ = halve(&Tensor::scalar(1.0));
    let _ = try_halve(&Tensor::scalar(1.0));
}
