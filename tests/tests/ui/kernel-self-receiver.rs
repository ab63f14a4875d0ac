use switchyard::ops::neg;
use switchyard::{Tensor, kernel};

struct Backend;

impl Backend {
    #[kernel(op = "neg", key = CpuNaive)]
    fn neg(&self, x: &Tensor) -> Tensor {
        x.clone()
    }
}

fn main() {
    let _ = Backend.neg(&Tensor::scalar(1.0));
}
