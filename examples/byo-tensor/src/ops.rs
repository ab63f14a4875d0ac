//! The library's ops, declared once with `#[op]`; their kernels are in [`crate::kernels`].
//!
//! Names carry the library's prefix (`byo::add`): two ops with one name fail both, so a library
//! linked beside others keeps its names to itself.

use switchyard::op;

use crate::tensor::{Device, NdTensor};

/// `x + y`, elementwise; both of one shape, on one device.
#[op(name = "byo::add")]
pub fn add(x: &NdTensor, y: &NdTensor) -> NdTensor;

/// `x * y`, elementwise; both of one shape, on one device.
#[op(name = "byo::mul")]
pub fn mul(x: &NdTensor, y: &NdTensor) -> NdTensor;

/// The sum of all elements, as a tensor of shape `[]`.
#[op(name = "byo::sum")]
pub fn sum(x: &NdTensor) -> NdTensor;

/// `e^x`, elementwise. The host has a kernel, the accelerator none: on it, this op is a missing
/// kernel error that names the device.
#[op(name = "byo::exp")]
pub fn exp(x: &NdTensor) -> NdTensor;

/// `x` on `device` (the same tensor if it is there already). Its arguments may be on two
/// devices, so it is declared `mixes_devices`; the higher of the two keys (the accelerator's,
/// whenever it is involved) runs the copy.
#[op(name = "byo::to_device", mixes_devices)]
pub fn to_device(x: &NdTensor, device: Device) -> NdTensor;
