use switchyard::{Tensor, kernel};

// The op's `name` string of an op declared elsewhere: the Rust item is what `op =` takes.
#[kernel(op = "c::cube", key = CpuNaive)]
fn cube_naive(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
