//! The standard ops. Declared here, once; their kernels live in `switchyard-backends` (and in any
//! crate that registers more).
//!
//! Elementwise ops take two tensors of one shape; a shape mismatch is a [`switchyard::DispatchError`]
//! (`ErrorKind::Shape`) from the kernel, never a panic inside a loop.

use switchyard::op;

use crate::{Device, Tensor};

/// `x + y`, elementwise; `x` and `y` have one shape.
#[op(name = "add")]
pub fn add(x: &Tensor, y: &Tensor) -> Tensor;

/// `x - y`, elementwise; `x` and `y` have one shape.
#[op(name = "sub")]
pub fn sub(x: &Tensor, y: &Tensor) -> Tensor;

/// `x * y`, elementwise; `x` and `y` have one shape.
#[op(name = "mul")]
pub fn mul(x: &Tensor, y: &Tensor) -> Tensor;

/// `x / y`, elementwise (IEEE division: `1 / 0 = inf`); `x` and `y` have one shape.
#[op(name = "div")]
pub fn div(x: &Tensor, y: &Tensor) -> Tensor;

/// `-x`, elementwise.
#[op(name = "neg")]
pub fn neg(x: &Tensor) -> Tensor;

/// `max(x, 0)`, elementwise.
#[op(name = "relu")]
pub fn relu(x: &Tensor) -> Tensor;

/// `e^x`, elementwise.
#[op(name = "exp")]
pub fn exp(x: &Tensor) -> Tensor;

/// The sum of all elements, as a 0-dimensional tensor (`0` for an empty tensor).
#[op(name = "sum")]
pub fn sum(x: &Tensor) -> Tensor;

/// The mean of all elements, as a 0-dimensional tensor (`NaN` for an empty tensor).
#[op(name = "mean")]
pub fn mean(x: &Tensor) -> Tensor;

/// The matrix product of `x: [m, k]` and `y: [k, n]`, shape `[m, n]`.
#[op(name = "matmul")]
pub fn matmul(x: &Tensor, y: &Tensor) -> Tensor;

/// A tensor of `shape` filled with `value`, on `device`. The device argument selects the backend.
#[op(name = "full")]
pub fn full(shape: &[usize], value: f32, device: Device) -> Tensor;

/// `x` copied to `device` (the same tensor if it is there already). The one standard op whose
/// arguments may be on different devices: the backend of the highest-priority device involved
/// does the copy (the wgpu backend copies in both directions between the CPU and the GPU).
#[op(name = "to", mixes_devices)]
pub fn to(x: &Tensor, device: Device) -> Tensor;
