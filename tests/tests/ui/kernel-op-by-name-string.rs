use switchyard::{Tensor, kernel, op};

#[op(name = "nc::twice")]
pub fn twice(x: &Tensor) -> Tensor;

// `op` names the Rust item (`twice`), not the op's `name` string.
#[kernel(op = "nc::twice", key = CpuNaive)]
fn twice_naive(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
