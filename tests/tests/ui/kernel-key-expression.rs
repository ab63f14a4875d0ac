use switchyard::ops::mul;
use switchyard::{Tensor, kernel};

#[kernel(op = "mul", key = switchyard::DispatchKey::ALL[0])]
fn mul_naive(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

fn main() {}
