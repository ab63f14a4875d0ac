//! The handle of a tensor's header: an `Arc` whose allocation is reused.
//!
//! Every tensor an op returns is a new header (about 300 bytes: the layout, and a small
//! storage's elements inline), and most die young. `malloc` and `free` of it cost about 130
//! instructions of a 1-element op's 760 (benches/README.md, "Small tensors"). So the last handle
//! of a header, dropped, keeps the emptied allocation in a small cache of its thread, and the
//! next header made on that thread takes it from there.
//!
//! The header stays a `std::sync::Arc` (the engine boxes a tensor as its `Arc`, see
//! `SharedTensor`): what is cached is the allocation of an `Arc<MaybeUninit<TensorInner>>` with
//! one strong and one weak count, the state `Arc::new` leaves. A handle knows its header is
//! unique by `Arc::get_mut` (std's own proof: no other strong handle, no `Weak`), drops the
//! contents in place, and keeps the allocation as such an `Arc`, which frees it as `Arc` would
//! when it drops (no contents to drop: `MaybeUninit`).
//!
//! **Bounds.** At most [`CACHED`] allocations a thread (about 20 KB). A header freed on another
//! thread than its maker's goes to that thread's cache, or to the system when the cache is
//! full. A thread's cache is freed when the thread ends; a header dropped after that (by another
//! thread-local's destructor) goes to the system, as does one dropped while the cache is in use
//! (a header dropped by the contents of one being dropped never is: the contents are dropped
//! before the cache is touched).

use std::cell::RefCell;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::tensor::TensorInner;

/// Emptied header allocations kept per thread.
const CACHED: usize = 64;

/// An emptied header allocation: an `Arc` with one strong and one weak count whose value is
/// dropped.
type Block = Arc<MaybeUninit<TensorInner>>;

thread_local! {
    static FREE: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
}

/// A counted handle of a tensor's header: an `Arc<TensorInner>` that hands its allocation to
/// this thread's cache when it is the last handle.
#[repr(transparent)]
pub(crate) struct Header(ManuallyDrop<Arc<TensorInner>>);

impl Header {
    /// A handle of `arc`'s header.
    #[inline]
    pub(crate) fn from_arc(arc: Arc<TensorInner>) -> Header {
        Header(ManuallyDrop::new(arc))
    }

    /// This handle's `Arc` (its count moves with it).
    #[inline]
    pub(crate) fn into_arc(self) -> Arc<TensorInner> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again (`ManuallyDrop`), so the `Arc` is taken
        // exactly once and `Header::drop` never sees it.
        unsafe { ManuallyDrop::take(&mut this.0) }
    }

    /// Whether two handles are of one header.
    #[inline]
    pub(crate) fn same(&self, other: &Header) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for Header {
    type Target = Arc<TensorInner>;
    #[inline(always)]
    fn deref(&self) -> &Arc<TensorInner> {
        &self.0
    }
}

impl DerefMut for Header {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Arc<TensorInner> {
        &mut self.0
    }
}

impl Clone for Header {
    #[inline(always)]
    fn clone(&self) -> Header {
        Header(self.0.clone())
    }
}

impl Drop for Header {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `drop` runs once and nothing reads `self.0` after it.
        let arc = unsafe { ManuallyDrop::take(&mut self.0) };
        release(arc);
    }
}

impl std::fmt::Debug for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self.0, f)
    }
}

/// Gives back one handle of a header: the allocation goes to this thread's cache when it was
/// the last handle (its contents dropped), else the count drops as `Arc`'s does.
#[inline]
fn release(arc: Arc<TensorInner>) {
    let mut arc = ManuallyDrop::new(arc);
    let Some(inner) = Arc::get_mut(&mut arc) else {
        // Another handle (or a `Weak`) exists: an ordinary decrement, which frees the
        // header if the others went meanwhile.
        drop(ManuallyDrop::into_inner(arc));
        return;
    };
    // SAFETY: `get_mut` proved this the only handle of the header, and it stays so (nothing can
    // clone or upgrade to it without a handle); the value is valid and dropped here once: after
    // this, `arc` is only turned into a `MaybeUninit` block, which never drops it again. Should a
    // field's drop panic, `arc` is in a `ManuallyDrop`, so unwinding leaks the allocation rather
    // than dropping the value twice.
    unsafe { std::ptr::drop_in_place(inner) };
    let raw = Arc::into_raw(ManuallyDrop::into_inner(arc));
    // SAFETY: `raw` comes from `Arc::<TensorInner>::into_raw`, and `MaybeUninit<TensorInner>`
    // has the size and alignment of `TensorInner`, which `Arc::from_raw` allows; the count the
    // block holds is the one `into_raw` gave up. Its value, dropped above, is now uninitialised
    // bytes, which a `MaybeUninit` may hold.
    let block: Block = unsafe { Arc::from_raw(raw.cast::<MaybeUninit<TensorInner>>()) };
    keep(block);
}

/// Puts `block` in this thread's cache, or frees it when the cache is full, in use, gone (the
/// thread is ending) or cannot grow.
#[inline]
fn keep(block: Block) {
    let refused = FREE.try_with(|free| {
        let Ok(mut free) = free.try_borrow_mut() else {
            return Some(block);
        };
        if free.len() >= CACHED
            || free.len() == free.capacity() && free.try_reserve_exact(CACHED).is_err()
        {
            return Some(block);
        }
        free.push(block);
        None
    });
    // Freed outside the cache's borrow (freeing an emptied block runs no other code anyway).
    drop(refused);
}

/// An emptied header allocation with one strong and one weak count: from this thread's cache,
/// or new.
#[inline]
fn take() -> Block {
    FREE.try_with(|free| free.try_borrow_mut().ok()?.pop())
        .ok()
        .flatten()
        .unwrap_or_else(|| Arc::new(MaybeUninit::uninit()))
}

/// How many emptied header allocations this thread's cache holds (for tests).
#[cfg(test)]
pub(crate) fn cached() -> usize {
    FREE.try_with(|free| free.borrow().len()).unwrap_or(0)
}

/// A tensor's header in a new handle, each field written where it will live. (`Arc::new(header)`
/// builds the ~270 bytes on the stack and copies them with a `memcpy` call whose wide loads stall
/// on the narrow stores that just wrote them: a quarter of the time of making a 1-element tensor.)
#[allow(clippy::too_many_arguments)] // the header's fields
#[inline(always)]
pub(crate) fn new_header(
    keys: switchyard::DispatchKeySet,
    dtype: switchyard::DType,
    device: crate::Device,
    numel: usize,
    offset: usize,
    sizes: crate::shape::Dims,
    strides: crate::shape::Dims,
    contiguous: bool,
    holder: super::Holder,
) -> Header {
    // Every field of the header is written below: adding a field to `TensorInner` without
    // writing it here must not compile (it would leave it uninitialised), so this exhaustive
    // pattern (no `..`) names them all.
    const _: fn(&TensorInner) = |TensorInner {
                                     keys: _,
                                     dtype: _,
                                     device: _,
                                     numel: _,
                                     offset: _,
                                     sizes: _,
                                     strides: _,
                                     contiguous: _,
                                     holder: _,
                                     autograd: _,
                                 }| {};
    // A raw pointer into an `Arc` of which this is the only handle (`take`'s promise; proving it
    // with `Arc::get_mut`, an atomic compare-exchange on the weak count, costs more here than the
    // writes).
    let header = Arc::into_raw(take()).cast_mut().cast::<TensorInner>();
    // SAFETY: `header` points to the uninitialised, properly aligned value of an `Arc` no other
    // handle or reference sees (new, or emptied and cached by its last handle; `into_raw` keeps
    // the allocation's provenance, so writing through it is allowed). Each write goes to one
    // field's place (`&raw mut`, no reference to uninitialised memory), and together they
    // initialise every field; then `from_raw` takes back the pointer `into_raw` gave, as an `Arc`
    // of a type of the same size and alignment (`MaybeUninit<T>` has `T`'s), as its docs allow.
    unsafe {
        (&raw mut (*header).keys).write(keys);
        (&raw mut (*header).dtype).write(dtype);
        (&raw mut (*header).device).write(device);
        (&raw mut (*header).numel).write(numel);
        (&raw mut (*header).offset).write(offset);
        (&raw mut (*header).sizes).write(sizes);
        (&raw mut (*header).strides).write(strides);
        (&raw mut (*header).contiguous).write(contiguous);
        (&raw mut (*header).holder).write(holder);
        (&raw mut (*header).autograd).write(None);
        Header::from_arc(Arc::from_raw(header))
    }
}
