//! `Tensor`: an n-dimensional array that knows its device and hence its dispatch keys.

use std::any::Any;
use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use crate::device::{DType, Device};
use switchyard::DispatchError;
use switchyard::DispatchKeySet;

/// Data held by a backend other than the CPU (a GPU buffer, a downstream device's memory).
///
/// The backend that creates a tensor with [`Tensor::from_backend`] downcasts its own storage in its
/// kernels with [`Tensor::backend_storage`]; the dispatcher itself never looks inside.
///
/// Storage is `UnwindSafe` and `RefUnwindSafe`, so that a [`Tensor`] is too: a tensor is
/// immutable once built, and `catch_unwind(|| op(&t))` needs no `AssertUnwindSafe`. Plain data
/// has both; a storage holding handles that lack them (a GPU API's, with interior mutability)
/// implements them itself (both are safe to implement) when, as for an immutable tensor's
/// buffer, a caught panic cannot leave it half-changed.
pub trait BackendStorage: Any + Send + Sync + UnwindSafe + RefUnwindSafe + fmt::Debug {
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

/// **Invariant:** `numel` is the product of `shape`, and its byte size (`numel · 4`) is at most
/// `isize::MAX`; a CPU storage holds exactly `numel` values. Every constructor checks this, so
/// kernels may compute any index below `numel` (and `numel · 4`) without overflow.
///
/// Public only so that [`Tensor`] can name it as its boxed form (`SharedTensor::Shared`); it
/// lives in a private module, so no other crate can name or build one.
#[derive(Debug)]
pub struct TensorInner {
    pub(crate) keys: DispatchKeySet,
    numel: usize,
    pub(crate) shape: Box<[usize]>,
    dtype: DType,
    pub(crate) device: Device,
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
    pub(crate) inner: Arc<TensorInner>,
}

/// The largest element count of an `f32` tensor: its bytes must fit `isize`, as every allocation's.
const MAX_NUMEL: usize = isize::MAX as usize / size_of::<f32>();

/// The element count of `shape` if `len` values fill it exactly, else an error naming `op`.
fn filled_by(op: &'static str, len: usize, shape: &[usize]) -> Result<usize, DispatchError> {
    let numel = Tensor::checked_numel(op, shape)?;
    if len != numel {
        return Err(DispatchError::shape(
            op,
            format!("{len} values cannot fill shape {shape:?} ({numel} elements)"),
        ));
    }
    Ok(numel)
}

/// A copy of `data` in a fallibly allocated `Vec`.
fn copy_of(op: &'static str, data: &[f32]) -> Result<Vec<f32>, DispatchError> {
    let mut copy = crate::buffer_pool::cpu_buffer(op, data.len())?;
    copy.extend_from_slice(data);
    Ok(copy)
}

impl Tensor {
    /// `numel` is `shape`'s checked element count.
    fn build(shape: &[usize], numel: usize, device: Device, storage: Storage) -> Tensor {
        Tensor {
            inner: Arc::new(TensorInner {
                keys: device.keys(),
                numel,
                shape: shape.into(),
                dtype: DType::F32,
                device,
                storage,
            }),
        }
    }

    /// The element count of `shape`, or a [`ErrorKind::SizeOverflow`](switchyard::ErrorKind) error
    /// naming `op` when it exceeds `usize::MAX` or its bytes (4 per `f32`) exceed `isize::MAX`,
    /// the largest allocation. A shape with a zero dimension has 0 elements, whatever the others.
    ///
    /// Kernels that size an output from a shape they were given (a factory like `full`) call
    /// this; every tensor's own [`Tensor::numel`] was checked when it was built.
    pub fn checked_numel(op: &'static str, shape: &[usize]) -> Result<usize, DispatchError> {
        if shape.contains(&0) {
            return Ok(0);
        }
        let numel = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| {
                DispatchError::size_overflow(op, &[shape], "the element count exceeds usize::MAX")
            })?;
        if numel > MAX_NUMEL {
            return Err(DispatchError::size_overflow(
                op,
                &[shape],
                format!(
                    "{numel} elements (4 bytes each) exceed isize::MAX bytes, the largest \
                     allocation"
                ),
            ));
        }
        Ok(numel)
    }

    /// A CPU tensor from row-major values; errors when `data.len()` is not the product of `shape`
    /// (or that product overflows).
    pub fn from_vec(data: Vec<f32>, shape: &[usize]) -> Result<Tensor, DispatchError> {
        let numel = filled_by("Tensor::from_vec", data.len(), shape)?;
        Ok(Tensor::build(shape, numel, Device::Cpu, Storage::Cpu(data)))
    }

    /// A CPU tensor copied from a slice; errors like [`Tensor::from_vec`], or when the copy
    /// cannot be allocated.
    pub fn from_slice(data: &[f32], shape: &[usize]) -> Result<Tensor, DispatchError> {
        const OP: &str = "Tensor::from_slice";
        let numel = filled_by(OP, data.len(), shape)?;
        let data = copy_of(OP, data)?;
        Ok(Tensor::build(shape, numel, Device::Cpu, Storage::Cpu(data)))
    }

    /// A 1-dimensional CPU tensor holding `data`. Panics if the copy cannot be allocated.
    #[track_caller]
    pub fn vector(data: &[f32]) -> Tensor {
        Tensor::from_slice(data, &[data.len()]).unwrap_or_else(|e| e.panic())
    }

    /// A 0-dimensional CPU tensor holding `value`.
    pub fn scalar(value: f32) -> Tensor {
        Tensor::build(&[], 1, Device::Cpu, Storage::Cpu(vec![value]))
    }

    /// A CPU tensor whose element at row-major index `i` is `f(i)`. Panics with the error of
    /// [`Tensor::try_from_fn`].
    #[track_caller]
    pub fn from_fn(shape: &[usize], f: impl FnMut(usize) -> f32) -> Tensor {
        Tensor::try_from_fn(shape, f).unwrap_or_else(|e| e.panic())
    }

    /// A CPU tensor whose element at row-major index `i` is `f(i)`; errors when the shape's
    /// element count overflows or its memory cannot be allocated (saying how many bytes).
    pub fn try_from_fn(
        shape: &[usize],
        f: impl FnMut(usize) -> f32,
    ) -> Result<Tensor, DispatchError> {
        const OP: &str = "Tensor::from_fn";
        let numel = Tensor::checked_numel(OP, shape)?;
        let mut data = crate::buffer_pool::cpu_buffer(OP, numel)?;
        // Room for all `numel` values is reserved: this never reallocates.
        data.extend((0..numel).map(f));
        Ok(Tensor::build(shape, numel, Device::Cpu, Storage::Cpu(data)))
    }

    /// A tensor on a non-CPU device whose data a backend holds. Errors when the storage's length
    /// does not fit `shape` (or the shape's element count overflows), or when `device` is the CPU
    /// (CPU tensors hold a `Vec<f32>`).
    pub fn from_backend(
        storage: impl BackendStorage,
        shape: &[usize],
        device: Device,
    ) -> Result<Tensor, DispatchError> {
        const OP: &str = "Tensor::from_backend";
        if device == Device::Cpu {
            return Err(DispatchError::kernel(
                OP,
                "CPU tensors hold host memory; build them with `Tensor::from_vec`",
            ));
        }
        let numel = Tensor::checked_numel(OP, shape)?;
        if storage.len() != numel {
            return Err(DispatchError::shape(
                OP,
                format!(
                    "storage of {} elements cannot fill shape {shape:?}",
                    storage.len()
                ),
            ));
        }
        Ok(Tensor::build(
            shape,
            numel,
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

    /// Number of elements (checked when the tensor was built: at most `isize::MAX / 4`).
    pub fn numel(&self) -> usize {
        self.inner.numel
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

    /// The values, copied to host memory in row-major order; errors when the backend cannot read
    /// them back or the copy cannot be allocated.
    pub fn try_to_vec(&self) -> Result<Vec<f32>, DispatchError> {
        match &self.inner.storage {
            Storage::Cpu(data) => copy_of("Tensor::to_vec", data),
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

/// Prints values nested by dimension, like `[[1, 2], [3, 4]]`; an empty tensor prints `[]`.
///
/// Large tensors are summarised as PyTorch does: above 1000 elements, a dimension longer than 6
/// shows its first and last 3 entries with `...` between; and at most 1000 values are printed in
/// all (many short dimensions end in a `...` where that budget runs out). So printing reads a bounded number of
/// values, whatever the element count: a CPU tensor's values are indexed in place, and a device
/// tensor is read back only when it has any.
impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.numel() == 0 {
            return f.write_str("[]");
        }
        let host;
        let values = match &self.inner.storage {
            Storage::Cpu(data) => data.as_slice(),
            Storage::Backend(storage) => match storage.to_host() {
                Ok(values) => {
                    host = values;
                    host.as_slice()
                }
                Err(e) => return write!(f, "<values unavailable: {e}>"),
            },
        };
        if values.len() != self.numel() {
            return write!(
                f,
                "<values unavailable: the backend read back {} of {} values>",
                values.len(),
                self.numel()
            );
        }
        let mut printer = Printer {
            values,
            summarise: self.numel() > SUMMARY_THRESHOLD,
            budget: SUMMARY_THRESHOLD,
        };
        printer.write(f, self.shape(), 0)
    }
}

/// Above this many elements a tensor is summarised (PyTorch's `threshold`); also the most values
/// a summary prints.
const SUMMARY_THRESHOLD: usize = 1000;
/// Entries shown at each end of a summarised dimension (PyTorch's `edgeitems`).
const EDGE_ITEMS: usize = 3;

/// Writes a non-empty tensor's values (`values.len()` is the product of the shape, so every
/// offset below is in bounds and no product overflows).
struct Printer<'v> {
    values: &'v [f32],
    summarise: bool,
    /// Values that may still be printed.
    budget: usize,
}

impl Printer<'_> {
    /// The sub-tensor of `shape` that starts at element `offset`.
    fn write(&mut self, f: &mut fmt::Formatter<'_>, shape: &[usize], offset: usize) -> fmt::Result {
        let Some((&len, rest)) = shape.split_first() else {
            self.budget -= 1;
            return write!(f, "{}", self.values[offset]);
        };
        // The elements one step along this dimension spans (a factor of the checked element count).
        let stride: usize = rest.iter().product();
        // The entries shown: all, or both ends (two ranges, never a walk over the whole length).
        let (head, tail) = if self.summarise && len > 2 * EDGE_ITEMS {
            (EDGE_ITEMS, len - EDGE_ITEMS)
        } else {
            (len, len)
        };
        let shown = (0..head).chain(tail..len);
        f.write_str("[")?;
        let mut previous = None;
        for i in shown {
            if previous.is_some() {
                f.write_str(", ")?;
            }
            if self.budget == 0 {
                f.write_str("...")?;
                break;
            }
            if previous.is_some_and(|p| p + 1 != i) {
                f.write_str("..., ")?;
            }
            self.write(f, rest, offset + i * stride)?;
            previous = Some(i);
        }
        f.write_str("]")
    }
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
        // Summarised as PyTorch does (changed with issue 9: above 1000 elements, not above 6 per
        // dimension, and `...` for `…`): 10 elements print in full, 1001 do not.
        let short = Tensor::from_fn(&[10], |i| i as f32);
        assert_eq!(short.to_string(), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
        let long = Tensor::from_fn(&[1001], |i| i as f32);
        assert_eq!(long.to_string(), "[0, 1, 2, ..., 998, 999, 1000]");
        assert_eq!(Tensor::from_fn(&[2, 0], |_| 1.0).to_string(), "[]");
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
