use switchyard::{Tensor, op};

/// A result element with no boxed form.
pub struct Stats {
    pub mean: f32,
}

#[op]
pub fn with_stats(x: &Tensor) -> (Tensor, Stats);

fn main() {}
