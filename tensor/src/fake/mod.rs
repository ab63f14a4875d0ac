//! Meta and fake tensors: shapes without data, PyTorch's `meta` device and `FakeTensorMode`.
//!
//! A **meta tensor** ([`Device::Meta`], [`Tensor::empty_meta`], or `x.to(Device::Meta)`) has a
//! shape, a dtype and strides and holds no memory. Ops on it run their meta kernel (the
//! `switchyard-backends` crate registers one per standard op, computing the result's shape and
//! dtype with the same rules, and the same errors, as the real kernels) or, for an op with a
//! body, the body on meta tensors. Views, in-place ops and autograd work on it: `backward()` of a
//! meta loss gives meta gradients.
//!
//! A **fake tensor** reports a real device (`cpu`, `wgpu`) but is a meta tensor underneath: it
//! carries [`DispatchKey::Fake`](switchyard::DispatchKey) above its device's keys, and one
//! fallback there runs every op on meta tensors and hands back fake results on the device a real
//! run would have used. Inside a [`FakeMode`] (or [`fake`]), tensors made by the factory ops
//! (`full`, `zeros`, `rand`, `randn`, `arange`, …) or moved with `to` are fake, and the mode
//! counts the memory a real run would have allocated, per device ([`FakeMemory`]).
//!
//! ```
//! use switchyard::{DType, Device, fake, ops};
//!
//! let (shape, memory) = fake::fake(|| {
//!     // A 1-billion-parameter layer: nothing is allocated.
//!     let w = ops::try_randn(&[32_768, 32_768], DType::F32, Device::Cpu).unwrap();
//!     let x = ops::try_full(&[8, 32_768], 0.0, DType::F32, Device::Cpu).unwrap();
//!     let y = ops::try_matmul(&x, &w).unwrap();
//!     assert!(y.is_fake() && y.device() == Device::Cpu);
//!     y.shape().to_vec()
//! });
//! assert_eq!(shape, [8, 32_768]);
//! // The weights alone are 4 GiB.
//! assert!(memory.device(Device::Cpu).peak > 4 << 30);
//! ```
//!
//! An op with neither a meta kernel nor a body cannot run on meta or fake tensors: the call is
//! the missing-kernel error naming the op and the `Meta` key. A downstream op gets meta support
//! from its body for free, or registers `#[kernel(op = "…", key = Meta)]` like any other kernel
//! (build its result with [`Tensor::empty_meta`]).

mod fallback;
mod memory;
mod storage;

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;

use switchyard::{DType, DispatchError, DispatchKeySet, KeyGuard};

pub use memory::{DeviceBytes, FakeMemory};

use crate::device::Device;
use crate::tensor::Tensor;
use memory::Account;
use storage::MetaStorage;

thread_local! {
    /// The fake modes alive on this thread, innermost last: results are charged to the last.
    static MODES: RefCell<Vec<Arc<Account>>> = const { RefCell::new(Vec::new()) };
}

/// The account of the innermost fake mode alive on this thread.
fn current_account() -> Option<Arc<Account>> {
    MODES
        .try_with(|modes| modes.borrow().last().cloned())
        .ok()
        .flatten()
}

/// While alive, this thread is in a fake mode (PyTorch's `FakeTensorMode`): factory ops and `to`
/// make fake tensors, every op on fake tensors computes shapes only, and [`FakeMode::memory`]
/// tells what a real run would have allocated so far. Modes nest; results count in the
/// innermost. Tensors made before the mode stay real; an op mixing them with fake ones treats
/// them as fake (their memory is not counted: it exists already).
#[must_use = "the mode is on only while this guard is alive"]
pub struct FakeMode {
    account: Arc<Account>,
    _include: KeyGuard,
    /// Thread-local: the mode belongs to the thread that entered it.
    _not_send: PhantomData<*const ()>,
}

impl std::fmt::Debug for FakeMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeMode")
            .field("memory", &self.memory())
            .finish()
    }
}

impl FakeMode {
    /// Enters a fake mode on this thread.
    pub fn enter() -> FakeMode {
        let account = Arc::new(Account::default());
        let _ = MODES.try_with(|modes| modes.borrow_mut().push(Arc::clone(&account)));
        FakeMode {
            account,
            _include: switchyard::include(DispatchKeySet::FAKE),
            _not_send: PhantomData,
        }
    }

    /// What a real run of the work so far would have allocated, per device: live bytes now,
    /// their peak, the total.
    pub fn memory(&self) -> FakeMemory {
        self.account.snapshot()
    }
}

impl Drop for FakeMode {
    fn drop(&mut self) {
        let _ = MODES.try_with(|modes| {
            let mut modes = modes.borrow_mut();
            if let Some(at) = modes.iter().rposition(|a| Arc::ptr_eq(a, &self.account)) {
                modes.remove(at);
            }
        });
    }
}

/// Runs `f` in a [`FakeMode`] and returns its result with the memory a real run would have
/// allocated (the peak includes tensors `f` returns; they are fake).
pub fn fake<R>(f: impl FnOnce() -> R) -> (R, FakeMemory) {
    let mode = FakeMode::enter();
    let result = f();
    let memory = mode.memory();
    (result, memory)
}

impl Tensor {
    /// A contiguous meta tensor: a shape and a dtype, no data ([`Device::Meta`]). Meta kernels
    /// build their results with it. Errors when the shape's element count overflows, as a real
    /// tensor's would.
    pub fn empty_meta(shape: &[usize], dtype: DType) -> Result<Tensor, DispatchError> {
        let numel = Tensor::checked_numel("empty_meta", shape, dtype)?;
        Tensor::from_backend(MetaStorage::new(dtype, numel), shape, Device::Meta)
    }

    /// Whether this is a fake tensor: it reports a real device but holds no data (see
    /// [`fake`](crate::fake)).
    pub fn is_fake(&self) -> bool {
        self.keys().has(switchyard::DispatchKey::Fake)
    }

    /// Whether this tensor holds no data: a meta tensor or a fake one.
    pub fn is_meta(&self) -> bool {
        self.device() == Device::Meta || self.is_fake()
    }
}
