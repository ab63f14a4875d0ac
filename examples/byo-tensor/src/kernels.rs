//! Kernels, registered with `#[kernel]` at each device's key and per dtype: `dtypes = "f32"` for
//! the `f32` kernels, `dtypes = [COMPLEX64]` for the library's own dtype. Both devices compute
//! with `ndarray` on the host, but each has its own kernels, and each kernel notes that it ran
//! ([`take_kernel_log`]), so a test can tell which device and dtype served a call.

use std::cell::RefCell;

use ndarray::{ArrayD, arr0};
use switchyard::{DispatchError, Result, kernel};

use crate::ops::{add, exp, mul, sum, to_device};
use crate::tensor::{COMPLEX64, Device, NdTensor};

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

/// The values of `x`, which an `f32` kernel of `device` was given: dispatch guarantees both, so
/// a tensor from elsewhere is a bug worth an error, not a panic.
fn values<'t>(op: &'static str, x: &'t NdTensor, device: Device) -> Result<&'t ArrayD<f32>> {
    if x.device() != device || x.imag().is_some() {
        return Err(DispatchError::kernel(
            op,
            format!(
                "the {device} f32 kernel got a {} tensor on {}",
                x.dtype_name(),
                x.device()
            ),
        ));
    }
    Ok(x.data())
}

/// The real and imaginary parts of `x`, which a complex64 kernel of `device` was given.
fn parts<'t>(
    op: &'static str,
    x: &'t NdTensor,
    device: Device,
) -> Result<(&'t ArrayD<f32>, &'t ArrayD<f32>)> {
    match x.imag() {
        Some(imag) if x.device() == device => Ok((x.data(), imag)),
        _ => Err(DispatchError::kernel(
            op,
            format!(
                "the {device} complex64 kernel got a {} tensor on {}",
                x.dtype_name(),
                x.device()
            ),
        )),
    }
}

/// A complex number as `(re, im)`.
type Complex = (f32, f32);

/// `f((a, b), (c, d))` elementwise over two complex64 tensors of one shape.
fn complex_elementwise(
    op: &'static str,
    device: Device,
    x: &NdTensor,
    y: &NdTensor,
    f: fn(Complex, Complex) -> Complex,
) -> Result<NdTensor> {
    let ((xr, xi), (yr, yi)) = (parts(op, x, device)?, parts(op, y, device)?);
    if xr.shape() != yr.shape() {
        return Err(DispatchError::shape(
            op,
            format!("{:?} vs {:?}", xr.shape(), yr.shape()),
        ));
    }
    let (mut re, mut im) = (xr.clone(), xi.clone());
    ndarray::Zip::from(&mut re)
        .and(&mut im)
        .and(yr)
        .and(yi)
        .for_each(|r, i, &c, &d| (*r, *i) = f((*r, *i), (c, d)));
    NdTensor::new_complex(re, im, device)
        .ok_or_else(|| DispatchError::kernel(op, "parts of two shapes"))
}

fn complex_add((a, b): Complex, (c, d): Complex) -> Complex {
    (a + c, b + d)
}

fn complex_mul((a, b): Complex, (c, d): Complex) -> Complex {
    (a * c - b * d, a * d + b * c)
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

#[kernel(op = add, key = crate::tensor::HOST, dtypes = "f32")]
fn add_host(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::add@host");
    elementwise("byo::add", Device::Host, x, y, |a, b| a + b)
}

#[kernel(op = mul, key = crate::tensor::HOST, dtypes = "f32")]
fn mul_host(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::mul@host");
    elementwise("byo::mul", Device::Host, x, y, |a, b| a * b)
}

#[kernel(op = sum, key = crate::tensor::HOST, dtypes = "f32")]
fn sum_host(x: &NdTensor) -> Result<NdTensor> {
    ran("byo::sum@host");
    total("byo::sum", Device::Host, x)
}

#[kernel(op = exp, key = crate::tensor::HOST, dtypes = "f32")]
fn exp_host(x: &NdTensor) -> Result<NdTensor> {
    ran("byo::exp@host");
    Ok(NdTensor::new(
        values("byo::exp", x, Device::Host)?.mapv(f32::exp),
        Device::Host,
    ))
}

/// Reached only when both `x` and the target are on the host (else the accelerator's key is in
/// the call and wins).
#[kernel(op = to_device, key = crate::tensor::HOST, dtypes = "all")]
fn to_device_host(x: &NdTensor, device: Device) -> NdTensor {
    ran("byo::to_device@host");
    debug_assert_eq!((x.device(), device), (Device::Host, Device::Host));
    x.clone()
}

// ---- accelerator ----

#[kernel(op = add, key = crate::tensor::ACCEL, dtypes = "f32")]
fn add_accel(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::add@accel");
    elementwise("byo::add", Device::Accel, x, y, |a, b| a + b)
}

#[kernel(op = mul, key = crate::tensor::ACCEL, dtypes = "f32")]
fn mul_accel(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::mul@accel");
    elementwise("byo::mul", Device::Accel, x, y, |a, b| a * b)
}

#[kernel(op = sum, key = crate::tensor::ACCEL, dtypes = "f32")]
fn sum_accel(x: &NdTensor) -> Result<NdTensor> {
    ran("byo::sum@accel");
    total("byo::sum", Device::Accel, x)
}

// (No `exp` on the accelerator: see `crate::exp`.)

// ---- complex64, the library's own dtype ----
//
// `add` on both devices, `mul` on the host only: complex `mul` on the accelerator is a
// missing-kernel error that names the dtype. A complex64 tensor with an `f32` one reads the
// complex64 column: the engine promotes nothing, and these kernels refuse the `f32` operand.

#[kernel(op = add, key = crate::tensor::HOST, dtypes = [COMPLEX64])]
fn add_host_complex(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::add@host complex64");
    complex_elementwise("byo::add", Device::Host, x, y, complex_add)
}

#[kernel(op = mul, key = crate::tensor::HOST, dtypes = [COMPLEX64])]
fn mul_host_complex(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::mul@host complex64");
    complex_elementwise("byo::mul", Device::Host, x, y, complex_mul)
}

#[kernel(op = add, key = crate::tensor::ACCEL, dtypes = [COMPLEX64])]
fn add_accel_complex(x: &NdTensor, y: &NdTensor) -> Result<NdTensor> {
    ran("byo::add@accel complex64");
    complex_elementwise("byo::add", Device::Accel, x, y, complex_add)
}

/// Copies host → accelerator and back (either dtype: `dtypes = "all"`, as a kernel declaring
/// none would serve the built-in dtypes only): whenever the accelerator is one side of the move, its key is the
/// highest in the call.
#[kernel(op = to_device, key = crate::tensor::ACCEL, dtypes = "all")]
fn to_device_accel(x: &NdTensor, device: Device) -> NdTensor {
    ran("byo::to_device@accel");
    if x.device() == device {
        return x.clone();
    }
    x.copied_to(device)
}
