//! The tensor and its devices, and the three doors through which they meet the engine:
//! [`DispatchArg`] (the keys a value carries), boxing ([`TensorValue`], [`SharedTensor`],
//! [`boxable_tensor!`](switchyard::boxable_tensor)) and device names
//! ([`name_device!`](switchyard::name_device)).

use std::fmt;
use std::sync::Arc;

use ndarray::{Array1, ArrayD};
use switchyard::boxing::{SharedTensor, TensorValue};
use switchyard::{DispatchArg, DispatchKey, DispatchKeySet};

/// The host device's backend key.
pub const HOST: DispatchKey = DispatchKey::PrivateUse2;
/// The accelerator's backend key. It is above [`HOST`], so a call that involves both (only
/// [`to_device`](crate::to_device()) may) runs the accelerator's kernel.
pub const ACCEL: DispatchKey = DispatchKey::PrivateUse1;

// Errors (a device mismatch, a missing kernel) call each device by this name.
switchyard::name_device!(key = HOST, Device::Host.name());
switchyard::name_device!(key = ACCEL, Device::Accel.name());

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
    data: ArrayD<f32>,
    device: Device,
}

impl TensorValue for Shared {
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.device.key().set()
    }

    /// `NdTensor[2, 3]@accel`: how traces, logs and errors print the tensor.
    fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NdTensor{:?}@{}", self.data.shape(), self.device)
    }
}

/// An `f32` n-dimensional array on a [`Device`]: one `Arc`, so cloning and boxing copy nothing.
#[derive(Clone, Debug)]
pub struct NdTensor(Arc<Shared>);

impl NdTensor {
    /// A tensor holding `data` on `device`.
    pub fn new(data: ArrayD<f32>, device: Device) -> NdTensor {
        NdTensor(Arc::new(Shared { data, device }))
    }

    /// A one-dimensional tensor on `device`.
    pub fn vector(values: &[f32], device: Device) -> NdTensor {
        NdTensor::new(Array1::from(values.to_vec()).into_dyn(), device)
    }

    /// The values.
    pub fn data(&self) -> &ArrayD<f32> {
        &self.0.data
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        self.0.data.shape()
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.0.device
    }

    /// The values in row-major order.
    pub fn to_vec(&self) -> Vec<f32> {
        self.0.data.iter().copied().collect()
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
