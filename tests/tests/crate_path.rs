//! `crate = path`: generated code finds switchyard through a re-export, for crates that wrap it.

mod facade {
    pub use switchyard;
}

use facade::switchyard::{Tensor, kernel, op};

#[op(name = "facade::double", crate = crate::facade::switchyard)]
pub fn double(x: &Tensor) -> Tensor;

#[kernel(op = "double", key = CpuNaive, crate = crate::facade::switchyard)]
fn double_naive(x: &Tensor) -> Tensor {
    Tensor::from_fn(x.shape(), |i| 2.0 * x.as_slice::<f32>().unwrap()[i])
}

#[test]
fn ops_and_kernels_work_through_a_reexport() {
    assert_eq!(
        double(&Tensor::vector(&[1.5, -2.0])).to_vec::<f32>(),
        [3.0, -4.0]
    );
    assert_eq!(double::handle().name(), "facade::double");
}
