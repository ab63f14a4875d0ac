//! Storage: the memory a tensor and all its views share, with its version counter.
//!
//! A CPU storage is a host block holding `len` elements of one dtype; any other device's is a
//! [`BackendStorage`]. Views (slices, transposes, expansions) share one storage, so writes
//! through one are seen by all, and so is the *version counter*, which every in-place write
//! bumps.
//!
//! **Where a storage lives.** In the header of the tensor that created it: one allocation holds
//! a new tensor's header, shape and storage (its data comes from the allocator). A view's header
//! holds a [`Storage`] handle, a reference count on that first header, so the storage lives as
//! long as any tensor that views it. A header's last handle, dropped, leaves the emptied
//! allocation to the next header made on its thread (`header`): a small tensor made and dropped
//! in a loop costs no `malloc`.
//!
//! **Borrows.** Reading host memory while another handle writes it would be a data race. Every
//! access to a CPU storage's elements holds a borrow: any number of readers, or one writer. A
//! borrow never waits: a conflict (a write while a read guard lives, on this thread or another) is
//! an error naming the op, so safe code never sees a torn write and never deadlocks.

pub(crate) mod allocator;
pub(crate) mod header;
pub(crate) mod host;
mod thread_blocks;
pub(crate) mod uninit;

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use switchyard::{DType, DispatchError};

use crate::element::Element;
use header::Header;
use host::{Bytes, HostVec};

/// Data held by a backend other than the CPU (a GPU buffer, a downstream device's memory).
///
/// The backend that creates a tensor with [`Tensor::from_backend`](crate::Tensor::from_backend)
/// downcasts its own storage in its kernels with
/// [`Tensor::backend_storage`](crate::Tensor::backend_storage); the dispatcher never looks inside.
///
/// Storage is `UnwindSafe` and `RefUnwindSafe`, so that a tensor is too. Plain data has both; a
/// storage holding handles that lack them (a GPU API's) implements them itself when a caught
/// panic cannot leave it half-changed.
pub trait BackendStorage: Any + Send + Sync + UnwindSafe + RefUnwindSafe + fmt::Debug {
    /// Number of elements held.
    fn len(&self) -> usize;

    /// Whether no element is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type held.
    fn dtype(&self) -> DType;

    /// Copies every element back to host memory as little-endian bytes (`len · dtype size`), in
    /// storage order.
    fn read_bytes(&self) -> Result<Vec<u8>, DispatchError>;

    /// [`read_bytes`](BackendStorage::read_bytes) as a future, for a device that answers
    /// asynchronously and a caller that cannot block (a web page reading WebGPU memory):
    /// what [`Tensor::try_to_vec_async`](crate::Tensor::try_to_vec_async) awaits. The default
    /// reads at once with `read_bytes`.
    fn read_bytes_async(&self) -> ReadBytes<'_> {
        Box::pin(std::future::ready(self.read_bytes()))
    }

    /// Whether [`read_bytes`](BackendStorage::read_bytes) answers where it is called (true by
    /// default: it may wait for the device). False for a device that answers only
    /// asynchronously, where `read_bytes` is an error: ops that check their arguments' values
    /// then check them on the device, and the next async read reports a failure.
    fn reads_synchronously(&self) -> bool {
        true
    }
}

/// The future of [`BackendStorage::read_bytes_async`]: the storage's bytes, or why not. `Send`,
/// as the storage is, so that a multi-threaded executor can run reads.
pub type ReadBytes<'a> = Pin<Box<dyn Future<Output = Result<Vec<u8>, DispatchError>> + Send + 'a>>;

enum Data {
    Host(Bytes),
    Backend(Box<dyn BackendStorage>),
}

/// The writer's bit in `borrows`; the bits below count readers.
const WRITER: usize = 1 << (usize::BITS - 1);

/// A storage itself: inside the header of the tensor that created it (see the module docs).
pub(crate) struct StorageImpl {
    data: Data,
    dtype: DType,
    /// Elements held.
    len: usize,
    version: AtomicU64,
    borrows: AtomicUsize,
    /// Made inside `autograd::inference_mode`: no version counter (writes count nothing), never
    /// saved for backward.
    inference: bool,
}

impl Drop for StorageImpl {
    #[inline] // a small storage's drop is one test; a call cost more
    fn drop(&mut self) {
        if let Data::Host(bytes) = &mut self.data {
            bytes.release();
        }
    }
}

impl fmt::Debug for StorageImpl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match &self.data {
            Data::Host(_) => "host",
            Data::Backend(_) => "backend",
        };
        write!(
            f,
            "Storage({} {} on {place}, version {})",
            self.len,
            self.dtype,
            self.version.load(Ordering::Acquire)
        )
    }
}

/// What a tensor's header holds: its own storage (a tensor made from data), or a handle to the
/// storage of the tensor it views.
#[derive(Debug)]
pub(crate) enum Holder {
    Own(StorageImpl),
    Of(Storage),
}

/// The memory shared by a tensor and its views: a handle on the header that holds it. Cheap to
/// clone.
///
/// **Invariant:** the header's holder is `Holder::Own` (a view's handle is its base's, never a
/// view of a view), so reaching the storage is one step.
#[derive(Clone)]
#[repr(transparent)]
pub struct Storage(Header);

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.imp(), f)
    }
}

impl Holder {
    /// A storage of a full host buffer.
    #[inline(always)] // a small buffer's inline elements move once, into the header
    pub(crate) fn from_host<T: Element>(buffer: HostVec<T>) -> Holder {
        let (block, len) = buffer.into_block();
        Holder::new(Data::Host(block), T::DTYPE, len)
    }

    /// A storage of `len` elements of `dtype` on host `bytes` (written or not: see
    /// `UninitTensor`), made inside `autograd::inference_mode` or not (`inference`: asked by
    /// the caller beforehand, so that no call separates the holder's parts, which would then be
    /// built on the stack and moved).
    #[inline(always)]
    pub(crate) fn host(bytes: Bytes, dtype: DType, len: usize, inference: bool) -> Holder {
        Holder::own(Data::Host(bytes), dtype, len, inference)
    }

    /// The address of the elements of a host storage this holder owns (`Holder::host`'s). Any
    /// other holder is a defect of the caller: a panic, never an address to write through.
    #[inline(always)]
    pub(crate) fn host_ptr(&self) -> *mut u8 {
        match self {
            Holder::Own(StorageImpl {
                data: Data::Host(bytes),
                ..
            }) => bytes.as_ptr(),
            _ => unreachable!("host_ptr of a holder that owns no host memory"),
        }
    }

    pub(crate) fn from_backend(storage: Box<dyn BackendStorage>) -> Holder {
        let (dtype, len) = (storage.dtype(), storage.len());
        Holder::new(Data::Backend(storage), dtype, len)
    }

    #[inline(always)]
    fn new(data: Data, dtype: DType, len: usize) -> Holder {
        let inference = crate::autograd::is_inference_mode_enabled();
        Holder::own(data, dtype, len, inference)
    }

    /// A new storage of `len` elements of `dtype`, made inside `autograd::inference_mode` or not.
    #[inline(always)]
    fn own(data: Data, dtype: DType, len: usize, inference: bool) -> Holder {
        Holder::Own(StorageImpl {
            data,
            dtype,
            len,
            version: AtomicU64::new(0),
            borrows: AtomicUsize::new(0),
            inference,
        })
    }

    /// The storage's dtype.
    pub(crate) fn dtype(&self) -> DType {
        self.imp().dtype
    }

    /// The storage this holder holds or refers to.
    #[inline]
    fn imp(&self) -> &StorageImpl {
        let mut holder = self;
        // One step by the invariant of `Storage`; a loop rather than a panic were it ever more.
        loop {
            match holder {
                Holder::Own(imp) => return imp,
                Holder::Of(storage) => holder = &storage.0.holder,
            }
        }
    }
}

impl Storage {
    /// The storage of the tensor whose header is `header`: `header` itself when it holds its
    /// own storage, else the handle it holds.
    #[inline]
    pub(crate) fn of(header: &Header) -> &Storage {
        match &header.holder {
            Holder::Own(_) => {
                let handle: *const Header = header;
                // SAFETY: `Storage` is `repr(transparent)` over `Header`, so a reference
                // to one is a valid reference to the other, for the same lifetime; the header
                // holds its own storage, which is `Storage`'s invariant.
                unsafe { &*handle.cast::<Storage>() }
            }
            Holder::Of(storage) => storage,
        }
    }

    #[inline]
    fn imp(&self) -> &StorageImpl {
        self.0.holder.imp()
    }

    /// Elements held.
    #[inline]
    pub fn len(&self) -> usize {
        self.imp().len
    }

    /// Whether no element is held.
    pub fn is_empty(&self) -> bool {
        self.imp().len == 0
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.imp().dtype
    }

    /// The version counter: how many in-place writes this storage has seen.
    pub fn version(&self) -> u64 {
        self.imp().version.load(Ordering::Acquire)
    }

    /// Counts one in-place write that did not go through a host write guard (a device kernel's).
    /// An inference tensor's storage counts nothing.
    pub fn bump_version(&self) {
        self.imp().count_write();
    }

    /// Whether the storage was made inside `autograd::inference_mode` (it has no version
    /// counter).
    pub fn is_inference(&self) -> bool {
        self.imp().inference
    }

    /// Whether two handles share this storage.
    pub fn same(&self, other: &Storage) -> bool {
        self.0.same(&other.0)
    }

    pub(crate) fn backend(&self) -> Option<&dyn BackendStorage> {
        match &self.imp().data {
            Data::Backend(storage) => Some(&**storage),
            Data::Host(_) => None,
        }
    }

    /// Reads the host elements as `T`: a guard, or an error naming `op` when the storage is not
    /// host memory of `T`'s dtype or a writer holds it.
    #[inline]
    pub(crate) fn read<T: Element>(
        &self,
        op: &'static str,
    ) -> Result<ReadGuard<'_, T>, DispatchError> {
        let imp = self.imp();
        let block = imp.host_block::<T>(op)?;
        let previous = imp.borrows.fetch_add(1, Ordering::Acquire);
        if previous & WRITER != 0 {
            imp.borrows.fetch_sub(1, Ordering::Release);
            return Err(DispatchError::kernel(
                op,
                "a tensor's storage is being written (an in-place op on another thread, or a \
                 write guard alive on this one) while this op reads it",
            ));
        }
        Ok(ReadGuard {
            storage: imp,
            ptr: block.as_ptr().cast::<T>(),
            _elements: PhantomData,
        })
    }

    /// Writes the host elements as `T`: a guard (and one more version), or an error naming `op`
    /// when the storage is not host memory of `T`'s dtype or any other borrow is alive.
    pub(crate) fn write<T: Element>(
        &self,
        op: &'static str,
    ) -> Result<WriteGuard<'_, T>, DispatchError> {
        let imp = self.imp();
        let block = imp.host_block::<T>(op)?;
        if imp
            .borrows
            .compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(DispatchError::kernel(
                op,
                "cannot write a tensor in place while its storage is borrowed (read by another \
                 thread, or a slice of it alive on this one)",
            ));
        }
        imp.count_write();
        Ok(WriteGuard {
            storage: imp,
            ptr: block.as_ptr().cast::<T>(),
            _elements: PhantomData,
        })
    }
}

impl StorageImpl {
    /// One more version, unless this is an inference tensor's storage.
    #[inline]
    fn count_write(&self) {
        if !self.inference {
            self.version.fetch_add(1, Ordering::AcqRel);
        }
    }

    #[inline]
    fn host_block<T: Element>(&self, op: &'static str) -> Result<&Bytes, DispatchError> {
        if T::DTYPE != self.dtype {
            return Err(DispatchError::kernel(
                op,
                format!("a tensor of {} read as {}", self.dtype, T::DTYPE),
            ));
        }
        match &self.data {
            Data::Host(bytes) => Ok(bytes),
            Data::Backend(_) => Err(DispatchError::kernel(
                op,
                "host memory was asked of a tensor held by a device backend",
            )),
        }
    }
}

/// Shared access to a host storage's elements; the storage's readers count includes it.
pub struct ReadGuard<'s, T: Element> {
    storage: &'s StorageImpl,
    ptr: *const T,
    _elements: PhantomData<&'s [T]>,
}

impl<T: Element> ReadGuard<'_, T> {
    /// Every element of the storage.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the bytes (a block, or inline in the storage, which does not move while this
        // guard borrows it) hold `len` initialised elements of `T` (a storage is built only from
        // a full `HostVec<T>`, and writes store valid `T`s); they are aligned for `T`; the reader
        // count excludes every writer while this guard lives, so nothing mutates them.
        unsafe { std::slice::from_raw_parts(self.ptr, self.storage.len) }
    }
}

impl<T: Element> Drop for ReadGuard<'_, T> {
    fn drop(&mut self) {
        self.storage.borrows.fetch_sub(1, Ordering::Release);
    }
}

impl<T: Element> fmt::Debug for ReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadGuard")
            .field("storage", self.storage)
            .finish()
    }
}

/// Exclusive access to a host storage's elements: no other borrow is alive.
pub struct WriteGuard<'s, T: Element> {
    storage: &'s StorageImpl,
    ptr: *mut T,
    _elements: PhantomData<&'s mut [T]>,
}

impl<T: Element> WriteGuard<'_, T> {
    /// Every element of the storage.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `ReadGuard::as_slice` (inline bytes are in an `UnsafeCell`, so writing
        // them through a pointer taken from a shared borrow is allowed); the writer bit excludes
        // every other borrow while this guard lives, and `&mut self` makes this slice the only
        // one from it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.storage.len) }
    }
}

impl<T: Element> Drop for WriteGuard<'_, T> {
    fn drop(&mut self) {
        self.storage.borrows.fetch_sub(WRITER, Ordering::Release);
    }
}

impl<T: Element> fmt::Debug for WriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteGuard")
            .field("storage", self.storage)
            .finish()
    }
}

/// A fresh host buffer with room for `len` elements of `T`: kept inline up to `INLINE_BYTES` (64
/// bytes, a cache line; the tensor made of it keeps them in its header), else from the CPU's
/// caching allocator; errors (never aborts) when the size overflows or memory runs out.
#[inline] // so that a small buffer is built in the kernel's frame, not copied out of this one
pub fn host_buffer<T: Element>(op: &'static str, len: usize) -> Result<HostVec<T>, DispatchError> {
    let bytes = len
        .checked_mul(size_of::<T>())
        .filter(|b| *b <= isize::MAX as usize)
        .ok_or_else(|| {
            DispatchError::size_overflow(
                op,
                &[&[len]],
                format!("{len} elements of {} exceed isize::MAX bytes", T::DTYPE),
            )
        })?;
    if bytes <= host::INLINE_BYTES {
        return Ok(HostVec::inline(len));
    }
    let block = allocator::cpu_allocate(op, bytes)?;
    Ok(HostVec::on(block, len))
}

/// The bytes the CPU's caching allocator holds for a storage of `bytes`: none up to
/// `INLINE_BYTES` (those elements live in the tensor's header), else the block of its bucket
/// (saturating at `usize::MAX` for sizes no allocation could have). What a fake CPU storage
/// counts, so that a fake run's peak is the allocator's.
pub(crate) fn cpu_held_bytes(bytes: usize) -> usize {
    if bytes <= host::INLINE_BYTES {
        0
    } else {
        allocator::bucket(bytes).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Device, Tensor, memory_stats};

    #[test]
    fn views_share_the_storage_in_their_base_header_and_outlive_it() {
        let base = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
        let view = base.as_strided(&[2], &[1], 2).unwrap();
        let view_of_view = view.as_strided(&[1], &[1], 3).unwrap();
        assert!(base.same_storage(&view) && view.same_storage(&view_of_view));
        assert!(base.storage().same(view_of_view.storage()));
        assert!(view.is_contiguous() && !view.same(&base));
        // A write through the innermost view counts one version for all of them.
        view_of_view.host_mut::<f32>("test").unwrap().parts().0[3] = 9.0;
        assert_eq!((base.version(), view.version()), (1, 1));
        drop(base);
        assert_eq!(view.to_vec::<f32>(), vec![3.0, 9.0]);
        drop(view);
        assert_eq!(view_of_view.to_vec::<f32>(), vec![9.0]);
        assert_eq!(view_of_view.storage().len(), 4);
    }

    #[test]
    fn from_vec_takes_the_buffer_of_its_vec() {
        let mut values = Vec::with_capacity(10);
        values.extend([1.0f64, 2.0, 3.0]);
        let address = values.as_ptr();
        let t = Tensor::from_vec(values, &[3]).unwrap();
        assert_eq!(t.as_slice::<f64>().unwrap().as_ptr(), address);
        assert_eq!(t.storage().len(), 3);
        let view = t.as_strided(&[2], &[2], 0).unwrap();
        drop(t);
        assert_eq!(view.to_vec::<f64>(), vec![1.0, 3.0]);
        // Nothing to take over: an empty `Vec`, with or without capacity.
        for values in [Vec::new(), Vec::with_capacity(4)] {
            let t = Tensor::from_vec::<i32>(values, &[0, 2]).unwrap();
            assert_eq!(t.numel(), 0);
        }
        let err = Tensor::from_vec(vec![1u8, 2], &[3])
            .unwrap_err()
            .to_string();
        assert!(err.contains("2 values cannot fill shape [3]"), "{err}");
    }

    #[test]
    fn small_tensors_keep_their_elements_inline_under_the_same_guards() {
        // 3 × 8 bytes: inline, in the header.
        let base = Tensor::from_fn(&[3], |i| i as i64);
        let view = base.as_strided(&[2], &[1], 1).unwrap();
        {
            let read = view.host::<i64>("test").unwrap();
            let err = base.host_mut::<i64>("test").unwrap_err().to_string();
            assert!(err.contains("while its storage is borrowed"), "{err}");
            assert_eq!(read.iter().collect::<Vec<_>>(), vec![1, 2]);
        }
        view.host_mut::<i64>("test").unwrap().contiguous().unwrap()[1] = 7;
        assert_eq!(base.version(), 1);
        drop(base);
        // Readers on several threads at once, then a writer.
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| assert_eq!(view.to_vec::<i64>(), vec![1, 7]));
            }
        });
        view.host_mut::<i64>("test").unwrap().contiguous().unwrap()[0] = -1;
        assert_eq!(view.to_vec::<i64>(), vec![-1, 7]);
        assert_eq!(Tensor::from_fn(&[0], |_| 0u8).numel(), 0);
    }

    #[test]
    fn pooled_blocks_are_counted_while_alive() {
        // An unusual size, so that a cached block of other tests is unlikely to serve it; other
        // tests run at the same time, so only lower bounds are certain.
        let n = (3 << 20) / 4 + 17;
        let before = memory_stats(Device::Cpu).unwrap();
        let t = Tensor::from_fn(&[n], |i| i as f32);
        let during = memory_stats(Device::Cpu).unwrap();
        assert!(during.allocations > before.allocations);
        assert!(during.allocated >= 4 * n && during.peak >= during.allocated);
        drop(t);
    }
}
