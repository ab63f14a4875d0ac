//! What the macros register: kernels (one linkme slice per op), fallbacks and ops (one global
//! slice each). Nothing here runs before `main`; tables read these slices at first use.
//! Registrations made at run time (`runtime.rs`) have the same types.

use linkme::distributed_slice;

use crate::alias::KernelKey;
use crate::boxing::Stack;
use crate::cpu::CpuFeatures;
use crate::error::{DispatchError, Location, location_here};
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
    /// Whether this kernel deliberately replaces the other registrations at its key
    /// (`#[kernel(…, overrides)]`, `op::register_override`).
    pub overrides: bool,
}

impl KernelMeta {
    /// A plain kernel's provenance: no CPU features, not an override.
    pub const fn new(name: &'static str, location: Location) -> Self {
        KernelMeta {
            name,
            location,
            cpu: CpuFeatures::empty(),
            overrides: false,
        }
    }
}

/// One `#[kernel]`: a typed function pointer for one op at one key. `F` is the op's `KernelFn`
/// type, so a kernel of the wrong signature cannot be registered.
///
/// The fields are private: a registration's kernel can only be reached through its op's table,
/// which installs a CPU variant only where its features were detected. (Were the function pointer
/// readable, safe code could call an AVX-512 kernel's entry on a CPU without AVX-512.)
#[derive(Debug)]
pub struct KernelRegistration<F: 'static> {
    key: KernelKey,
    kernel: F,
    meta: KernelMeta,
}

impl<F: 'static> KernelRegistration<F> {
    /// A kernel that runs on every CPU: `meta.cpu` must be empty (checked; in a `static`, at
    /// compile time). The library's own keys are refused the same way.
    pub const fn new(key: KernelKey, kernel: F, meta: KernelMeta) -> Self {
        assert!(
            meta.cpu.is_empty(),
            "a kernel that needs CPU features is registered with `KernelRegistration::with_cpu`"
        );
        assert!(
            !key.is_builtin(),
            "the library's own keys take no user kernels"
        );
        KernelRegistration { key, kernel, meta }
    }

    /// A CPU variant: a kernel that may only run on CPUs with every feature in `meta.cpu`.
    ///
    /// # Safety
    ///
    /// Calling `kernel` must be sound on every CPU that has the features in `meta.cpu` (the table
    /// installs it only on such CPUs, and nothing else can read it back).
    #[allow(unsafe_code)] // the contract is what makes a CPU variant's entry sound
    pub const unsafe fn with_cpu(key: KernelKey, kernel: F, meta: KernelMeta) -> Self {
        assert!(
            !key.is_builtin(),
            "the library's own keys take no user kernels"
        );
        KernelRegistration { key, kernel, meta }
    }

    /// The key this kernel serves: a runtime key or an alias.
    pub const fn key(&self) -> KernelKey {
        self.key
    }

    /// Provenance.
    pub const fn meta(&self) -> KernelMeta {
        self.meta
    }

    /// The kernel: only the table reads it, after the CPU check.
    pub(crate) fn kernel(&self) -> F
    where
        F: Copy,
    {
        self.kernel
    }
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
    pub(crate) key: DispatchKey,
    pub(crate) kind: FallbackKind,
    pub(crate) meta: KernelMeta,
}

impl FallbackRegistration {
    /// A fallback at `key`. The library's own keys (`BuiltinTrace`, `BuiltinProfile`) are refused
    /// (in a `static`, at compile time).
    pub const fn new(key: DispatchKey, kind: FallbackKind, meta: KernelMeta) -> Self {
        assert!(
            !key.is_builtin(),
            "the library's own keys take no user fallbacks; use `Tracing`, `Profiler` or `Mode1..3`"
        );
        FallbackRegistration { key, kind, meta }
    }

    /// The library's own modes: the one way to register at a builtin key.
    pub(crate) const fn builtin(key: DispatchKey, kernel: BoxedKernel, meta: KernelMeta) -> Self {
        FallbackRegistration {
            key,
            kind: FallbackKind::Boxed(kernel),
            meta,
        }
    }

    /// The key served.
    pub const fn key(&self) -> DispatchKey {
        self.key
    }

    /// The fallback's name and where it was registered.
    pub const fn meta(&self) -> KernelMeta {
        self.meta
    }
}

/// Every fallback linked into the binary.
#[allow(unsafe_code)] // linkme's `link_section`; no unsafe code of ours
#[distributed_slice]
pub static SWITCHYARD_FALLBACKS: [FallbackRegistration];

/// Where an op has no SIMD kernel, its CPU call continues on the naive backend.
#[allow(unsafe_code)] // linkme's `link_section`
#[distributed_slice(SWITCHYARD_FALLBACKS)]
static CPU_SIMD_FALLS_THROUGH: FallbackRegistration = FallbackRegistration::new(
    DispatchKey::CpuSimd,
    FallbackKind::Fallthrough,
    KernelMeta::new("fallthrough", location_here!()),
);

/// Every op linked into the binary, for `dump()` and `find_op`.
#[allow(unsafe_code)] // linkme's `link_section`; no unsafe code of ours
#[distributed_slice]
pub static SWITCHYARD_OPS: [&'static dyn crate::table::ErasedOp];
