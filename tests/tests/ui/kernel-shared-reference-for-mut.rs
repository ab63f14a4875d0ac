use switchyard::{Tensor, kernel, op};

#[op(name = "ui::add_")]
pub fn add_(x: &mut Tensor, y: &Tensor) -> Tensor;

// The op writes `x`; a kernel that takes `&Tensor` could not.
#[kernel(op = add_, key = CpuNaive)]
fn add_naive(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

fn main() {}
