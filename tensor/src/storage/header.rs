//! The handle of a tensor's header: an `Arc` whose allocation is reused.
//!
//! Every tensor an op returns is a new header (about 250 bytes: the layout, and a small
//! storage's elements inline), and most die young. `malloc` and `free` of it cost about 130
//! instructions of a 1-element op's 760 (benches/README.md, "Small tensors"). So the last handle
//! of a header, dropped, keeps the emptied allocation in a small cache of its thread, and the
//! next header made on that thread takes it from there.
//!
//! The header stays a `std::sync::Arc` (the engine boxes a tensor as its `Arc`, see
//! `SharedTensor`): what is cached is the allocation of an `Arc<MaybeUninit<TensorInner>>` with
//! one strong and one weak count, the state `Arc::new` leaves. A handle that knows its header is
//! unique (see below) drops the contents in place, and keeps the allocation as such an `Arc`, which frees it as `Arc` would
//! when it drops (no contents to drop: `MaybeUninit`).
//!
//! **A drop without an atomic read-modify-write.** `Arc::get_mut` proves a handle unique with a
//! compare-exchange on the weak count (it must lock out a `Weak` being upgraded meanwhile), and
//! that locked instruction was about a third of making and dropping a 1-element tensor. A
//! `Weak` can only be made from an `Arc`, and a header's `Arc` leaves this module only through
//! [`Header::lend_arc`] and [`Header::into_arc`] (the engine's boxing), which first mark the
//! header as *lent*. A header never lent has no `Weak`, so a strong count of one (read after the
//! release decrements of every other handle: an acquire fence) is its proof of uniqueness, with
//! no write; a lent header is proved unique by `Arc::get_mut` (std's own proof: no other strong
//! handle, no `Weak`).
//!
//! **Bounds.** At most [`CACHED`] allocations a thread (about 16 KB). A header freed on another
//! thread than its maker's goes to that thread's cache, or to the system when the cache is
//! full. A thread's cache is freed when the thread ends; a header dropped after that (by another
//! thread-local's destructor) goes to the system. A header's contents may hold other headers
//! (a view's storage handle, autograd's record): they are dropped before the allocation is
//! kept, so those headers are cached too. The cache is a fixed stack of cells (`FreeList`):
//! keeping and taking borrow nothing and never allocate.

use std::cell::Cell;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering, fence};

use crate::tensor::TensorInner;

/// Emptied header allocations kept per thread.
const CACHED: usize = 64;

/// An emptied header allocation: an `Arc` with one strong and one weak count whose value is
/// dropped.
type Block = Arc<MaybeUninit<TensorInner>>;

thread_local! {
    static FREE: FreeList = const {
        FreeList {
            len: Cell::new(0),
            slots: [const { Cell::new(None) }; CACHED],
        }
    };
}

/// A thread's emptied header allocations: a stack of at most [`CACHED`], in cells, so that
/// keeping and taking one borrows nothing and never allocates (a `RefCell<Vec>`'s flag and
/// capacity checks cost more than the push itself). Dropped with the thread, freeing them.
///
/// **Invariant:** `slots[..len]` hold allocations, `slots[len..]` hold `None`.
struct FreeList {
    len: Cell<usize>,
    slots: [Cell<Option<Block>>; CACHED],
}

impl FreeList {
    /// The allocation kept last, if any.
    #[inline(always)]
    fn pop(&self) -> Option<Block> {
        let len = self.len.get().checked_sub(1)?;
        self.len.set(len);
        self.slots.get(len)?.take()
    }

    /// Keeps `block`, or gives it back when the list is full.
    #[inline(always)]
    fn push(&self, block: Block) -> Option<Block> {
        let len = self.len.get();
        let Some(slot) = self.slots.get(len) else {
            return Some(block);
        };
        self.len.set(len + 1);
        // The slot held `None` (the invariant): nothing to free.
        slot.replace(Some(block))
    }
}

/// Whether a header's `Arc` was ever handed out of its [`Header`] (so a `Weak` of it may
/// exist). Set before the `Arc` leaves, never cleared while the header lives.
#[derive(Debug)]
pub(crate) struct Lent(AtomicBool);

impl Lent {
    /// Marks the header lent; read first so that lending a header many threads read does not
    /// write its cache line each time.
    #[inline]
    fn mark(&self) {
        if !self.0.load(Ordering::Relaxed) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// A counted handle of a tensor's header: an `Arc<TensorInner>` that hands its allocation to
/// this thread's cache when it is the last handle. The `Arc` itself is reachable only through
/// [`lend_arc`](Header::lend_arc) and [`into_arc`](Header::into_arc), which mark the header
/// lent (see the module docs).
#[repr(transparent)]
pub(crate) struct Header(ManuallyDrop<Arc<TensorInner>>);

impl Header {
    /// A handle of `arc`'s header, which may have been lent before.
    #[inline]
    pub(crate) fn from_arc(arc: Arc<TensorInner>) -> Header {
        Header(ManuallyDrop::new(arc))
    }

    /// This handle's `Arc`, borrowed; the header is marked lent (the borrower may downgrade it).
    #[inline]
    pub(crate) fn lend_arc(&self) -> &Arc<TensorInner> {
        self.0.lent.mark();
        &self.0
    }

    /// This handle's `Arc` (its count moves with it); the header is marked lent.
    #[inline]
    pub(crate) fn into_arc(self) -> Arc<TensorInner> {
        self.0.lent.mark();
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again (`ManuallyDrop`), so the `Arc` is taken
        // exactly once and `Header::drop` never sees it.
        unsafe { ManuallyDrop::take(&mut this.0) }
    }

    /// The header, writable if this is its only handle (`Arc::get_mut`).
    #[inline]
    pub(crate) fn get_mut(&mut self) -> Option<&mut TensorInner> {
        Arc::get_mut(&mut self.0)
    }

    /// Whether two handles are of one header.
    #[inline]
    pub(crate) fn same(&self, other: &Header) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The header's address (for tests).
    #[cfg(test)]
    pub(crate) fn as_ptr(&self) -> *const TensorInner {
        Arc::as_ptr(&self.0)
    }

    /// The header's strong count (for tests).
    #[cfg(test)]
    pub(crate) fn strong_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }
}

impl Deref for Header {
    type Target = TensorInner;
    #[inline(always)]
    fn deref(&self) -> &TensorInner {
        &self.0
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
    if !is_unique_unlent(&arc) && Arc::get_mut(&mut arc).is_none() {
        // Another handle (or a `Weak`) exists: an ordinary decrement, which frees the
        // header if the others went meanwhile.
        drop(ManuallyDrop::into_inner(arc));
        return;
    }
    let raw = Arc::into_raw(ManuallyDrop::into_inner(arc)).cast_mut();
    // SAFETY: this is the only handle of the header (proved just above, by
    // `is_unique_unlent` or `get_mut`), and it stays so: nothing can clone or upgrade to it
    // without a handle. `raw` is `into_raw`'s pointer, which keeps the allocation's provenance
    // (writable, as `Arc::get_mut`'s reference would be); the value is valid and dropped here
    // once. Should a field's drop panic, the count `into_raw` gave up is never taken back, so
    // unwinding leaks the allocation rather than dropping the value twice.
    unsafe { std::ptr::drop_in_place(raw) };
    // SAFETY: `raw` comes from `Arc::<TensorInner>::into_raw`, and `MaybeUninit<TensorInner>`
    // has the size and alignment of `TensorInner`, which `Arc::from_raw` allows; the count the
    // block holds is the one `into_raw` gave up. Its value, dropped above, is now uninitialised
    // bytes, which a `MaybeUninit` may hold.
    let block: Block =
        unsafe { Arc::from_raw(raw.cast_const().cast::<MaybeUninit<TensorInner>>()) };
    keep(block);
}

/// Whether `arc` is the only handle of a header that was never lent, proved without a write.
///
/// A `Weak` is made only from an `Arc`, and a header's `Arc` is marked lent before it leaves its
/// `Header` (`lend_arc`, `into_arc`); so an unlent header has no `Weak`, and its strong count
/// can only grow by cloning a handle. A count of one is this handle's: no other exists, and
/// none can appear. The count is read relaxed, then an acquire fence: every other handle gave
/// its count back by a release decrement, which the fence orders before this thread's use of
/// the value (the drop that follows), and before the read of the flag, so a lending done
/// through any of them is seen. A handle's own lending is seen in program order.
#[inline(always)]
fn is_unique_unlent(arc: &Arc<TensorInner>) -> bool {
    if Arc::strong_count(arc) != 1 {
        return false;
    }
    fence(Ordering::Acquire);
    !arc.lent.0.load(Ordering::Relaxed)
}

/// Puts `block` in this thread's cache, or frees it when the cache is full or gone (the thread
/// is ending).
#[inline]
fn keep(block: Block) {
    let refused = FREE.try_with(|free| free.push(block));
    // A block the cache refused, or one that could not reach it (freeing an emptied block runs
    // no other code).
    drop(refused);
}

/// An emptied header allocation with one strong and one weak count: from this thread's cache,
/// or new.
#[inline]
fn take() -> Block {
    FREE.try_with(FreeList::pop)
        .ok()
        .flatten()
        .unwrap_or_else(|| Arc::new(MaybeUninit::uninit()))
}

/// Frees every emptied header allocation this thread's cache holds ([`empty_cache`]).
///
/// [`empty_cache`]: crate::empty_cache
pub(crate) fn free_cached() {
    let _ = FREE.try_with(|free| while free.pop().is_some() {});
}

/// How many emptied header allocations this thread's cache holds (for tests).
#[cfg(test)]
pub(crate) fn cached() -> usize {
    FREE.try_with(|free| free.len.get()).unwrap_or(0)
}

/// The allocation of a header about to be built: taken from this thread's cache (or new)
/// before the caller computes the header's parts, so that nothing is called between the last
/// of them and their writes (a call in between leaves the parts built on the stack and moved in,
/// whose copy's wide loads stall on the narrow stores that just built them). Dropped unwritten
/// (an error in between), it is freed.
pub(crate) struct HeaderSlot(Block);

impl HeaderSlot {
    /// An emptied header allocation of this thread's, or a new one.
    #[inline(always)]
    pub(crate) fn take() -> HeaderSlot {
        HeaderSlot(take())
    }

    /// The header, each field written where it lives. (`Arc::new(header)` built the ~270 bytes
    /// on the stack and copied them with a `memcpy` whose wide loads stalled on the narrow
    /// stores that had just written them: a quarter of the time of making a 1-element tensor.)
    #[allow(clippy::too_many_arguments)] // the header's fields
    #[inline(always)]
    pub(crate) fn write(
        self,
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
                                         lent: _,
                                     }| {};
        // A raw pointer into an `Arc` of which this is the only handle (`take`'s promise;
        // proving it with `Arc::get_mut`, an atomic compare-exchange on the weak count, costs
        // more here than the writes).
        let header = Arc::into_raw(self.0).cast_mut().cast::<TensorInner>();
        // SAFETY: `header` points to the uninitialised, properly aligned value of an `Arc` no
        // other handle or reference sees (new, or emptied and cached by its last handle;
        // `into_raw` keeps the allocation's provenance, so writing through it is allowed). Each
        // write goes to one field's place (`&raw mut`, no reference to uninitialised memory),
        // and together they initialise every field; then `from_raw` takes back the pointer
        // `into_raw` gave, as an `Arc` of a type of the same size and alignment
        // (`MaybeUninit<T>` has `T`'s), as its docs allow.
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
            (&raw mut (*header).lent).write(Lent(AtomicBool::new(false)));
            Header::from_arc(Arc::from_raw(header))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use switchyard::boxing::SharedTensor;
    use switchyard::{FromValue, ToValue};

    use super::{CACHED, cached};
    use crate::Tensor;

    /// Runs `f` on a new thread, whose cache starts empty (tests share threads otherwise).
    fn on_a_new_thread(f: impl FnOnce() + Send) {
        std::thread::scope(|s| {
            s.spawn(f);
        });
    }

    fn address(t: &Tensor) -> *const super::TensorInner {
        t.inner.as_ptr()
    }

    #[test]
    fn the_last_handle_caches_its_header_and_the_next_tensor_takes_it() {
        on_a_new_thread(|| {
            let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
            let first = address(&t);
            let clone = t.clone();
            drop(t);
            assert_eq!(cached(), 0, "a header with a handle left is not cached");
            assert_eq!(clone.to_vec::<f32>(), vec![1.0, 2.0]);
            drop(clone);
            assert_eq!(cached(), 1);
            let u = Tensor::from_fn(&[3], |i| i as i64);
            assert_eq!(address(&u), first, "the emptied header is reused");
            assert_eq!(cached(), 0);
            // The reused header is a whole new tensor: its own layout, storage and version.
            assert_eq!((u.shape(), u.version()), (&[3][..], 0));
            assert!(!u.requires_grad());
            assert_eq!(u.to_vec::<i64>(), vec![0, 1, 2]);
        });
    }

    #[test]
    fn a_view_keeps_its_base_header_until_it_drops() {
        on_a_new_thread(|| {
            let base = Tensor::from_fn(&[4], |i| i as f32);
            let view = base.as_strided(&[2], &[2], 1).unwrap();
            drop(base);
            assert_eq!(
                cached(),
                0,
                "the view's storage handle holds the base header"
            );
            // A tensor made now does not take the base's header.
            let other = Tensor::scalar(7.0);
            assert_eq!(view.to_vec::<f32>(), vec![1.0, 3.0]);
            drop(view);
            assert_eq!(cached(), 2, "the view's header, then its base's");
            assert_eq!(other.to_vec::<f32>(), vec![7.0]);
        });
    }

    #[test]
    fn the_cache_is_bounded() {
        on_a_new_thread(|| {
            let many: Vec<Tensor> = (0..CACHED + 10).map(|i| Tensor::scalar(i as f32)).collect();
            drop(many);
            assert_eq!(cached(), CACHED);
            crate::empty_cache(crate::Device::Cpu);
            assert_eq!(cached(), 0, "`empty_cache` frees this thread's headers too");
            drop(Tensor::scalar(1.0));
            assert_eq!(cached(), 1);
        });
    }

    #[test]
    fn a_weak_handle_keeps_the_header_out_of_the_cache() {
        on_a_new_thread(|| {
            let t = Tensor::scalar(1.0);
            // `SharedTensor` lends the header's `Arc` to anyone, who may downgrade it.
            let weak = Arc::downgrade(t.shared());
            drop(t);
            assert_eq!(cached(), 0);
            assert!(weak.upgrade().is_none(), "the value was dropped");
            drop(weak);
        });
    }

    #[test]
    fn a_weak_made_elsewhere_keeps_the_header_out_of_the_cache() {
        on_a_new_thread(|| {
            // Given away as an `Arc` and taken back: the `Weak` was made outside any handle.
            let t = Tensor::scalar(1.0);
            let arc = t.into_shared();
            let weak = Arc::downgrade(&arc);
            let t = Tensor::from_shared(arc);
            drop(t);
            assert_eq!(cached(), 0);
            assert!(weak.upgrade().is_none(), "the value was dropped");
            // Lent on another thread through a clone, which that thread drops: this thread's
            // handle is then the only strong one, and the other thread's `Weak` still lives.
            let t = Tensor::scalar(2.0);
            let clone = t.clone();
            let weak = std::thread::scope(|s| {
                s.spawn(move || {
                    let weak = Arc::downgrade(clone.shared());
                    drop(clone);
                    weak
                })
                .join()
                .unwrap()
            });
            drop(t);
            assert_eq!(cached(), 0);
            assert!(weak.upgrade().is_none(), "the value was dropped");
            // A `Weak` upgraded on another thread while this thread drops its handle: whichever
            // comes first, the value is dropped once and never read after.
            for _ in 0..if cfg!(miri) { 5 } else { 2000 } {
                let t = Tensor::scalar(3.0);
                let weak = Arc::downgrade(t.shared());
                std::thread::scope(|s| {
                    s.spawn(move || {
                        if let Some(arc) = weak.upgrade() {
                            let back = Tensor::from_shared(arc);
                            assert_eq!(back.to_vec::<f32>(), vec![3.0]);
                        }
                    });
                    drop(t);
                });
            }
        });
    }

    #[test]
    fn the_last_handle_sees_every_read_made_through_the_others() {
        // Another thread reads the tensor through its clone and drops the clone, while this
        // thread waits (no join, no lock) for its handle to be the last, then drops it: the drop
        // frees the storage without a read-modify-write, so only the acquire fence orders it
        // after the other thread's read (Miri reports a data race without it).
        for _ in 0..if cfg!(miri) { 5 } else { 200 } {
            let t = Tensor::from_fn(&[32], |i| i as f32);
            let clone = t.clone();
            std::thread::scope(|s| {
                s.spawn(move || assert_eq!(clone.to_vec::<f32>()[31], 31.0));
                while t.inner.strong_count() > 1 {
                    std::hint::spin_loop();
                }
                drop(t);
            });
        }
    }

    #[test]
    fn a_boxed_tensor_keeps_its_header_alive() {
        on_a_new_thread(|| {
            let t = Tensor::vector(&[1.0, 2.0]);
            let boxed = t.to_value();
            drop(t);
            assert_eq!(cached(), 0);
            let back = Tensor::from_value(boxed).unwrap();
            assert_eq!(back.to_vec::<f32>(), vec![1.0, 2.0]);
            let arc = back.into_shared();
            assert_eq!(Arc::strong_count(&arc), 1);
            drop(Tensor::from_shared(arc));
            assert_eq!(cached(), 1);
        });
    }

    #[test]
    fn many_threads_clone_and_drop_one_tensor() {
        let (threads, rounds) = if cfg!(miri) { (3, 20) } else { (8, 2000) };
        let t = Tensor::from_fn(&[5], |i| i as i32);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    for _ in 0..rounds {
                        let clone = t.clone();
                        let view = clone.as_strided(&[2], &[1], 3).unwrap();
                        drop(clone);
                        assert_eq!(view.to_vec::<i32>(), vec![3, 4]);
                    }
                });
            }
        });
        assert_eq!(t.inner.strong_count(), 1);
        assert_eq!(t.to_vec::<i32>(), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn tensors_made_on_one_thread_drop_into_another_threads_cache() {
        let (batches, per_batch) = if cfg!(miri) { (2, 4) } else { (20, 100) };
        let (send, receive) = std::sync::mpsc::channel::<Vec<Tensor>>();
        std::thread::scope(|s| {
            s.spawn(move || {
                let mut seen = 0;
                for batch in receive {
                    for t in &batch {
                        assert_eq!(t.to_vec::<f64>(), vec![seen as f64]);
                        seen += 1;
                    }
                    drop(batch);
                    assert_eq!(cached(), seen.min(CACHED));
                }
            });
            for b in 0..batches {
                let batch = (0..per_batch)
                    .map(|i| Tensor::from_scalar((b * per_batch + i) as f64).unwrap())
                    .collect();
                send.send(batch).unwrap();
            }
            drop(send);
        });
    }

    #[test]
    fn headers_dropped_while_a_thread_ends_are_freed() {
        thread_local! {
            // Dropped with the thread's other thread-locals, before or after the cache.
            static HELD: std::cell::RefCell<Vec<Tensor>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        for _ in 0..2 {
            std::thread::spawn(|| {
                drop(Tensor::scalar(1.0)); // the cache exists
                HELD.with(|held| {
                    held.borrow_mut()
                        .extend((0..3).map(|i| Tensor::scalar(i as f32)));
                });
                let shared = Tensor::scalar(2.0);
                HELD.with(|held| held.borrow_mut().push(shared.clone()));
                drop(shared);
            })
            .join()
            .unwrap();
        }
        // A thread that never made or dropped a tensor (its cache untouched) holds one made
        // elsewhere until it ends: the cache is first reached while the thread tears down.
        let made_here = Tensor::scalar(3.0);
        std::thread::spawn(move || HELD.with(|held| held.borrow_mut().push(made_here)))
            .join()
            .unwrap();
    }

    #[test]
    fn huge_and_empty_shapes_keep_their_layout_in_a_reused_header() {
        on_a_new_thread(|| {
            drop(Tensor::scalar(0.0));
            let empty = Tensor::from_vec::<f32>(vec![], &[0, usize::MAX]).unwrap();
            assert_eq!(
                (empty.shape(), empty.strides()),
                (&[0, usize::MAX][..], &[usize::MAX, 1][..])
            );
            assert!(empty.is_contiguous());
            drop(empty);
            let deep = Tensor::from_fn(&[1, 2, 1, 2, 1, 2, 1], |i| i as u8);
            assert_eq!(deep.strides(), &[8, 4, 4, 2, 2, 1, 1]);
            assert_eq!(deep.to_vec::<u8>(), (0..8).collect::<Vec<_>>());
            let err = Tensor::from_vec(vec![0u8; 2], &[usize::MAX, 2]).unwrap_err();
            assert!(err.to_string().contains("exceeds usize::MAX"), "{err}");
            let err = Tensor::try_from_fn(&[usize::MAX / 2, 3], |_| 0u8).unwrap_err();
            assert!(err.to_string().contains("usize::MAX"), "{err}");
        });
    }
}
