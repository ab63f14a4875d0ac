//! An op `twin` on line 6, column 1, like `twin_b.rs`'s: their kernel slices must not collide.

use switchyard::{Tensor, kernel, op};

#[op(name = "hygiene::twin_a")]
pub fn twin(x: &Tensor) -> f32;

#[kernel(op = twin, key = CpuNaive)]
fn twin_naive(x: &Tensor) -> f32 {
    x.as_slice::<f32>().expect("a CPU tensor")[0] + 1.0
}
