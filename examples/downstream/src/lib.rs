//! A downstream crate, as a user of switchyard would write one. It
//!
//! - declares an op switchyard knows nothing of ([`scale()`]) and gives it a CPU kernel;
//! - adds a device: a toy backend on [`DispatchKey::PrivateUse1`] whose tensors keep their values
//!   in a storage type of its own ([`ToyStorage`]), as a GPU backend keeps a buffer;
//! - registers kernels for standard ops it does not own (`add`, `mul`) on that device;
//! - declares a dtype of its own, [`COMPLEX64`], and serves the standard `add` and `mul` on it
//!   (`src/complex.rs`);
//! - with its feature `wgpu`, gives [`scale()`] and `complex64`'s `add` and `mul` GPU kernels:
//!   WGSL snippets and a few lines of Rust over `switchyard_backends::wgpu`'s public kernel API
//!   (`src/gpu.rs`).
//!
//! No central list was edited: the registrations are linkme statics, found at first use.
//!
//! ```
//! use switchyard::ops::add;
//! use switchyard::{Device, Tensor};
//! use switchyard_example_downstream::{scale, to_toy};
//!
//! let x = to_toy(&Tensor::vector(&[1.0, 2.0])).unwrap();
//! let y = add(&x, &x); // runs this crate's kernel: x is on the toy device
//! assert_eq!(y.device(), Device::PrivateUse1);
//! assert_eq!(scale(&y, 10.0).to_vec::<f32>(), [20.0, 40.0]);
//! ```

#![warn(missing_docs)]

mod complex;
#[cfg(feature = "wgpu")]
mod gpu;

pub use complex::{COMPLEX64, complex, complex_values};

use switchyard::ops::{add, mul};
use switchyard::{
    BackendStorage, DType, Device, DispatchError, DispatchKey, DispatchKeySet, OpHandle, Result,
    Stack, Tensor, fallback, kernel, op,
};

/// The toy device's key, as a constant: kernels may name a key by path.
pub const TOY: DispatchKey = DispatchKey::PrivateUse1;

// Errors (a device mismatch, a missing kernel) call the device by this name.
switchyard::name_device!(key = TOY, "toy");

/// `x * factor`, elementwise. Declared in this crate; switchyard's own crates know nothing of it.
#[op(name = "downstream::scale")]
pub fn scale(x: &Tensor, factor: f32) -> Tensor;

// Declares the dtypes it serves, as the standard backends do: an `f64` call finds no kernel and
// the error says which dtypes are served, instead of this body failing to read `f32`s.
#[kernel(op = "scale", key = CpuNaive, dtypes = "f32")]
fn scale_cpu(x: &Tensor, factor: f32) -> Result<Tensor> {
    let values = x.host::<f32>("downstream::scale")?;
    Tensor::from_vec::<f32>(values.iter().map(|v| v * factor).collect(), x.shape())
}

/// The values of a tensor on the toy device.
#[derive(Debug)]
pub struct ToyStorage {
    values: Vec<f32>,
}

impl BackendStorage for ToyStorage {
    fn len(&self) -> usize {
        self.values.len()
    }

    fn dtype(&self) -> DType {
        DType::F32
    }

    fn read_bytes(&self) -> Result<Vec<u8>> {
        Ok(self.values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }
}

/// Copies a tensor to the toy device.
pub fn to_toy(x: &Tensor) -> Result<Tensor> {
    Tensor::from_backend(
        ToyStorage {
            values: x.try_to_vec::<f32>()?,
        },
        x.shape(),
        Device::PrivateUse1,
    )
}

/// The values of a toy tensor that is its whole storage; views (which the view ops make on any
/// device) are refused rather than misread.
fn toy_values<'t>(op: &'static str, x: &'t Tensor) -> Result<&'t [f32]> {
    if !x.is_contiguous() || x.storage_offset() != 0 || x.numel() != x.storage().len() {
        return Err(DispatchError::kernel(
            op,
            "the toy device computes on whole tensors, not views; call `to(Device::Cpu)` first",
        ));
    }
    x.backend_storage::<ToyStorage>()
        .map(|s| s.values.as_slice())
        .ok_or_else(|| {
            DispatchError::kernel(
                op,
                format!("expected a toy tensor, got one on {}", x.device()),
            )
        })
}

fn toy_binary(op: &'static str, x: &Tensor, y: &Tensor, f: fn(f32, f32) -> f32) -> Result<Tensor> {
    if x.shape() != y.shape() {
        // Shapes that broadcast are valid arguments this device does not serve (a kernel error,
        // saying so); only shapes that do not broadcast are a shape error.
        switchyard::broadcast_shapes(op, x.shape(), y.shape())?;
        return Err(DispatchError::kernel(
            op,
            format!(
                "the toy device does not broadcast ({:?} with {:?}); call `expand` and \
                 `contiguous` on the CPU first",
                x.shape(),
                y.shape()
            ),
        ));
    }
    let (xs, ys) = (toy_values(op, x)?, toy_values(op, y)?);
    let values = xs.iter().zip(ys).map(|(a, b)| f(*a, *b)).collect();
    Tensor::from_backend(ToyStorage { values }, x.shape(), Device::PrivateUse1)
}

#[kernel(op = "add", key = PrivateUse1, dtypes = "f32")]
fn add_toy(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    toy_binary("add", x, y, |a, b| a + b)
}

// The SCREAMING_CASE spelling of a key works too.
#[kernel(op = "mul", key = PRIVATE_USE1, dtypes = "f32")]
fn mul_toy(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    toy_binary("mul", x, y, |a, b| a * b)
}

// A key given as a path to a `DispatchKey` constant.
#[kernel(op = "scale", key = crate::TOY, dtypes = "f32")]
fn scale_toy(x: &Tensor, factor: f32) -> Result<Tensor> {
    let values = toy_values("downstream::scale", x)?
        .iter()
        .map(|v| v * factor)
        .collect();
    Tensor::from_backend(ToyStorage { values }, x.shape(), Device::PrivateUse1)
}

/// The toy device has no autograd: an op that reaches its autograd key without an autograd kernel
/// of its own fails, saying so (PyTorch's "autograd not implemented" fallback). A fallback from a
/// downstream crate, registered exactly like a kernel.
#[fallback(key = AutogradPrivateUse1)]
fn toy_autograd_not_implemented(
    op: &OpHandle,
    _keys: DispatchKeySet,
    _stack: &mut Stack<'_>,
) -> Result<()> {
    Err(DispatchError::kernel(
        op.name(),
        "autograd is not implemented on the toy device; register an `Autograd` kernel for this op",
    ))
}
