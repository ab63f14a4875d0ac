use switchyard::{Device, Tensor, op};

#[op(name = "copy_to", mixes_devices = "yes")]
pub fn copy_to(x: &Tensor, device: Device) -> Tensor;

fn main() {}
