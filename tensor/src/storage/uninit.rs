//! A CPU tensor built before its elements are written: memory and header first, elements after.

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use switchyard::DispatchError;

use super::header::HeaderSlot;
use super::host::INLINE_BYTES;
use crate::element::Element;
use crate::shape::Dims;
use crate::tensor::Tensor;

/// A new CPU tensor whose elements are not written yet. [`Tensor::uninit`] makes one,
/// [`as_mut_slice`](UninitTensor::as_mut_slice) lends its elements to be written (from any
/// number of threads: it is a plain slice), and [`assume_init`](UninitTensor::assume_init)
/// declares them written and gives the tensor.
///
/// The header and storage are built once, where they live, and a small tensor's elements (up
/// to 64 bytes) are written straight into its header: nothing is moved in afterwards, which
/// makes this the cheapest way for a kernel to return a result (the CPU SIMD kernels use it).
/// Until `assume_init` nothing can read the elements: an `UninitTensor` is not a tensor, cannot
/// be cloned, and one dropped unwritten (a kernel that failed or panicked half-way) gives its
/// memory back without reading it.
///
/// ```
/// use switchyard::Tensor;
///
/// let mut t = Tensor::uninit::<f32>("iota", &[2, 3])?;
/// for (i, slot) in t.as_mut_slice().iter_mut().enumerate() {
///     slot.write(i as f32);
/// }
/// // SAFETY: the loop wrote every element.
/// let t = unsafe { t.assume_init() };
/// assert_eq!(t.to_vec::<f32>(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
/// # Ok::<(), switchyard::DispatchError>(())
/// ```
pub struct UninitTensor<T: Element> {
    /// The tensor to be: its header is this value's alone (never cloned, lent or returned
    /// before `assume_init`), and its storage holds `len` elements of `T` at `elements`.
    tensor: Tensor,
    elements: *mut MaybeUninit<T>,
    len: usize,
    _elements: PhantomData<T>,
}

// SAFETY: an `UninitTensor` owns its tensor (which is `Send`) and the elements its pointer
// reaches are that tensor's own, reached only through `&mut self`; like a `Box<[MaybeUninit<T>]>`.
unsafe impl<T: Element> Send for UninitTensor<T> {}
// SAFETY: `&UninitTensor` reaches nothing (every access to the elements takes `&mut self`).
unsafe impl<T: Element> Sync for UninitTensor<T> {}

impl Tensor {
    /// A new CPU tensor of `shape` and `T`'s dtype whose elements are still to be written; see
    /// [`UninitTensor`]. Errors (never aborts) naming `op` when the shape's size overflows or
    /// memory runs out.
    #[inline]
    pub fn uninit<T: Element>(
        op: &'static str,
        shape: &[usize],
    ) -> Result<UninitTensor<T>, DispatchError> {
        let numel = Tensor::checked_numel(op, shape, T::DTYPE)?;
        // The calls before the block, the layout's arithmetic after it, so that its sizes and
        // strides go from registers to the header (see `Tensor::contiguous_host`).
        let slot = HeaderSlot::take();
        let inference = crate::autograd::is_inference_mode_enabled();
        // `checked_numel` keeps the bytes within `isize::MAX`, so this cannot overflow.
        let bytes = numel * size_of::<T>();
        let block = if bytes <= INLINE_BYTES {
            None
        } else {
            Some(super::allocator::cpu_allocate(op, bytes)?)
        };
        let (sizes, strides) = Dims::contiguous(shape);
        let tensor =
            Tensor::contiguous_host(slot, block, T::DTYPE, numel, sizes, strides, inference);
        let elements = tensor.inner.holder.host_ptr().cast::<MaybeUninit<T>>();
        Ok(UninitTensor {
            tensor,
            elements,
            len: numel,
            _elements: PhantomData,
        })
    }
}

impl Tensor {
    /// A new CPU tensor of `shape` holding a copy of `data`, written in place (see
    /// [`UninitTensor`]); `data.len()` must be the shape's element count (an error naming `op`
    /// otherwise, callers check it first with their own message).
    #[inline]
    pub(crate) fn copied_in_place<T: Element>(
        op: &'static str,
        data: &[T],
        shape: &[usize],
    ) -> Result<Tensor, DispatchError> {
        let mut tensor = Tensor::uninit::<T>(op, shape)?;
        let out = tensor.as_mut_slice();
        if out.len() != data.len() {
            return Err(DispatchError::shape(
                op,
                format!("{} values cannot fill shape {shape:?}", data.len()),
            ));
        }
        for (slot, &value) in out.iter_mut().zip(data) {
            slot.write(value);
        }
        // SAFETY: `out` and `data` have one length, so the loop wrote every element.
        Ok(unsafe { tensor.assume_init() })
    }
}

impl<T: Element> UninitTensor<T> {
    /// The elements, in row-major order, to be written.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [MaybeUninit<T>] {
        // SAFETY: `elements` is the start of the storage's bytes, which hold `len` elements of
        // `T` (sized by `Tensor::uninit`), aligned for any element (a pooled block to 64 bytes,
        // inline bytes to 8) and valid while the tensor lives (a block never moves; inline bytes
        // lie in the header, whose allocation does not move). `MaybeUninit` needs no
        // initialisation, and `&mut self` makes this the only access: the header is this
        // value's alone.
        unsafe { std::slice::from_raw_parts_mut(self.elements, self.len) }
    }

    /// The tensor, its elements declared written.
    ///
    /// # Safety
    /// Every element of [`as_mut_slice`](UninitTensor::as_mut_slice) has been written with a
    /// valid value of `T`.
    #[inline]
    pub unsafe fn assume_init(self) -> Tensor {
        self.tensor
    }
}

impl<T: Element> fmt::Debug for UninitTensor<T> {
    /// The shape and dtype only: the elements may not be written yet.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UninitTensor{:?}:{}", self.tensor.shape(), T::DTYPE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_tensors_are_written_in_place() {
        for shape in [&[][..], &[0], &[16], &[17], &[3, 1000]] {
            let mut t = Tensor::uninit::<f32>("test", shape).unwrap();
            let n: usize = shape.iter().product();
            assert_eq!(t.as_mut_slice().len(), n);
            for (i, slot) in t.as_mut_slice().iter_mut().enumerate() {
                slot.write(i as f32);
            }
            // SAFETY: every element was written just above.
            let t = unsafe { t.assume_init() };
            assert_eq!(t.shape(), shape);
            assert!(t.is_contiguous());
            assert_eq!(
                t.to_vec::<f32>(),
                (0..n).map(|i| i as f32).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_zero_extent_empties_any_shape() {
        for shape in [&[usize::MAX, 2, 0][..], &[0, usize::MAX], &[3, 0]] {
            let mut t = Tensor::uninit::<f64>("test", shape).unwrap();
            assert!(t.as_mut_slice().is_empty());
            // SAFETY: there is no element to write.
            let t = unsafe { t.assume_init() };
            assert_eq!((t.shape(), t.numel()), (shape, 0));
        }
    }

    #[test]
    fn bad_shapes_are_errors_that_name_the_op() {
        let err = Tensor::uninit::<f32>("my_op", &[usize::MAX, 2]).unwrap_err();
        assert!(err.to_string().contains("my_op"), "{err}");
        let err = Tensor::uninit::<f64>("my_op", &[usize::MAX / 4]).unwrap_err();
        assert!(err.to_string().contains("isize::MAX"), "{err}");
        assert_eq!(
            format!("{:?}", Tensor::uninit::<i32>("my_op", &[2, 3]).unwrap()),
            "UninitTensor[2, 3]:i32"
        );
    }
}
