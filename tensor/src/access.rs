//! Reading and writing a tensor's elements: typed host views for kernels and users, and copies
//! to host vectors from any device.

use std::ops::Deref;

use switchyard::{DType, DispatchError};

use crate::element::{Element, Scalar};
use crate::shape::Offsets;
use crate::storage::{ReadGuard, WriteGuard};
use crate::tensor::Tensor;

/// A CPU tensor's elements, read through its layout. Holds a read borrow of the storage (so no
/// in-place write can change them meanwhile).
#[derive(Debug)]
pub struct HostView<'t, T: Element> {
    guard: ReadGuard<'t, T>,
    tensor: &'t Tensor,
}

impl<'t, T: Element> HostView<'t, T> {
    /// The elements in row-major order as one slice, when the tensor is contiguous.
    #[inline]
    pub fn contiguous(&self) -> Option<&[T]> {
        if self.tensor.is_contiguous() {
            let start = self.tensor.storage_offset();
            Some(&self.guard.as_slice()[start..start + self.tensor.numel()])
        } else {
            None
        }
    }

    /// When the elements in row-major order are one run of the storage repeated: that run. So
    /// it is for a view that reads its storage contiguously along its trailing dimensions and
    /// stays put (stride 0, or extent 1) along the leading ones, as a broadcast scalar or a
    /// broadcast row does; a contiguous view is one run, repeated once. `None` for any other
    /// layout, and for an empty view. Kernels use it to pair a broadcast operand with a
    /// contiguous one run by run instead of element by element through strides.
    pub fn repeated_block(&self) -> Option<&[T]> {
        let t = self.tensor;
        if t.numel() == 0 {
            return None;
        }
        let (shape, strides) = (t.shape(), t.strides());
        let mut block = 1usize;
        let mut lead = shape.len();
        // `block` is a product of extents, at most `numel`: no overflow.
        while lead > 0 && (shape[lead - 1] == 1 || strides[lead - 1] == block) {
            block *= shape[lead - 1];
            lead -= 1;
        }
        let leading_stay = shape[..lead]
            .iter()
            .zip(&strides[..lead])
            .all(|(&extent, &stride)| extent == 1 || stride == 0);
        if !leading_stay {
            return None;
        }
        let start = t.storage_offset();
        self.guard.as_slice().get(start..start.checked_add(block)?)
    }

    /// The storage offsets of the elements, in row-major order of their indices.
    pub fn offsets(&self) -> Offsets<'t> {
        let t = self.tensor;
        Offsets::new(t.storage_offset(), t.shape(), t.strides(), t.numel())
    }

    /// The storage's elements (index them with [`HostView::offsets`]).
    pub fn storage(&self) -> &[T] {
        self.guard.as_slice()
    }

    /// The elements in row-major order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = T> + '_ {
        let storage = self.guard.as_slice();
        self.offsets().map(move |o| storage[o])
    }
}

/// A contiguous CPU tensor's elements as a slice, borrowed from its storage: what
/// [`Tensor::as_slice`] returns. While it lives, in-place writes to the storage fail.
#[derive(Debug)]
pub struct CpuSlice<'t, T: Element> {
    view: HostView<'t, T>,
}

impl<T: Element> Deref for CpuSlice<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.view.contiguous().unwrap_or_default()
    }
}

/// A CPU tensor's elements, writable through its layout: what in-place kernels use. Holds the
/// storage's write borrow (and the write counted one version).
#[derive(Debug)]
pub struct HostViewMut<'t, T: Element> {
    guard: WriteGuard<'t, T>,
    tensor: &'t Tensor,
}

impl<T: Element> HostViewMut<'_, T> {
    /// The storage's elements and the offsets of this view's, row-major.
    pub fn parts(&mut self) -> (&mut [T], Offsets<'_>) {
        let t = self.tensor;
        (
            self.guard.as_mut_slice(),
            Offsets::new(t.storage_offset(), t.shape(), t.strides(), t.numel()),
        )
    }

    /// The elements as one slice, when the tensor is contiguous.
    pub fn contiguous(&mut self) -> Option<&mut [T]> {
        let t = self.tensor;
        if t.is_contiguous() {
            let start = t.storage_offset();
            Some(&mut self.guard.as_mut_slice()[start..start + t.numel()])
        } else {
            None
        }
    }
}

impl Tensor {
    /// The elements of a CPU tensor of `T`'s dtype, for reading through its layout; errors
    /// naming `op` when the tensor is elsewhere or of another dtype, or an in-place write holds
    /// the storage.
    #[inline]
    pub fn host<T: Element>(&self, op: &'static str) -> Result<HostView<'_, T>, DispatchError> {
        let guard = self.storage().read::<T>(op)?;
        Ok(HostView {
            guard,
            tensor: self,
        })
    }

    /// The elements of a CPU tensor of `T`'s dtype, for writing in place; errors naming `op` when
    /// the tensor is elsewhere or of another dtype, when two of its elements share memory (an
    /// expanded view: a write would be ambiguous), or when any other borrow of its storage lives.
    pub fn host_mut<T: Element>(
        &self,
        op: &'static str,
    ) -> Result<HostViewMut<'_, T>, DispatchError> {
        self.check_writable(op)?;
        let guard = self.storage().write::<T>(op)?;
        Ok(HostViewMut {
            guard,
            tensor: self,
        })
    }

    /// The elements of a contiguous CPU tensor as a slice (a typed view of its storage, no copy);
    /// errors when the tensor is not on the CPU, not contiguous (`contiguous()` first), or not of
    /// `T`'s dtype.
    pub fn as_slice<T: Element>(&self) -> Result<CpuSlice<'_, T>, DispatchError> {
        const OP: &str = "Tensor::as_slice";
        let view = self.host::<T>(OP)?;
        if view.contiguous().is_none() {
            return Err(DispatchError::shape(
                OP,
                format!(
                    "a view with shape {:?} and strides {:?} is not contiguous; call \
                     `contiguous()` first",
                    self.shape(),
                    self.strides()
                ),
            ));
        }
        Ok(CpuSlice { view })
    }

    /// The elements, row-major, copied to host memory from any device; errors when `T` is not
    /// the tensor's dtype (convert with `to_dtype` first), when the backend cannot read them
    /// back (on the web a GPU cannot be waited for: [`Tensor::try_to_vec_async`] reads it), or
    /// when memory runs out.
    pub fn try_to_vec<T: Element>(&self) -> Result<Vec<T>, DispatchError> {
        const OP: &str = "Tensor::to_vec";
        let mut out = self.vec_for::<T>(OP)?;
        match self.storage().backend() {
            None => out.extend(self.host::<T>(OP)?.iter()),
            Some(backend) => self.gather(OP, &backend.read_bytes()?, &mut out)?,
        }
        Ok(out)
    }

    /// An empty vector with room for every element as a `T`; errors when `T` is not the
    /// tensor's dtype, or memory runs out.
    pub(crate) fn vec_for<T: Element>(&self, op: &'static str) -> Result<Vec<T>, DispatchError> {
        if T::DTYPE != self.dtype() {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "to_vec::<{}> of a {} tensor; convert it first with `to_dtype(DType::{:?})`",
                    T::DTYPE,
                    self.dtype(),
                    T::DTYPE
                ),
            ));
        }
        let mut out = Vec::new();
        out.try_reserve_exact(self.numel())
            .map_err(|_| DispatchError::out_of_memory(op, self.numel() * size_of::<T>()))?;
        Ok(out)
    }

    /// Appends this view's elements, row-major, from `bytes`, its backend storage read back.
    pub(crate) fn gather<T: Element>(
        &self,
        op: &'static str,
        bytes: &[u8],
        out: &mut Vec<T>,
    ) -> Result<(), DispatchError> {
        let storage = decode::<T>(op, bytes, self.storage().len())?;
        out.extend(
            Offsets::new(
                self.storage_offset(),
                self.shape(),
                self.strides(),
                self.numel(),
            )
            .map(|o| storage[o]),
        );
        Ok(())
    }

    /// The elements, row-major, copied to host memory; panics with [`Tensor::try_to_vec`]'s
    /// error.
    #[track_caller]
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        self.try_to_vec().unwrap_or_else(|e| e.panic())
    }

    /// The elements converted to `f64`, row-major (booleans as 0 and 1): a dtype-agnostic read
    /// for tests and printing.
    pub fn try_to_f64_vec(&self) -> Result<Vec<f64>, DispatchError> {
        crate::with_element!(self.dtype(), T => Ok(self
            .try_to_vec::<T>()?
            .into_iter()
            .map(|v| v.to_scalar().as_f64())
            .collect()))
    }

    /// The single element of a one-element tensor, widened; errors for any other size.
    pub fn try_item(&self) -> Result<Scalar, DispatchError> {
        if self.numel() != 1 {
            return Err(DispatchError::shape(
                "Tensor::item",
                format!(
                    "item() of a tensor of {} elements (shape {:?})",
                    self.numel(),
                    self.shape()
                ),
            ));
        }
        crate::with_element!(self.dtype(), T => Ok(self.try_to_vec::<T>()?[0].to_scalar()))
    }
}

/// Little-endian `bytes` of a backend's storage as `len` elements of `T`; errors when the backend
/// returned another length.
fn decode<T: Element>(op: &'static str, bytes: &[u8], len: usize) -> Result<Vec<T>, DispatchError> {
    let size = size_of::<T>();
    if bytes.len() != len * size {
        return Err(DispatchError::kernel(
            op,
            format!(
                "the backend read back {} bytes for {len} elements of {}",
                bytes.len(),
                T::DTYPE
            ),
        ));
    }
    let mut values = Vec::new();
    values
        .try_reserve_exact(len)
        .map_err(|_| DispatchError::out_of_memory(op, bytes.len()))?;
    values.extend(bytes.chunks_exact(size).map(from_le::<T>));
    Ok(values)
}

/// One element from its little-endian bytes (a `bool` is any non-zero byte).
fn from_le<T: Element>(bytes: &[u8]) -> T {
    let scalar = match T::DTYPE {
        DType::Bool => Scalar::Bool(bytes[0] != 0),
        DType::U8 => Scalar::Int(i64::from(bytes[0])),
        DType::I32 => Scalar::Int(i64::from(i32::from_le_bytes(
            bytes.try_into().unwrap_or_default(),
        ))),
        DType::I64 => Scalar::Int(i64::from_le_bytes(bytes.try_into().unwrap_or_default())),
        DType::F16 => {
            Scalar::Float(half::f16::from_le_bytes(bytes.try_into().unwrap_or_default()).to_f64())
        }
        DType::BF16 => {
            Scalar::Float(half::bf16::from_le_bytes(bytes.try_into().unwrap_or_default()).to_f64())
        }
        DType::F32 => Scalar::Float(f64::from(f32::from_le_bytes(
            bytes.try_into().unwrap_or_default(),
        ))),
        DType::F64 => Scalar::Float(f64::from_le_bytes(bytes.try_into().unwrap_or_default())),
    };
    T::from_scalar(scalar)
}
