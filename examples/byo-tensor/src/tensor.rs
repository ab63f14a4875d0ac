//! The tensor, its devices and its dtypes, and the four doors through which they meet the
//! engine: [`DispatchArg`] (the keys a value carries), boxing ([`TensorValue`], [`SharedTensor`],
//! [`boxable_tensor!`](switchyard::boxable_tensor)), device names
//! ([`name_device!`](switchyard::name_device)) and a dtype of its own
//! ([`declare_dtype!`](switchyard::declare_dtype)).

use std::fmt;
use std::sync::Arc;

use ndarray::{Array1, ArrayD};
use switchyard::boxing::{SharedTensor, TensorValue};
use switchyard::{DType, DispatchArg, DispatchKey, DispatchKeySet, UserDType};

/// The host device's backend key.
pub const HOST: DispatchKey = DispatchKey::PrivateUse2;
/// The accelerator's backend key. It is above [`HOST`], so a call that involves both (only
/// [`to_device`](crate::to_device()) may) runs the accelerator's kernel.
pub const ACCEL: DispatchKey = DispatchKey::PrivateUse1;

// Errors (a device mismatch, a missing kernel) call each device by this name.
switchyard::name_device!(key = HOST, Device::Host.name());
switchyard::name_device!(key = ACCEL, Device::Accel.name());

/// The library's complex dtype, which the engine does not know: two `f32`s per element (real,
/// imaginary). It claims the first user dtype slot; the library's kernels serve it with
/// `dtypes = [COMPLEX64]`, and dumps, errors and the trace call it `complex64`.
pub const COMPLEX64: UserDType = UserDType::PrivateUse1;
switchyard::declare_dtype!(COMPLEX64, "complex64", bytes = 8, kind = Other);

/// Where a tensor lives. Both devices keep their values in host memory; the accelerator is
/// pretend, but its kernels are its own (see [`take_kernel_log`](crate::take_kernel_log)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    /// The host, on [`HOST`].
    Host,
    /// The pretend accelerator, on [`ACCEL`].
    Accel,
}

impl Device {
    /// The backend key of this device's kernels.
    pub const fn key(self) -> DispatchKey {
        match self {
            Device::Host => HOST,
            Device::Accel => ACCEL,
        }
    }

    /// The device's name, as errors and tensor summaries (`NdTensor[2]@accel`) print it.
    pub const fn name(self) -> &'static str {
        match self {
            Device::Host => "host",
            Device::Accel => "accel",
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A device argument (`to_device(&x, Device::Accel)`) takes part in dispatch like a tensor on
/// that device would.
impl DispatchArg for Device {
    #[inline]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.key().set()
    }
}

// A device boxes as a custom value that carries its keys.
switchyard::boxable!(Device);

/// What every handle of one tensor shares: its values and its device.
#[derive(Debug)]
pub struct Shared {
    /// The values; a [`COMPLEX64`] tensor's real parts.
    data: ArrayD<f32>,
    /// A [`COMPLEX64`] tensor's imaginary parts (of `data`'s shape); `None` for `f32`.
    imag: Option<ArrayD<f32>>,
    device: Device,
}

impl TensorValue for Shared {
    /// The device's key and the dtype's bit: `f32`'s ([`DType::key_bit`]) or [`COMPLEX64`]'s.
    fn dispatch_keys(&self) -> DispatchKeySet {
        let dtype = match self.imag {
            None => DType::F32.key_bit(),
            Some(_) => COMPLEX64.key_bit(),
        };
        self.device.key().set() | dtype
    }

    /// `NdTensor[2, 3]@accel` (`f32`), `NdTensor<complex64>[2]@host`: how traces, logs and errors
    /// print the tensor.
    fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dtype = if self.imag.is_some() {
            "<complex64>"
        } else {
            ""
        };
        write!(f, "NdTensor{dtype}{:?}@{}", self.data.shape(), self.device)
    }
}

/// An n-dimensional array of `f32` or [`COMPLEX64`] on a [`Device`]: one `Arc`, so cloning and
/// boxing copy nothing.
#[derive(Clone, Debug)]
pub struct NdTensor(Arc<Shared>);

impl NdTensor {
    /// An `f32` tensor holding `data` on `device`.
    pub fn new(data: ArrayD<f32>, device: Device) -> NdTensor {
        NdTensor(Arc::new(Shared {
            data,
            imag: None,
            device,
        }))
    }

    /// A [`COMPLEX64`] tensor with real parts `re` and imaginary parts `im` (one shape) on
    /// `device`; `None` if the shapes differ.
    pub fn new_complex(re: ArrayD<f32>, im: ArrayD<f32>, device: Device) -> Option<NdTensor> {
        (re.shape() == im.shape()).then(|| {
            NdTensor(Arc::new(Shared {
                data: re,
                imag: Some(im),
                device,
            }))
        })
    }

    /// A one-dimensional `f32` tensor on `device`.
    pub fn vector(values: &[f32], device: Device) -> NdTensor {
        NdTensor::new(Array1::from(values.to_vec()).into_dyn(), device)
    }

    /// A one-dimensional [`COMPLEX64`] tensor of `(re, im)` pairs on `device`.
    pub fn complex_vector(values: &[(f32, f32)], device: Device) -> NdTensor {
        let part = |f: fn(&(f32, f32)) -> f32| Array1::from_iter(values.iter().map(f)).into_dyn();
        NdTensor(Arc::new(Shared {
            data: part(|v| v.0),
            imag: Some(part(|v| v.1)),
            device,
        }))
    }

    /// The values (a [`COMPLEX64`] tensor's real parts).
    pub fn data(&self) -> &ArrayD<f32> {
        &self.0.data
    }

    /// A [`COMPLEX64`] tensor's imaginary parts; `None` for an `f32` tensor.
    pub fn imag(&self) -> Option<&ArrayD<f32>> {
        self.0.imag.as_ref()
    }

    /// The dtype's name: `f32`, or `complex64` (the name declared for [`COMPLEX64`]).
    pub fn dtype_name(&self) -> String {
        match self.0.imag {
            None => DType::F32.to_string(),
            Some(_) => COMPLEX64.to_string(),
        }
    }

    /// A [`COMPLEX64`] tensor's values as `(re, im)` pairs in row-major order; an `f32` tensor's
    /// with imaginary parts 0.
    pub fn to_complex_vec(&self) -> Vec<(f32, f32)> {
        let zeros = ArrayD::zeros(self.0.data.shape());
        let imag = self.0.imag.as_ref().unwrap_or(&zeros);
        self.0
            .data
            .iter()
            .copied()
            .zip(imag.iter().copied())
            .collect()
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        self.0.data.shape()
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.0.device
    }

    /// The values in row-major order (a [`COMPLEX64`] tensor's real parts).
    pub fn to_vec(&self) -> Vec<f32> {
        self.0.data.iter().copied().collect()
    }

    /// A copy of the tensor (either dtype) on `device`.
    pub(crate) fn copied_to(&self, device: Device) -> NdTensor {
        NdTensor(Arc::new(Shared {
            data: self.0.data.clone(),
            imag: self.0.imag.clone(),
            device,
        }))
    }

    /// Whether both are handles of one tensor.
    pub fn same(&self, other: &NdTensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl DispatchArg for NdTensor {
    #[inline]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.0.dispatch_keys()
    }
}

/// Boxing hands the engine this tensor's `Arc` (a reference count, no allocation) and unboxing
/// takes it back, so a tensor that went through a boxed fallback is still the same tensor.
impl SharedTensor for NdTensor {
    type Shared = Shared;

    fn shared(&self) -> &Arc<Shared> {
        &self.0
    }

    fn into_shared(self) -> Arc<Shared> {
        self.0
    }

    fn from_shared(shared: Arc<Shared>) -> NdTensor {
        NdTensor(shared)
    }
}

switchyard::boxable_tensor!(NdTensor);
