use switchyard::{Tensor, op};

pub struct Padding {
    pub left: usize,
    pub right: usize,
}

#[op(name = "pad")]
pub fn pad(x: &Tensor, padding: Padding) -> Tensor;

fn main() {}
