//! What the macros register: kernels (one linkme slice per op), fallbacks and ops (one global
//! slice each). Nothing here runs before `main`; tables read these slices at first use.
//! Registrations made at run time (`runtime.rs`) have the same types.

use linkme::distributed_slice;

use crate::alias::KernelKey;
use crate::boxing::Stack;
use crate::cpu::CpuFeatures;
use crate::error::{DispatchError, Location};
use crate::handle::OpHandle;
use crate::key::{DispatchKey, DispatchKeySet};

/// Provenance of a kernel or fallback, shown in dumps and errors.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct KernelMeta {
    /// The kernel function's name.
    pub name: &'static str,
    /// Where it was registered.
    pub location: Location,
    /// The CPU features this variant needs (`cpu = "avx2,fma"`); empty for a plain kernel. A
    /// variant is installed only on a CPU that has them all (see [`crate::cpu`]).
    pub cpu: CpuFeatures,
}

/// One `#[kernel]`: a typed function pointer for one op at one key. `F` is the op's `KernelFn`
/// type, so a kernel of the wrong signature cannot be registered.
#[derive(Debug)]
pub struct KernelRegistration<F: 'static> {
    /// The key this kernel serves: a runtime key or an alias.
    pub key: KernelKey,
    /// The kernel, adapted to take the call's keys and return `Result`.
    pub kernel: F,
    /// Provenance.
    pub meta: KernelMeta,
}

impl<F: Copy> Clone for KernelRegistration<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: Copy> Copy for KernelRegistration<F> {}

/// A boxed kernel: serves any op, seeing it through its handle and its arguments on a stack.
/// What `#[fallback]` registers.
pub type BoxedKernel =
    fn(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack) -> Result<(), DispatchError>;

/// What a fallback does for every op at its key.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum FallbackKind {
    /// Skip the key: ops without a kernel of their own there continue with the next lower key.
    Fallthrough,
    /// Run this boxed kernel.
    Boxed(BoxedKernel),
}

/// One fallback: a behaviour for every op at one key.
#[derive(Clone, Copy, Debug)]
pub struct FallbackRegistration {
    /// The key served.
    pub key: DispatchKey,
    /// What happens there.
    pub kind: FallbackKind,
    /// The fallback's name and where it was registered.
    pub meta: KernelMeta,
}

/// Every fallback linked into the binary.
#[allow(unsafe_code)] // linkme's `link_section`; no unsafe code of ours
#[distributed_slice]
pub static SWITCHYARD_FALLBACKS: [FallbackRegistration];

/// Where an op has no SIMD kernel, its CPU call continues on the naive backend.
#[allow(unsafe_code)] // linkme's `link_section`
#[distributed_slice(SWITCHYARD_FALLBACKS)]
static CPU_SIMD_FALLS_THROUGH: FallbackRegistration = FallbackRegistration {
    key: DispatchKey::CpuSimd,
    kind: FallbackKind::Fallthrough,
    meta: KernelMeta {
        name: "fallthrough",
        location: Location {
            module: module_path!(),
            file: file!(),
            line: line!(),
        },
        cpu: CpuFeatures::empty(),
    },
};

/// Every op linked into the binary, for `dump()` and `find_op`.
#[allow(unsafe_code)] // linkme's `link_section`; no unsafe code of ours
#[distributed_slice]
pub static SWITCHYARD_OPS: [&'static dyn crate::table::ErasedOp];
