//! Kernels, registered with `#[kernel]` at each device's key. Both devices compute with
//! `ndarray` on the host, but each has its own kernels, and each kernel notes that it ran
//! ([`take_kernel_log`]), so a test can tell which device served a call.

use std::cell::RefCell;

use ndarray::{ArrayD, arr0};
use switchyard::{DispatchError, Result, kernel};

use crate::ops::{add, exp, mul, sum, to_device};
use crate::tensor::{Device, NdTensor};

thread_local! {
    /// The kernels that ran on this thread, in order. Kernels run on the caller's thread, so
    /// tests running in parallel see only their own.
    static KERNEL_LOG: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

/// The kernels that ran on this thread since the last call (`"byo::add@accel"`, …), oldest
/// first; clears the log.
pub fn take_kernel_log() -> Vec<&'static str> {
    KERNEL_LOG.with(|log| std::mem::take(&mut *log.borrow_mut()))
}

fn ran(kernel: &'static str) {
    KERNEL_LOG.with(|log| log.borrow_mut().push(kernel));
}

/// The values of `x`, which a kernel of `device` was given: dispatch guarantees it, so a
/// tensor from elsewhere is a bug worth an error, not a panic.
fn values<'t>(op: &'static str, x: &'t NdTensor, device: Device) -> Result<&'t ArrayD<f32>> {
    if x.device() != device {
        return Err(DispatchError::kernel(
            op,
            format!("the {device} kernel got a tensor on {}", x.device()),
        ));
    }
    Ok(x.data())
}

fn elementwise(
    op: &'static str,
    device: Device,
    x: &NdTensor,
    y: &NdTensor,
    f: fn(f32, f32) -> f32,
) -> Result<NdTensor> {
    let (xs, ys) = (values(op, x, device)?, values(op, y, device)?);
    if xs.shape() != ys.shape() {
        return Err(DispatchError::shape(
            op,
            format!("{:?} vs {:?}", xs.shape(), ys.shape()),
        ));
    }
    let mut out = xs.clone();
    out.zip_mut_with(ys, |a, b| *a = f(*a, *b));
    Ok(NdTensor::new(out, device))
}

fn total(op: &'static str, device: Device, x: &NdTensor) -> Result<NdTensor> {
    Ok(NdTensor::new(
        arr0(values(op, x, device)?.sum()).into_dyn(),
        device,
    ))
}

// ---- host ----

#[kernel(op = add, key = crate::tensor::HOST)]
fn add_host(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::add@host");
    elementwise("byo::add", Device::Host, x, y, |a, b| a + b)
}

#[kernel(op = mul, key = crate::tensor::HOST)]
fn mul_host(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::mul@host");
    elementwise("byo::mul", Device::Host, x, y, |a, b| a * b)
}

#[kernel(op = sum, key = crate::tensor::HOST)]
fn sum_host(x: &NdTensor) -> Result<NdTensor> {
    ran("byo::sum@host");
    total("byo::sum", Device::Host, x)
}

#[kernel(op = exp, key = crate::tensor::HOST)]
fn exp_host(x: &NdTensor) -> Result<NdTensor> {
    ran("byo::exp@host");
    Ok(NdTensor::new(
        values("byo::exp", x, Device::Host)?.mapv(f32::exp),
        Device::Host,
    ))
}

/// Reached only when both `x` and the target are on the host (else the accelerator's key is in
/// the call and wins).
#[kernel(op = to_device, key = crate::tensor::HOST)]
fn to_device_host(x: &NdTensor, device: Device) -> NdTensor {
    ran("byo::to_device@host");
    debug_assert_eq!((x.device(), device), (Device::Host, Device::Host));
    x.clone()
}

// ---- accelerator ----

#[kernel(op = add, key = crate::tensor::ACCEL)]
fn add_accel(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::add@accel");
    elementwise("byo::add", Device::Accel, x, y, |a, b| a + b)
}

#[kernel(op = mul, key = crate::tensor::ACCEL)]
fn mul_accel(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::mul@accel");
    elementwise("byo::mul", Device::Accel, x, y, |a, b| a * b)
}

#[kernel(op = sum, key = crate::tensor::ACCEL)]
fn sum_accel(x: &NdTensor) -> Result<NdTensor> {
    ran("byo::sum@accel");
    total("byo::sum", Device::Accel, x)
}

// (No `exp` on the accelerator: see `crate::exp`.)

/// Copies host → accelerator and back: whenever the accelerator is one side of the move, its
/// key is the highest in the call.
#[kernel(op = to_device, key = crate::tensor::ACCEL)]
fn to_device_accel(x: &NdTensor, device: Device) -> NdTensor {
    ran("byo::to_device@accel");
    if x.device() == device {
        return x.clone();
    }
    NdTensor::new(x.data().clone(), device)
}
