//! `Tensor`: an n-dimensional array that knows its device and hence its dispatch keys.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::device::{DType, Device};
use crate::error::DispatchError;
use crate::key::DispatchKeySet;

/// Data held by a backend other than the CPU (a GPU buffer, a downstream device's memory).
///
/// The backend that creates a tensor with [`Tensor::from_backend`] downcasts its own storage in its
/// kernels with [`Tensor::backend_storage`]; the dispatcher itself never looks inside.
pub trait BackendStorage: Any + Send + Sync + fmt::Debug {
    /// Number of elements held.
    fn len(&self) -> usize;

    /// Whether no element is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the values back to host memory, in row-major order.
    fn to_host(&self) -> Result<Vec<f32>, DispatchError>;
}

#[derive(Debug)]
enum Storage {
    Cpu(Vec<f32>),
    Backend(Box<dyn BackendStorage>),
}

#[derive(Debug)]
struct TensorInner {
    keys: DispatchKeySet,
    shape: Box<[usize]>,
    dtype: DType,
    device: Device,
    storage: Storage,
}

/// A large CPU buffer goes back to the pool for reuse when the last handle drops.
impl Drop for TensorInner {
    fn drop(&mut self) {
        if let Storage::Cpu(data) = &mut self.storage {
            crate::buffer_pool::recycle(std::mem::take(data));
        }
    }
}

/// An n-dimensional array of `f32`, cheap to clone (the data is shared).
///
/// A tensor is one pointer wide. That makes `Result<Tensor, DispatchError>` a (tag, pointer)
/// pair, which kernels return in registers; keeping the key set inline instead (one load less
/// per argument) made the result a 16-byte aggregate returned through memory, which cost more.
#[derive(Clone)]
pub struct Tensor {
    inner: Arc<TensorInner>,
}

fn numel_of(shape: &[usize]) -> usize {
    shape.iter().product()
}

impl Tensor {
    fn build(shape: &[usize], device: Device, storage: Storage) -> Tensor {
        Tensor {
            inner: Arc::new(TensorInner {
                keys: device.keys(),
                shape: shape.into(),
                dtype: DType::F32,
                device,
                storage,
            }),
        }
    }

    /// A CPU tensor from row-major values; errors when `data.len()` is not the product of `shape`.
    pub fn from_vec(data: Vec<f32>, shape: &[usize]) -> Result<Tensor, DispatchError> {
        if data.len() != numel_of(shape) {
            return Err(DispatchError::shape(
                "Tensor::from_vec",
                format!(
                    "{} values cannot fill shape {shape:?} ({} elements)",
                    data.len(),
                    numel_of(shape)
                ),
            ));
        }
        Ok(Tensor::build(shape, Device::Cpu, Storage::Cpu(data)))
    }

    /// A CPU tensor copied from a slice; errors like [`Tensor::from_vec`].
    pub fn from_slice(data: &[f32], shape: &[usize]) -> Result<Tensor, DispatchError> {
        Tensor::from_vec(data.to_vec(), shape)
    }

    /// A 1-dimensional CPU tensor holding `data`.
    pub fn vector(data: &[f32]) -> Tensor {
        Tensor::build(&[data.len()], Device::Cpu, Storage::Cpu(data.to_vec()))
    }

    /// A 0-dimensional CPU tensor holding `value`.
    pub fn scalar(value: f32) -> Tensor {
        Tensor::build(&[], Device::Cpu, Storage::Cpu(vec![value]))
    }

    /// A CPU tensor whose element at row-major index `i` is `f(i)`.
    pub fn from_fn(shape: &[usize], f: impl FnMut(usize) -> f32) -> Tensor {
        let data = (0..numel_of(shape)).map(f).collect();
        Tensor::build(shape, Device::Cpu, Storage::Cpu(data))
    }

    /// A tensor on a non-CPU device whose data a backend holds. Errors when the storage's length
    /// does not fit `shape`, or when `device` is the CPU (CPU tensors hold a `Vec<f32>`).
    pub fn from_backend(
        storage: impl BackendStorage,
        shape: &[usize],
        device: Device,
    ) -> Result<Tensor, DispatchError> {
        if device == Device::Cpu {
            return Err(DispatchError::kernel(
                "Tensor::from_backend",
                "CPU tensors hold host memory; build them with `Tensor::from_vec`",
            ));
        }
        if storage.len() != numel_of(shape) {
            return Err(DispatchError::shape(
                "Tensor::from_backend",
                format!(
                    "storage of {} elements cannot fill shape {shape:?}",
                    storage.len()
                ),
            ));
        }
        Ok(Tensor::build(
            shape,
            device,
            Storage::Backend(Box::new(storage)),
        ))
    }

    /// The dispatch keys this tensor contributes to a call.
    #[inline(always)]
    pub fn keys(&self) -> DispatchKeySet {
        self.inner.keys
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> &[usize] {
        &self.inner.shape
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.inner.shape.len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        numel_of(&self.inner.shape)
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.inner.dtype
    }

    /// Where the data lives.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// The values of a CPU tensor, row-major; `None` on other devices.
    pub fn cpu_data(&self) -> Option<&[f32]> {
        match &self.inner.storage {
            Storage::Cpu(data) => Some(data),
            Storage::Backend(_) => None,
        }
    }

    /// The storage of a non-CPU tensor, if it is of type `S`; backends use this in their kernels.
    pub fn backend_storage<S: BackendStorage>(&self) -> Option<&S> {
        match &self.inner.storage {
            Storage::Backend(storage) => (&**storage as &dyn Any).downcast_ref::<S>(),
            Storage::Cpu(_) => None,
        }
    }

    /// The values, copied to host memory in row-major order.
    pub fn try_to_vec(&self) -> Result<Vec<f32>, DispatchError> {
        match &self.inner.storage {
            Storage::Cpu(data) => Ok(data.clone()),
            Storage::Backend(storage) => storage.to_host(),
        }
    }

    /// The values, copied to host memory; panics if the backend cannot read them back.
    #[track_caller]
    pub fn to_vec(&self) -> Vec<f32> {
        self.try_to_vec().unwrap_or_else(|e| e.panic())
    }

    /// This tensor on `device`: the op [`crate::ops::to()`]. Panics if no linked backend can copy
    /// it there (see [`Tensor::try_to`]).
    #[track_caller]
    pub fn to(&self, device: Device) -> Tensor {
        crate::ops::to(self, device)
    }

    /// This tensor on `device`, or the error that says why it cannot get there (no backend for
    /// the device linked, no GPU adapter, …).
    pub fn try_to(&self, device: Device) -> Result<Tensor, DispatchError> {
        crate::ops::try_to(self, device)
    }

    /// Whether two handles share one allocation (a clone, not an equal copy).
    pub fn same_storage(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor(shape={:?}, dtype={}, device={}, keys={}, ",
            self.shape(),
            self.dtype(),
            self.device(),
            self.keys()
        )?;
        fmt::Display::fmt(self, f)?;
        f.write_str(")")
    }
}

/// Prints values nested by dimension, like `[[1, 2], [3, 4]]`; long dimensions are elided.
impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.try_to_vec() {
            Ok(values) => write_nested(f, self.shape(), &values),
            Err(e) => write!(f, "<values unavailable: {e}>"),
        }
    }
}

const SHOWN_PER_DIM: usize = 6;

fn write_nested(f: &mut fmt::Formatter<'_>, shape: &[usize], values: &[f32]) -> fmt::Result {
    let Some((&len, rest)) = shape.split_first() else {
        return write!(f, "{}", values.first().copied().unwrap_or(f32::NAN));
    };
    let stride = numel_of(rest);
    f.write_str("[")?;
    for i in 0..len {
        if len > SHOWN_PER_DIM && i == SHOWN_PER_DIM / 2 {
            f.write_str(", …")?;
        }
        if len > SHOWN_PER_DIM && i >= SHOWN_PER_DIM / 2 && i < len - SHOWN_PER_DIM / 2 {
            continue;
        }
        if i > 0 {
            f.write_str(", ")?;
        }
        write_nested(f, rest, &values[i * stride..(i + 1) * stride])?;
    }
    f.write_str("]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_check_shape() {
        let t = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
        assert_eq!(t.shape(), &[2, 3]);
        assert_eq!(t.numel(), 6);
        assert_eq!(t.keys(), DispatchKeySet::CPU);
        let err = Tensor::from_vec(vec![1.0; 5], &[2, 3]).unwrap_err();
        assert!(
            err.to_string()
                .contains("5 values cannot fill shape [2, 3]"),
            "{err}"
        );
        assert_eq!(Tensor::scalar(2.5).shape(), &[] as &[usize]);
        assert_eq!(
            Tensor::from_fn(&[3], |i| i as f32).to_vec(),
            vec![0.0, 1.0, 2.0]
        );
    }

    #[test]
    fn display_nests_and_elides() {
        let t = Tensor::from_fn(&[2, 2], |i| i as f32);
        assert_eq!(t.to_string(), "[[0, 1], [2, 3]]");
        assert_eq!(Tensor::scalar(1.5).to_string(), "1.5");
        assert_eq!(Tensor::vector(&[]).to_string(), "[]");
        let long = Tensor::from_fn(&[10], |i| i as f32);
        assert_eq!(long.to_string(), "[0, 1, 2, …, 7, 8, 9]");
    }

    #[derive(Debug)]
    struct Remote(Vec<f32>);
    impl BackendStorage for Remote {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn to_host(&self) -> Result<Vec<f32>, DispatchError> {
            Ok(self.0.clone())
        }
    }

    #[test]
    fn backend_storage_round_trip() {
        let t = Tensor::from_backend(Remote(vec![1.0, 2.0]), &[2], Device::PrivateUse1).unwrap();
        assert_eq!(t.keys(), DispatchKeySet::PRIVATE_USE1);
        assert!(t.cpu_data().is_none());
        assert_eq!(t.backend_storage::<Remote>().unwrap().0, vec![1.0, 2.0]);
        assert_eq!(t.to_vec(), vec![1.0, 2.0]);
        assert!(Tensor::from_backend(Remote(vec![1.0]), &[2], Device::PrivateUse1).is_err());
        assert!(Tensor::from_backend(Remote(vec![1.0]), &[1], Device::Cpu).is_err());
    }
}
