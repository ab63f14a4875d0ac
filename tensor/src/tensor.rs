//! `Tensor`: a strided view of a shared storage, with a dtype and a device.

use std::fmt;
use std::sync::Arc;

use switchyard::{DType, DispatchError, DispatchKeySet};

use crate::device::Device;
use crate::element::Element;
use crate::shape::{Dims, is_contiguous, max_offset};
use crate::storage::header::{Header, HeaderSlot};
use crate::storage::host::{Bytes, HostBlock, HostVec, InlineBytes};
use crate::storage::{BackendStorage, Holder, Storage, host_buffer};

/// A tensor's header: what it views of which storage. One allocation holds it with its shape and
/// strides (inline up to five dimensions) and, for a tensor made from data rather than a view,
/// its storage too (its elements come from the device's allocator).
///
/// **Invariants**, checked by every constructor and view: `numel` is the product of `sizes`;
/// `sizes` and `strides` have one length; a non-empty view's furthest element, `offset + Σ
/// (size−1)·stride`, is below the storage's length, so kernels index any element without
/// overflow or bounds failure; an empty view's offset is 0, so no offset exceeds the storage's
/// length; `keys` are the device's keys with the dtype's bit (a user dtype's bit for a tensor
/// seen as one, `Tensor::as_user_dtype`) and autograd's keys where it records; `dtype` is the
/// storage's;
/// `contiguous` is `is_contiguous(sizes, strides)`, cached as c10 caches it.
///
/// Public only so that [`Tensor`] can name it as its boxed form (`SharedTensor::Shared`); it
/// lives in a private module, so no other crate can name or build one.
#[derive(Debug)]
pub struct TensorInner {
    pub(crate) keys: DispatchKeySet,
    pub(crate) dtype: DType,
    pub(crate) device: Device,
    pub(crate) numel: usize,
    pub(crate) offset: usize,
    pub(crate) sizes: Dims,
    pub(crate) strides: Dims,
    pub(crate) contiguous: bool,
    pub(crate) holder: Holder,
    /// Autograd's record of this tensor (`None` for a tensor that does not require grad): its
    /// gradient slot (a leaf) or the backward node that made it. Set only while the header has
    /// one handle (`autograd::meta`), so it never changes under a reader.
    pub(crate) autograd: Option<Arc<crate::autograd::AutogradMeta>>,
    /// Whether the header's `Arc` was ever handed out (a `Weak` of it may exist); see
    /// `storage::header`.
    pub(crate) lent: crate::storage::header::Lent,
}

/// An n-dimensional array: a strided view of a storage that other views may share. Cloning is
/// one reference count (the clone is the same tensor); views share the storage, so writes
/// through one are seen by all.
///
/// A tensor is one pointer wide: `Result<Tensor, DispatchError>` is a (tag, pointer) pair, which
/// kernels return in registers.
#[derive(Clone)]
pub struct Tensor {
    pub(crate) inner: Header,
}

/// The element count of `shape` if `len` values fill it exactly, else an error naming `op`.
#[inline(always)]
fn filled_by(
    op: &'static str,
    len: usize,
    shape: &[usize],
    dtype: DType,
) -> Result<usize, DispatchError> {
    // `len` values exist, so `len` elements fit in memory: a shape whose product is `len`
    // (computed without overflow) needs no further check. The common ranks without a loop.
    let fills = match *shape {
        [] => len == 1,
        [n] => n == len,
        [a, b] => a.checked_mul(b) == Some(len),
        _ => shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)) == Some(len),
    };
    if fills {
        Ok(len)
    } else {
        not_filled_by(op, len, shape, dtype)
    }
}

/// `filled_by`'s error: the count overflows, or differs from `len`.
#[cold]
#[inline(never)]
fn not_filled_by(
    op: &'static str,
    len: usize,
    shape: &[usize],
    dtype: DType,
) -> Result<usize, DispatchError> {
    let numel = Tensor::checked_numel(op, shape, dtype)?;
    if len != numel {
        return Err(DispatchError::shape(
            op,
            format!("{len} values cannot fill shape {shape:?} ({numel} elements)"),
        ));
    }
    Ok(numel)
}

impl Tensor {
    /// A contiguous tensor over all of a new storage (whose length is `numel`, checked by
    /// callers).
    #[inline(always)]
    fn contiguous_over(holder: Holder, shape: &[usize], numel: usize, device: Device) -> Tensor {
        let dtype = holder.dtype();
        let (sizes, strides) = Dims::contiguous(shape);
        Tensor::with_layout(
            holder,
            device,
            device.keys() | dtype.key_bit(),
            numel,
            0,
            sizes,
            strides,
            dtype,
            true,
        )
    }

    /// A contiguous CPU tensor of `dtype` over host memory, in the header `slot`: `block`
    /// (`None`: bytes inline in the header) holding its `numel` elements, laid out as `sizes`
    /// and `strides` (callers checked that they fit). Callers take the slot and ask
    /// `inference` before they allocate the block, and call nothing after it, so that the
    /// holder and the layout are written from registers where they live (see `HeaderSlot`).
    #[allow(clippy::too_many_arguments)] // the parts of a header over host memory
    #[inline(always)]
    pub(crate) fn contiguous_host(
        slot: HeaderSlot,
        block: Option<HostBlock>,
        dtype: DType,
        numel: usize,
        sizes: Dims,
        strides: Dims,
        inference: bool,
    ) -> Tensor {
        let bytes = match block {
            Some(block) => Bytes::Block(block),
            None => Bytes::Inline(InlineBytes::new()),
        };
        Tensor {
            inner: slot.write(
                Device::Cpu.keys() | dtype.key_bit(),
                dtype,
                Device::Cpu,
                numel,
                0,
                sizes,
                strides,
                true,
                Holder::host(bytes, dtype, numel, inference),
            ),
        }
    }

    /// A header built from a holder already made (`contiguous_host` builds its own). Callers
    /// have checked the invariants above.
    #[allow(clippy::too_many_arguments)] // the header's fields, each named by its caller
    #[inline]
    pub(crate) fn with_layout(
        holder: Holder,
        device: Device,
        keys: DispatchKeySet,
        numel: usize,
        offset: usize,
        sizes: Dims,
        strides: Dims,
        dtype: DType,
        contiguous: bool,
    ) -> Tensor {
        Tensor {
            inner: HeaderSlot::take().write(
                keys, dtype, device, numel, offset, sizes, strides, contiguous, holder,
            ),
        }
    }

    /// The element count of `shape` for elements of `dtype`, or an
    /// [`ErrorKind::SizeOverflow`](switchyard::ErrorKind) error naming `op` when it exceeds
    /// `usize::MAX` or its bytes exceed `isize::MAX`, the largest allocation. A shape with a zero
    /// dimension has 0 elements, whatever the others.
    #[inline]
    pub fn checked_numel(
        op: &'static str,
        shape: &[usize],
        dtype: DType,
    ) -> Result<usize, DispatchError> {
        // The common ranks without a loop, the byte bound without a division (`dtype`'s size is
        // a constant where the caller's dtype is); an overflow, or a zero extent beside one,
        // goes to the general rule.
        let numel = match *shape {
            [] => Some(1),
            [n] => Some(n),
            [a, b] => a.checked_mul(b),
            _ => shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)),
        };
        if let Some(numel) = numel
            && numel
                .checked_mul(dtype.size_of())
                .is_some_and(|bytes| bytes <= isize::MAX as usize)
        {
            return Ok(numel);
        }
        Tensor::checked_numel_in_general(op, shape, dtype)
    }

    /// [`checked_numel`](Tensor::checked_numel) for any shape, with its errors.
    #[inline(never)]
    fn checked_numel_in_general(
        op: &'static str,
        shape: &[usize],
        dtype: DType,
    ) -> Result<usize, DispatchError> {
        if shape.contains(&0) {
            return Ok(0);
        }
        let numel = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| {
                DispatchError::size_overflow(op, &[shape], "the element count exceeds usize::MAX")
            })?;
        if numel > isize::MAX as usize / dtype.size_of() {
            return Err(DispatchError::size_overflow(
                op,
                &[shape],
                format!(
                    "{numel} elements ({} bytes each, {dtype}) exceed isize::MAX bytes, the \
                     largest allocation",
                    dtype.size_of()
                ),
            ));
        }
        Ok(numel)
    }

    /// A CPU tensor of a full host buffer (from [`host_buffer`](crate::host_buffer)): how kernels
    /// return their output. Errors when the buffer's length does not fill `shape`.
    #[inline(always)] // a small buffer's inline elements then move once, into the header
    pub fn from_host<T: Element>(
        buffer: HostVec<T>,
        shape: &[usize],
    ) -> Result<Tensor, DispatchError> {
        let numel = filled_by("Tensor::from_host", buffer.len(), shape, T::DTYPE)?;
        Ok(Tensor::contiguous_over(
            Holder::from_host(buffer),
            shape,
            numel,
            Device::Cpu,
        ))
    }

    /// A CPU tensor of row-major `data`, which it takes over without a copy (its buffer is
    /// freed when the last view of the tensor drops; it is not the caching allocator's, so
    /// [`memory_stats`](crate::memory_stats) does not count it); errors when `data.len()` is not
    /// the product of `shape` (or that product overflows). `T` decides the dtype: note that an
    /// unsuffixed float literal is an `f64` in Rust (`vec![1.0f32]` or `from_vec::<f32>` for
    /// `f32`, the dtype of [`Tensor::vector`] and [`Tensor::scalar`]).
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor, DispatchError> {
        const OP: &str = "Tensor::from_vec";
        let numel = filled_by(OP, data.len(), shape, T::DTYPE)?;
        // The calls before the block (see `contiguous_host`).
        let slot = HeaderSlot::take();
        let inference = crate::autograd::is_inference_mode_enabled();
        let (sizes, strides) = Dims::contiguous(shape);
        match HostBlock::from_vec(data) {
            // `filled_by` checked that the `Vec`'s length is `numel`.
            Ok(block) => Ok(Tensor::contiguous_host(
                slot,
                Some(block),
                T::DTYPE,
                numel,
                sizes,
                strides,
                inference,
            )),
            // No allocation to take over (an empty `Vec`): a block from the allocator.
            Err(data) => Tensor::copied(OP, &data, shape),
        }
    }

    /// A CPU tensor copied from row-major `data`; errors like [`Tensor::from_vec`].
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Tensor, DispatchError> {
        Tensor::copied("Tensor::from_slice", data, shape)
    }

    fn copied<T: Element>(
        op: &'static str,
        data: &[T],
        shape: &[usize],
    ) -> Result<Tensor, DispatchError> {
        filled_by(op, data.len(), shape, T::DTYPE)?;
        Tensor::copied_in_place(op, data, shape)
    }

    /// A 1-dimensional `f32` CPU tensor holding `data`. Panics if memory runs out.
    #[track_caller]
    pub fn vector(data: &[f32]) -> Tensor {
        Tensor::from_slice(data, &[data.len()]).unwrap_or_else(|e| e.panic())
    }

    /// A 0-dimensional `f32` CPU tensor holding `value`. Panics if memory runs out.
    #[track_caller]
    pub fn scalar(value: f32) -> Tensor {
        Tensor::from_slice(&[value], &[]).unwrap_or_else(|e| e.panic())
    }

    /// A 0-dimensional CPU tensor of `T`'s dtype holding `value`; errors if memory runs out.
    pub fn from_scalar<T: Element>(value: T) -> Result<Tensor, DispatchError> {
        Tensor::from_slice(&[value], &[])
    }

    /// A CPU tensor whose element at row-major index `i` is `f(i)`. Panics with the error of
    /// [`Tensor::try_from_fn`].
    #[track_caller]
    pub fn from_fn<T: Element>(shape: &[usize], f: impl FnMut(usize) -> T) -> Tensor {
        Tensor::try_from_fn(shape, f).unwrap_or_else(|e| e.panic())
    }

    /// A CPU tensor whose element at row-major index `i` is `f(i)`; errors when the shape's
    /// element count overflows or its memory cannot be allocated (saying how many bytes).
    pub fn try_from_fn<T: Element>(
        shape: &[usize],
        f: impl FnMut(usize) -> T,
    ) -> Result<Tensor, DispatchError> {
        const OP: &str = "Tensor::from_fn";
        let numel = Tensor::checked_numel(OP, shape, T::DTYPE)?;
        let mut buffer = host_buffer::<T>(OP, numel)?;
        buffer.extend((0..numel).map(f));
        Tensor::from_host(buffer, shape)
    }

    /// A contiguous tensor on a non-CPU device whose data a backend holds. Errors when the
    /// storage's length does not fit `shape` (or the shape's element count overflows), or when
    /// `device` is the CPU (CPU tensors hold host memory: [`Tensor::from_host`]).
    pub fn from_backend(
        storage: impl BackendStorage,
        shape: &[usize],
        device: Device,
    ) -> Result<Tensor, DispatchError> {
        const OP: &str = "Tensor::from_backend";
        if device == Device::Cpu {
            return Err(DispatchError::kernel(
                OP,
                "CPU tensors hold host memory; build them with `Tensor::from_host` or `from_vec`",
            ));
        }
        let numel = Tensor::checked_numel(OP, shape, storage.dtype())?;
        if storage.len() != numel {
            return Err(DispatchError::shape(
                OP,
                format!(
                    "storage of {} elements cannot fill shape {shape:?}",
                    storage.len()
                ),
            ));
        }
        Ok(Tensor::contiguous_over(
            Holder::from_backend(Box::new(storage)),
            shape,
            numel,
            device,
        ))
    }

    /// A view of this tensor's storage with another layout, checked: `sizes` and `strides` of one
    /// length, the element count fits, and every element lies inside the storage.
    pub fn as_strided(
        &self,
        sizes: &[usize],
        strides: &[usize],
        offset: usize,
    ) -> Result<Tensor, DispatchError> {
        const OP: &str = "as_strided";
        if sizes.len() != strides.len() {
            return Err(DispatchError::shape(
                OP,
                format!("sizes {sizes:?} and strides {strides:?} differ in length"),
            ));
        }
        let numel = Tensor::checked_numel(OP, sizes, self.dtype())?;
        let len = self.storage().len();
        let fits = numel == 0 && offset <= len
            || max_offset(sizes, strides)
                .and_then(|reach| reach.checked_add(offset))
                .is_some_and(|last| last < len);
        if !fits {
            return Err(DispatchError::shape(
                OP,
                format!(
                    "sizes {sizes:?}, strides {strides:?} at offset {offset} reach beyond the \
                     storage's {len} elements"
                ),
            ));
        }
        Ok(self.restrided(numel, offset, Dims::new(sizes), Dims::new(strides)))
    }

    /// A view with a layout the caller checked against the invariants. An empty view starts at
    /// 0: its strides may place its (absent) first element past the storage (row 2 of a `[3, 0]`
    /// tensor), and readers slice from the offset. The view keeps the tensor's dtype bit, so a
    /// view of a tensor seen as a user dtype is one too.
    pub(crate) fn restrided(
        &self,
        numel: usize,
        offset: usize,
        sizes: Dims,
        strides: Dims,
    ) -> Tensor {
        let contiguous = is_contiguous(&sizes, &strides);
        Tensor::with_layout(
            Holder::Of(self.storage().clone()),
            self.inner.device,
            self.inner.device.keys()
                | self.inner.keys.dtype_bits()
                | self.inner.keys.intersection(DispatchKeySet::FAKE),
            numel,
            if numel == 0 { 0 } else { offset },
            sizes,
            strides,
            self.inner.dtype,
            contiguous,
        )
    }

    /// This tensor's layout over the storage `holder` holds, on `device` with `keys` (backend
    /// and layer keys: the dtype's bits are added; autograd's are not, the result records
    /// nothing). How meta and fake tensors stand for one another (`fake`).
    pub(crate) fn relabeled(&self, holder: Holder, device: Device, keys: DispatchKeySet) -> Tensor {
        Tensor::with_layout(
            holder,
            device,
            keys | self.inner.keys.dtype_bits(),
            self.inner.numel,
            self.inner.offset,
            self.inner.sizes.clone(),
            self.inner.strides.clone(),
            self.inner.dtype,
            self.inner.contiguous,
        )
    }

    /// The dispatch keys this tensor contributes to a call: its device's backend keys and its
    /// dtype's bit.
    #[inline(always)]
    pub fn keys(&self) -> DispatchKeySet {
        self.inner.keys
    }

    /// The extent of each dimension.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        &self.inner.sizes
    }

    /// The step in elements between neighbours along each dimension.
    #[inline]
    pub fn strides(&self) -> &[usize] {
        &self.inner.strides
    }

    /// Where the first element lies in the storage, in elements.
    #[inline]
    pub fn storage_offset(&self) -> usize {
        self.inner.offset
    }

    /// Number of dimensions.
    #[inline]
    pub fn dim(&self) -> usize {
        self.inner.sizes.len()
    }

    /// Number of elements (checked when the tensor was built).
    #[inline]
    pub fn numel(&self) -> usize {
        self.inner.numel
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.inner.dtype
    }

    /// Where the data lives.
    #[inline]
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// Whether the elements lie row-major without gaps from the storage offset on.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.inner.contiguous
    }

    /// The storage this tensor views (shared with its views).
    #[inline]
    pub fn storage(&self) -> &Storage {
        Storage::of(&self.inner)
    }

    /// The version counter shared by every view of this storage: how many in-place writes it has
    /// seen.
    pub fn version(&self) -> u64 {
        self.storage().version()
    }

    /// Whether two tensors view one storage (a clone or a view, not an equal copy).
    pub fn same_storage(&self, other: &Tensor) -> bool {
        self.storage().same(other.storage())
    }

    /// Whether two of this tensor's elements may share memory (an `expand`ed view, a stride of 0
    /// along a dimension of extent above 1): in-place writes into such a tensor are refused.
    pub fn has_internal_overlap(&self) -> bool {
        crate::shape::may_overlap(self.shape(), self.strides())
    }

    /// `Ok` when this tensor can be written element by element; the error every in-place write
    /// gives (naming `op`, the shape and strides) when [`Tensor::has_internal_overlap`], or when
    /// it requires grad while autograd records (in-place ops are not differentiated).
    pub fn check_writable(&self, op: &'static str) -> Result<(), DispatchError> {
        if self.requires_grad() && crate::autograd::is_grad_enabled() {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "cannot write in place into {}, which requires grad, while autograd \
                     records: autograd does not differentiate in-place ops; use the \
                     out-of-place op, or write under `autograd::no_grad()` (as an optimizer step \
                     does)",
                    self.summary()
                ),
            ));
        }
        if !self.has_internal_overlap() {
            return Ok(());
        }
        Err(DispatchError::shape(
            op,
            format!(
                "cannot write in place into a view whose elements overlap in memory (shape {:?}, \
                 strides {:?}: an expanded tensor); write into `contiguous()` of it",
                self.shape(),
                self.strides()
            ),
        ))
    }

    /// Whether two handles are the same tensor (one header: a clone).
    pub fn same(&self, other: &Tensor) -> bool {
        self.inner.same(&other.inner)
    }

    /// The storage of a non-CPU tensor, if it is of type `S`; backends use this in their kernels.
    pub fn backend_storage<S: BackendStorage>(&self) -> Option<&S> {
        let storage: &dyn std::any::Any = self.storage().backend()?;
        storage.downcast_ref::<S>()
    }

    /// This tensor on `device`: the op [`crate::ops::to()`]. Panics if no linked backend can copy
    /// it there (see [`Tensor::try_to`]).
    #[track_caller]
    pub fn to(&self, device: Device) -> Tensor {
        crate::ops::to(self, device)
    }

    /// This tensor on `device`, or the error that says why it cannot get there.
    pub fn try_to(&self, device: Device) -> Result<Tensor, DispatchError> {
        crate::ops::try_to(self, device)
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
