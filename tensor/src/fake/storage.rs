//! The storage of meta and fake tensors: a length and a dtype, no bytes.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use switchyard::{DType, DispatchError};

use super::memory::{Account, Charge};
use crate::device::Device;
use crate::storage::BackendStorage;

/// Elements that do not exist: what a meta (or fake) tensor's storage is. A fake storage also
/// carries its charge in the fake mode that made it, given back when it drops.
pub(crate) struct MetaStorage {
    dtype: DType,
    len: usize,
    _charge: Option<Charge>,
}

impl MetaStorage {
    /// A storage of `len` elements of `dtype`, charged to the fake mode's account when the
    /// thread is computing a fake op's result for a device (see [`charging`]).
    pub(crate) fn new(dtype: DType, len: usize) -> MetaStorage {
        let charge = CHARGE
            .try_with(|c| {
                c.borrow()
                    .as_ref()
                    .map(|(account, device)| account.charge(*device, dtype, len))
            })
            .ok()
            .flatten();
        MetaStorage {
            dtype,
            len,
            _charge: charge,
        }
    }

    /// A storage no fake mode pays for: the meta twin of a real tensor, whose memory the real
    /// run holds already.
    pub(crate) fn uncharged(dtype: DType, len: usize) -> MetaStorage {
        MetaStorage {
            dtype,
            len,
            _charge: None,
        }
    }
}

impl fmt::Debug for MetaStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MetaStorage({} × {})", self.len, self.dtype)
    }
}

impl BackendStorage for MetaStorage {
    fn len(&self) -> usize {
        self.len
    }

    fn dtype(&self) -> DType {
        self.dtype
    }

    fn read_bytes(&self) -> Result<Vec<u8>, DispatchError> {
        Err(DispatchError::kernel(
            "read",
            "a meta or fake tensor has a shape and a dtype but no data: nothing to read (run the \
             computation on a real device to see values)",
        ))
    }
}

thread_local! {
    /// While a fake op computes its result: the account to charge and the device the result
    /// reports. `None` otherwise (meta tensors made then cost nothing).
    static CHARGE: RefCell<Option<(Arc<Account>, Device)>> = const { RefCell::new(None) };
}

/// Runs `f` with the storages it makes charged to `account` as memory of `device`; the previous
/// setting is restored afterwards, also when `f` panics.
pub(crate) fn charging<R>(account: Option<(Arc<Account>, Device)>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<(Arc<Account>, Device)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            // At thread teardown the slot may be gone; nothing is left to restore then.
            let _ = CHARGE.try_with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = CHARGE
        .try_with(|c| std::mem::replace(&mut *c.borrow_mut(), account))
        .ok()
        .flatten();
    let _restore = Restore(previous);
    f()
}
