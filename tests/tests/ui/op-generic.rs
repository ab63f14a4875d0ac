use switchyard::{Tensor, op};

#[op(name = "scale")]
pub fn scale<S: Into<f32>>(x: &Tensor, factor: S) -> Tensor;

fn main() {}
