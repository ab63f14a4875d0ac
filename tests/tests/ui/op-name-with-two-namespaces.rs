use switchyard::{Tensor, op};

// A name has one namespace: `ns::name`.
#[op(name = "my_lib::nn::relu")]
pub fn relu(x: &Tensor) -> Tensor;

fn main() {
    // The op is still generated (with its function's name), so its callers compile.
    let _ = relu(&Tensor::scalar(1.0));
}
