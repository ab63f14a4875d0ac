use switchyard::{Tensor, op};

/// A result type with no boxed form.
pub struct Stats {
    pub mean: f32,
}

#[op]
pub fn stats(x: &Tensor) -> Stats;

fn main() {}
