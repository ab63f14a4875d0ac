use switchyard::{Tensor, op};

mod first {
    use super::*;

    #[op]
    pub fn twin(x: &Tensor) -> Tensor;
}

mod second {
    use super::*;

    // Without a namespace `twin` is this crate's, as `first::twin` is: one full name twice.
    #[op(name = "twin")]
    pub fn other(x: &Tensor) -> Tensor;
}

fn main() {}
