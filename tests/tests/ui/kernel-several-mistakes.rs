use switchyard::{Tensor, kernel};

// Every mistake is reported at once, each on its own token.
#[kernel(op = "mull", key = Cpu, priority = 1)]
async fn mul_naive<T>(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

fn main() {}
