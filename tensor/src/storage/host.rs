//! Host memory: raw, 64-byte-aligned (from 16 KiB, page-aligned) blocks and a typed, growing
//! buffer over one.
//!
//! The only `unsafe` of the tensor crate lives here, in `storage/mod.rs`'s borrow guards, in
//! `storage/header.rs` (headers built in place, their allocations reused) and in
//! `storage/uninit.rs` (a new tensor's elements written in place). A block is plain bytes;
//! what makes reading them as `T` sound is tracked above: a [`HostVec`]
//! knows how many leading elements it wrote, and a tensor's storage is created only from a full
//! `HostVec` of its dtype (`Tensor::from_host`), from a `Vec` of it (`Tensor::from_vec`), or
//! unwritten inside an `UninitTensor`, which is a tensor only once `assume_init` is promised
//! every element: so every element a tensor exposes was written as a valid value of its dtype.

use std::alloc::{Layout, alloc, dealloc};
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::panic::RefUnwindSafe;
use std::ptr::NonNull;

use switchyard::DispatchError;

use crate::element::Element;

/// Alignment of every host block: a cache line, and more than any element or SIMD load needs.
pub const HOST_ALIGN: usize = 64;

/// Blocks of at least this many bytes start on a page boundary ([`PAGE_ALIGN`]). A kernel that
/// streams `out[i] = f(x[i], y[i])` stalls on *4K aliasing* when an output address is a little
/// ahead of an input address modulo 4096 (the CPU takes a load for one of the stores just
/// issued): a 64-byte-aligned large block sits at page offset 64, a `Vec`'s at 16, and that
/// pairing ran `add` at 64K–1M elements about 1.25× slower than inputs and output at one offset
/// did. At offset 0 a block is never ahead of an input from the system allocator.
pub const PAGE_ALIGNED_FROM: usize = 16 * 1024;

/// The alignment of blocks of [`PAGE_ALIGNED_FROM`] bytes or more.
pub const PAGE_ALIGN: usize = 4096;

/// The alignment a pooled block of `bytes` bytes gets.
fn block_align(bytes: usize) -> usize {
    if bytes >= PAGE_ALIGNED_FROM {
        PAGE_ALIGN
    } else {
        HOST_ALIGN
    }
}

/// An owned allocation of `bytes` bytes (never zero, so every block is a real allocation with a
/// real address): either *pooled*, 64-byte aligned (page-aligned from [`PAGE_ALIGNED_FROM`]
/// bytes), from [`HostBlock::allocate`] (the caching
/// allocator's blocks; an empty request gets one cache line), or *adopted*, the buffer of a
/// `Vec<T>` a tensor took over ([`HostBlock::from_vec`]), aligned for `T`, which goes back to the
/// system when the tensor drops.
#[derive(Debug)]
pub struct HostBlock {
    ptr: NonNull<u8>,
    bytes: usize,
    /// `HOST_ALIGN` or `PAGE_ALIGN` for a pooled block (`block_align`); `align_of::<T>()` (at
    /// most 8) for an adopted one.
    align: usize,
}

// SAFETY: a block is an owned allocation like a `Box<[u8]>`; it holds no thread-bound state.
unsafe impl Send for HostBlock {}
// SAFETY: `&HostBlock` only exposes the address and size; reads and writes of the bytes go
// through `&mut HostBlock` or through the storage's borrow guards, which exclude each other.
unsafe impl Sync for HostBlock {}

impl HostBlock {
    /// A new block of at least `bytes` bytes, or an out-of-memory error naming `op`.
    pub fn allocate(op: &'static str, bytes: usize) -> Result<HostBlock, DispatchError> {
        let bytes = bytes.max(HOST_ALIGN);
        let align = block_align(bytes);
        let layout = Layout::from_size_align(bytes, align).map_err(|_| {
            DispatchError::size_overflow(op, &[&[bytes]], "the byte size exceeds isize::MAX")
        })?;
        // SAFETY: `layout` has a non-zero size (at least `HOST_ALIGN`).
        let ptr = unsafe { alloc(layout) };
        match NonNull::new(ptr) {
            Some(ptr) => Ok(HostBlock { ptr, bytes, align }),
            None => Err(DispatchError::out_of_memory(op, bytes)),
        }
    }

    /// The buffer of `values` (its first `values.len()` elements written), without a copy;
    /// `values` back when it has no allocation (a capacity of 0).
    pub(crate) fn from_vec<T: Element>(mut values: Vec<T>) -> Result<HostBlock, Vec<T>> {
        // `as_mut_ptr` (not a slice) keeps the provenance of the whole buffer, for `dealloc`.
        let ptr = match NonNull::new(values.as_mut_ptr()) {
            Some(ptr) if values.capacity() != 0 => ptr.cast::<u8>(),
            _ => return Err(values),
        };
        let capacity = values.capacity();
        std::mem::forget(values);
        // `Vec` allocated `capacity` elements (not zero-sized: every `Element` has a size) with
        // the global allocator and the layout `Layout::array::<T>(capacity)`, as its docs
        // promise; `drop` frees it with that layout.
        let block = HostBlock {
            ptr,
            bytes: capacity * size_of::<T>(),
            align: align_of::<T>(),
        };
        Ok(block)
    }

    /// Whether the block is the caching allocator's (pooled) rather than an adopted `Vec`'s.
    pub(crate) fn is_pooled(&self) -> bool {
        self.align >= HOST_ALIGN
    }

    /// The block's size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The block's address.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated by the global allocator with exactly this layout (which
        // was valid then, so it is now): in `allocate` with `block_align(bytes)`, kept in
        // `align`, or by a `Vec<T>` with `Layout::array::<T>(capacity)`, whose size is `bytes`
        // and alignment `align` (`from_vec`).
        unsafe {
            dealloc(
                self.ptr.as_ptr(),
                Layout::from_size_align_unchecked(self.bytes, self.align),
            )
        };
    }
}

/// Bytes of elements a tensor keeps in its own header rather than in a block: a small tensor is
/// one heap allocation, with no trip to the caching allocator.
pub(crate) const INLINE_BYTES: usize = 64;

/// Elements kept in a tensor's header: [`INLINE_BYTES`] bytes, aligned for any element (8).
/// Written through shared references (an in-place op's write guard), so in an `UnsafeCell`.
pub(crate) struct InlineBytes(UnsafeCell<[MaybeUninit<u64>; INLINE_BYTES / 8]>);

// SAFETY: plain bytes, owned; concurrent access is ruled by the storage's borrow guards (many
// readers or one writer), as for a `HostBlock`.
unsafe impl Send for InlineBytes {}
// SAFETY: as for `HostBlock`: `&InlineBytes` only yields the address; reads and writes of the
// bytes go through the storage's borrow guards, which exclude each other, or `&mut HostVec`.
unsafe impl Sync for InlineBytes {}
// Like a `HostBlock`'s bytes: a panic during a write leaves valid elements (every write stores a
// whole valid value), so a caught panic cannot expose a broken invariant.
impl RefUnwindSafe for InlineBytes {}

impl InlineBytes {
    pub(crate) fn new() -> InlineBytes {
        InlineBytes(UnsafeCell::new([MaybeUninit::uninit(); INLINE_BYTES / 8]))
    }

    /// The bytes' address; writable (they are in an `UnsafeCell`).
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.0.get().cast::<u8>()
    }
}

impl std::fmt::Debug for InlineBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InlineBytes")
    }
}

/// Where a host buffer's elements live.
#[derive(Debug)]
pub(crate) enum Bytes {
    /// A block of the caching allocator, or an adopted `Vec`'s buffer.
    Block(HostBlock),
    /// At most [`INLINE_BYTES`], kept in the buffer (and then in the tensor's header).
    Inline(InlineBytes),
}

impl Bytes {
    /// The elements' address. Stable while `self` does not move (a block's never moves).
    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        match self {
            Bytes::Block(block) => block.as_ptr(),
            Bytes::Inline(inline) => inline.as_ptr(),
        }
    }

    /// The size in bytes.
    #[inline]
    fn bytes(&self) -> usize {
        match self {
            Bytes::Block(block) => block.bytes(),
            Bytes::Inline(_) => INLINE_BYTES,
        }
    }
}

impl Bytes {
    /// Gives a block back to the caching allocator (which frees an adopted `Vec`'s buffer) and
    /// leaves empty inline bytes in its place; inline bytes need nothing.
    #[inline]
    pub(crate) fn release(&mut self) {
        if let Bytes::Block(_) = self {
            self.release_block();
        }
    }

    /// `release` of a block, out of line: inline bytes (a small tensor's) need nothing.
    #[inline(never)]
    fn release_block(&mut self) {
        if let Bytes::Block(block) = self
            && !block.is_pooled()
        {
            // An adopted `Vec`'s buffer is freed where it lies, its fields read one by one:
            // moved out first, its words were copied in one wide load, which waited for the
            // narrow stores that had just written the header (a tensor made and dropped at once).
            // SAFETY: `block` is a valid `HostBlock` owned by `self`; it is dropped here once,
            // and `self` is then overwritten without being read or dropped (`ptr::write`), so
            // the block is never used again. `HostBlock::drop` only frees memory (it cannot
            // unwind), so `self` is never left holding a dropped block.
            unsafe {
                std::ptr::drop_in_place(block);
                std::ptr::write(self, Bytes::Inline(InlineBytes::new()));
            }
            return;
        }
        if let Bytes::Block(block) = std::mem::replace(self, Bytes::Inline(InlineBytes::new())) {
            super::allocator::cpu_release(block);
        }
    }
}

/// A typed buffer on host memory: like a `Vec<T>` of fixed capacity whose first `len` elements
/// are initialised. Kernels fill one (`push`, `extend_from_slice`, or `spare` + `set_len`) and turn
/// it into a tensor. Up to 64 bytes (`INLINE_BYTES`) its elements are kept inline (and then in
/// the tensor's header); larger ones lie on a block from the caching allocator.
#[derive(Debug)]
pub struct HostVec<T: Element> {
    block: Bytes,
    len: usize,
    capacity: usize,
    _elements: PhantomData<T>,
}

impl<T: Element> HostVec<T> {
    /// An empty buffer with room for `capacity` elements on `block` (which is big enough: the
    /// allocator sized it).
    pub(crate) fn on(block: HostBlock, capacity: usize) -> HostVec<T> {
        HostVec::in_bytes(Bytes::Block(block), capacity)
    }

    /// An empty buffer with room for `capacity` elements kept inline (at most [`INLINE_BYTES`]
    /// of them).
    #[inline]
    pub(crate) fn inline(capacity: usize) -> HostVec<T> {
        HostVec::in_bytes(Bytes::Inline(InlineBytes::new()), capacity)
    }

    #[inline]
    fn in_bytes(block: Bytes, capacity: usize) -> HostVec<T> {
        assert!(
            capacity
                .checked_mul(size_of::<T>())
                .is_some_and(|b| b <= block.bytes()),
            "a host block too small for its buffer"
        );
        HostVec {
            block,
            len: 0,
            capacity,
            _elements: PhantomData,
        }
    }

    /// Elements written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements the buffer holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Appends `value`. Panics when full (kernels size their buffer first).
    #[inline]
    pub fn push(&mut self, value: T) {
        assert!(
            self.len < self.capacity,
            "HostVec::push beyond its capacity"
        );
        self.spare()[0].write(value);
        self.len += 1;
    }

    /// Appends `values`. Panics when they do not fit.
    pub fn extend_from_slice(&mut self, values: &[T]) {
        let spare = self.spare();
        assert!(
            values.len() <= spare.len(),
            "HostVec::extend beyond its capacity"
        );
        for (slot, value) in spare.iter_mut().zip(values) {
            slot.write(*value);
        }
        self.len += values.len();
    }

    /// Appends every value of `values` that fits (all of them when the iterator is no longer than
    /// the room left).
    pub fn extend(&mut self, values: impl IntoIterator<Item = T>) {
        let spare = self.spare();
        let mut written = 0;
        for (slot, value) in spare.iter_mut().zip(values) {
            slot.write(value);
            written += 1;
        }
        self.len += written;
    }

    /// The written elements.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the first `len` elements are initialised (every path that raises `len` wrote
        // them), the bytes are aligned for any element (a pooled block to 64, an adopted `Vec`'s
        // for its `T`, inline ones to 8) and hold `capacity ≥ len` of them.
        unsafe { std::slice::from_raw_parts(self.block.as_ptr().cast::<T>(), self.len) }
    }

    /// The written elements, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.block.as_ptr().cast::<T>(), self.len) }
    }

    /// The room after the written elements, for kernels that write it in place and then call
    /// [`HostVec::set_len`].
    #[inline]
    pub fn spare(&mut self) -> &mut [MaybeUninit<T>] {
        // SAFETY: elements `len..capacity` lie inside the block (sized for `capacity`), aligned;
        // `MaybeUninit` needs no initialisation; `&mut self` makes the access unique.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.block.as_ptr().cast::<MaybeUninit<T>>().add(self.len),
                self.capacity - self.len,
            )
        }
    }

    /// Declares the first `len` elements written.
    ///
    /// # Safety
    /// `len ≤ capacity`, and every element below `len` has been written (through `spare` or
    /// otherwise) with a valid value of `T`.
    #[inline]
    pub unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.capacity);
        self.len = len;
    }

    /// The bytes, for the storage that now owns the elements.
    #[inline(always)]
    pub(crate) fn into_block(mut self) -> (Bytes, usize) {
        // Leaves empty inline bytes behind, so that `drop` has no block to give back.
        let block = std::mem::replace(&mut self.block, Bytes::Inline(InlineBytes::new()));
        (block, self.len)
    }
}

/// A buffer dropped before it became a tensor's (a kernel that failed after `host_buffer`)
/// gives its block back to the caching allocator, which counted it as allocated.
impl<T: Element> Drop for HostVec<T> {
    fn drop(&mut self) {
        self.block.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_start_on_a_page_and_small_ones_on_a_cache_line() {
        for bytes in [1, 64, 4096, PAGE_ALIGNED_FROM - 1] {
            let block = HostBlock::allocate("test", bytes).unwrap();
            assert_eq!(block.as_ptr() as usize % HOST_ALIGN, 0, "{bytes}");
            assert!(block.is_pooled());
        }
        for bytes in [PAGE_ALIGNED_FROM, 1 << 20, (1 << 20) + 4] {
            let block = HostBlock::allocate("test", bytes).unwrap();
            assert_eq!(block.as_ptr() as usize % PAGE_ALIGN, 0, "{bytes}");
            assert!(block.is_pooled());
        }
        let adopted = HostBlock::from_vec(vec![1.0f32; 1 << 16]).unwrap();
        assert!(!adopted.is_pooled());
    }
}
