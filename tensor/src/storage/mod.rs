//! Storage: the memory a tensor and all its views share, with its version counter.
//!
//! A CPU storage is a host block holding `len` elements of one dtype; any other device's is a
//! [`BackendStorage`]. Views (slices, transposes, expansions) share one storage through an `Arc`,
//! so writes through one are seen by all, and so is the *version counter*, which every in-place
//! write bumps.
//!
//! **Borrows.** Reading host memory while another handle writes it would be a data race. Every
//! access to a CPU storage's elements holds a borrow: any number of readers, or one writer. A
//! borrow never waits: a conflict (a write while a read guard lives, on this thread or another) is
//! an error naming the op, so safe code never sees a torn write and never deadlocks.

pub(crate) mod allocator;
pub(crate) mod host;

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use switchyard::{DType, DispatchError};

use crate::element::Element;
use host::{HostBlock, HostVec};

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
}

enum Data {
    Host(Option<HostBlock>),
    Backend(Box<dyn BackendStorage>),
}

/// The writer's bit in `borrows`; the bits below count readers.
const WRITER: usize = 1 << (usize::BITS - 1);

struct StorageImpl {
    data: Data,
    dtype: DType,
    /// Elements held.
    len: usize,
    version: AtomicU64,
    borrows: AtomicUsize,
}

impl Drop for StorageImpl {
    fn drop(&mut self) {
        if let Data::Host(block) = &mut self.data
            && let Some(block) = block.take()
        {
            allocator::cpu_release(block);
        }
    }
}

/// One allocation shared by a tensor and its views. Cheap to clone.
#[derive(Clone)]
pub struct Storage(Arc<StorageImpl>);

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match &self.0.data {
            Data::Host(_) => "host",
            Data::Backend(_) => "backend",
        };
        write!(
            f,
            "Storage({} {} on {place}, version {})",
            self.0.len,
            self.0.dtype,
            self.version()
        )
    }
}

impl Storage {
    /// The storage of a full host buffer.
    pub(crate) fn from_host<T: Element>(buffer: HostVec<T>) -> Storage {
        let (block, len) = buffer.into_block();
        Storage::new(Data::Host(Some(block)), T::DTYPE, len)
    }

    pub(crate) fn from_backend(storage: Box<dyn BackendStorage>) -> Storage {
        let (dtype, len) = (storage.dtype(), storage.len());
        Storage::new(Data::Backend(storage), dtype, len)
    }

    fn new(data: Data, dtype: DType, len: usize) -> Storage {
        Storage(Arc::new(StorageImpl {
            data,
            dtype,
            len,
            version: AtomicU64::new(0),
            borrows: AtomicUsize::new(0),
        }))
    }

    /// Elements held.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether no element is held.
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }

    /// The version counter: how many in-place writes this storage has seen.
    pub fn version(&self) -> u64 {
        self.0.version.load(Ordering::Acquire)
    }

    /// Counts one in-place write that did not go through a host write guard (a device kernel's).
    pub fn bump_version(&self) {
        self.0.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether two handles share this storage.
    pub fn same(&self, other: &Storage) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub(crate) fn backend(&self) -> Option<&dyn BackendStorage> {
        match &self.0.data {
            Data::Backend(storage) => Some(&**storage),
            Data::Host(_) => None,
        }
    }

    /// Reads the host elements as `T`: a guard, or an error naming `op` when the storage is not
    /// host memory of `T`'s dtype or a writer holds it.
    pub(crate) fn read<T: Element>(
        &self,
        op: &'static str,
    ) -> Result<ReadGuard<'_, T>, DispatchError> {
        let block = self.host_block::<T>(op)?;
        let previous = self.0.borrows.fetch_add(1, Ordering::Acquire);
        if previous & WRITER != 0 {
            self.0.borrows.fetch_sub(1, Ordering::Release);
            return Err(DispatchError::kernel(
                op,
                "a tensor's storage is being written (an in-place op on another thread, or a \
                 write guard alive on this one) while this op reads it",
            ));
        }
        Ok(ReadGuard {
            storage: self,
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
        let block = self.host_block::<T>(op)?;
        if self
            .0
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
        self.0.version.fetch_add(1, Ordering::AcqRel);
        Ok(WriteGuard {
            storage: self,
            ptr: block.as_ptr().cast::<T>(),
            _elements: PhantomData,
        })
    }

    fn host_block<T: Element>(&self, op: &'static str) -> Result<&HostBlock, DispatchError> {
        if T::DTYPE != self.0.dtype {
            return Err(DispatchError::kernel(
                op,
                format!("a tensor of {} read as {}", self.0.dtype, T::DTYPE),
            ));
        }
        match &self.0.data {
            Data::Host(Some(block)) => Ok(block),
            _ => Err(DispatchError::kernel(
                op,
                "host memory was asked of a tensor held by a device backend",
            )),
        }
    }
}

/// Shared access to a host storage's elements; the storage's readers count includes it.
pub struct ReadGuard<'s, T: Element> {
    storage: &'s Storage,
    ptr: *const T,
    _elements: PhantomData<&'s [T]>,
}

impl<T: Element> ReadGuard<'_, T> {
    /// Every element of the storage.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the block holds `len` initialised elements of `T` (a storage is built only from
        // a full `HostVec<T>`, and writes store valid `T`s); it is aligned for `T`; the reader
        // count excludes every writer while this guard lives, so nothing mutates them.
        unsafe { std::slice::from_raw_parts(self.ptr, self.storage.0.len) }
    }
}

impl<T: Element> Drop for ReadGuard<'_, T> {
    fn drop(&mut self) {
        self.storage.0.borrows.fetch_sub(1, Ordering::Release);
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
    storage: &'s Storage,
    ptr: *mut T,
    _elements: PhantomData<&'s mut [T]>,
}

impl<T: Element> WriteGuard<'_, T> {
    /// Every element of the storage.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `ReadGuard::as_slice`; the writer bit excludes every other borrow while
        // this guard lives, and `&mut self` makes this slice the only one from it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.storage.0.len) }
    }
}

impl<T: Element> Drop for WriteGuard<'_, T> {
    fn drop(&mut self) {
        self.storage.0.borrows.fetch_sub(WRITER, Ordering::Release);
    }
}

impl<T: Element> fmt::Debug for WriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteGuard")
            .field("storage", self.storage)
            .finish()
    }
}

/// A fresh host buffer with room for `len` elements of `T`, from the CPU's caching allocator;
/// errors (never aborts) when the size overflows or memory runs out.
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
    let block = allocator::cpu_allocate(op, bytes)?;
    Ok(HostVec::on(block, len))
}
