//! What is registered: kernels (one linkme slice per op), fallbacks and ops (one global slice
//! each), and what was registered at run time ([`Global`]). Nothing here runs before `main`;
//! tables read these slices at first use.
//!
//! An op is registered as an [`ErasedOp`], its table seen without its types, which is what an
//! [`OpHandle`] wraps and what a boxed kernel is handed. These types are declared together
//! because they refer to one another (a fallback's kernel takes an `OpHandle`; an op recomputes
//! its table from the fallbacks); the layers above implement them (`table/`, `handle.rs`).

use std::panic::Location as CallerLocation;

#[cfg(not(target_family = "wasm"))]
use linkme::distributed_slice;

use crate::alias::KernelKey;
use crate::boxing::Stack;
use crate::dtype::{ColumnSet, DTypeColumn};
use crate::error::{DispatchError, Location, location_here};
use crate::key::{DispatchKey, DispatchKeySet};
#[cfg(target_family = "wasm")]
use crate::linked::CtorSlice;
use crate::origin::{Conflict, SlotOrigin};
use crate::registration::Registration;

/// `modes/` names the provenance type through this module.
pub(crate) use crate::origin::KernelMeta;

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
    fn(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> Result<(), DispatchError>;

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

/// What an op is: its name, schema and where it was declared.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// The op's full name, `namespace::name` (`#[op(name = …)]`, in its crate's namespace unless
    /// it names one).
    pub name: &'static str,
    /// The schema generated from the Rust signature, e.g. `mul(x: Tensor, y: Tensor) -> Tensor`.
    pub schema: &'static str,
    /// Where the op was declared.
    pub location: Location,
    /// The name of the op's Rust item (`cube`); see [`OpInfo::item_path`].
    pub item: &'static str,
    /// How many arguments the op takes.
    pub arity: usize,
    /// Whether the op may take arguments on different devices (`#[op(mixes_devices)]`).
    pub mixes_devices: bool,
}

/// The part of an op name after its namespace: `softmax` of `switchyard::softmax`.
pub(crate) fn bare_name(name: &str) -> &str {
    name.rsplit_once("::").map_or(name, |(_, bare)| bare)
}

impl OpInfo {
    /// The namespace of the op's name: `switchyard` of `switchyard::add`.
    pub fn namespace(&self) -> &'static str {
        self.name
            .rsplit_once("::")
            .map_or("", |(namespace, _)| namespace)
    }

    /// The op's name without its namespace: `add` of `switchyard::add`.
    pub fn bare_name(&self) -> &'static str {
        bare_name(self.name)
    }

    /// The op's Rust item by its path from its crate's root (`my_crate::ops::cube`): what
    /// `#[kernel(op = …)]` names. (`location.module` is the op's hidden module, inside the op's
    /// own module named after the item.)
    pub fn item_path(&self) -> String {
        let hidden = format!("::{}::__switchyard", self.item);
        let module = self
            .location
            .module
            .strip_suffix(hidden.as_str())
            .unwrap_or(self.location.module);
        format!("{module}::{}", self.item)
    }
}

/// An op seen without its types: what `dump()`, `find_op`, [`OpHandle`] and runtime
/// registration see. `#[op]` declares each op's table (an `OpTable`, which implements it) and
/// lists it in `SWITCHYARD_OPS`.
pub trait ErasedOp: Sync {
    /// Name, schema, location.
    fn info(&self) -> &OpInfo;
    /// Every kernel registered for the op (linked and at run time), sorted by key.
    fn registrations(&self) -> Vec<(KernelKey, KernelMeta)>;
    /// Whether the op has a body (a composite kernel).
    fn has_composite(&self) -> bool;
    /// What each key's slot resolved to in `column` (building the table if needed), or the
    /// build error.
    fn slots(
        &'static self,
        column: DTypeColumn,
    ) -> Result<Vec<(DispatchKey, SlotOrigin)>, DispatchError>;
    /// Each group of columns that resolved alike, with what each key's slot resolved to there
    /// (indexed by key), or the build error.
    fn parts(&'static self) -> Result<Vec<(ColumnSet, Vec<SlotOrigin>)>, DispatchError>;
    /// Calls the op with the arguments on `stack`, dispatching on their keys and the thread's.
    fn call_boxed(&'static self, stack: &mut Stack<'_>) -> Result<(), DispatchError>;
    /// Calls the op for exactly `keys` with the arguments on `stack`.
    fn redispatch_boxed(
        &'static self,
        keys: DispatchKeySet,
        stack: &mut Stack<'_>,
    ) -> Result<(), DispatchError>;
    /// Makes this op skip `key` until the guard drops.
    fn register_fallthrough(
        &'static self,
        key: DispatchKey,
        caller: &'static CallerLocation<'static>,
    ) -> Result<Registration, DispatchError>;
    /// Every conflict among the op's own registrations, or the error that makes the whole op
    /// uncallable (two ops share its name).
    fn conflicts(&'static self) -> Result<Vec<Conflict>, DispatchError>;
    /// Computes the op's table from its linked registrations without installing it: what first
    /// use costs (benchmarks of table builds).
    #[doc(hidden)]
    fn compute_table_uncached(&'static self);
    /// Republishes the op's tables for the live registrations; `global` is held under the global
    /// registration lock, which only the engine can take.
    #[doc(hidden)]
    fn refresh(&'static self, global: &Global);
}

/// A handle to one op, for tools and tests: name, schema, registrations and the computed table.
/// Every op's module has `handle()`; [`find_op`](crate::find_op) finds one by name.
#[derive(Clone, Copy)]
pub struct OpHandle {
    pub(crate) op: &'static dyn ErasedOp,
}

/// The runtime registrations that concern every op. Only reachable under the global registration
/// lock (`runtime::lock`).
#[derive(Debug)]
pub struct Global {
    next_id: u64,
    /// Fallbacks registered at run time, with their registration ids.
    pub(crate) fallbacks: Vec<(u64, FallbackRegistration)>,
}

impl Global {
    /// No runtime registrations yet.
    pub(crate) const fn new() -> Self {
        Global {
            next_id: 0,
            fallbacks: Vec::new(),
        }
    }

    /// A fresh registration id.
    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Every live fallback: linked and registered at run time.
    pub(crate) fn all_fallbacks(&self) -> Vec<FallbackRegistration> {
        SWITCHYARD_FALLBACKS
            .iter()
            .copied()
            .chain(self.fallbacks.iter().map(|(_, f)| *f))
            .collect()
    }
}

/// Every fallback linked into the binary.
#[cfg(not(target_family = "wasm"))]
#[allow(unsafe_code)] // linkme's `link_section`; no unsafe code of ours
#[distributed_slice]
pub static SWITCHYARD_FALLBACKS: [FallbackRegistration];

/// Every fallback linked into the module.
#[cfg(target_family = "wasm")]
pub static SWITCHYARD_FALLBACKS: CtorSlice<FallbackRegistration> = CtorSlice::new();

/// Where an op has no SIMD kernel, its CPU call continues on the naive backend.
#[allow(unsafe_code)] // linkme's `link_section`
#[cfg_attr(not(target_family = "wasm"), distributed_slice(SWITCHYARD_FALLBACKS))]
static CPU_SIMD_FALLS_THROUGH: FallbackRegistration = FallbackRegistration::new(
    DispatchKey::CpuSimd,
    FallbackKind::Fallthrough,
    KernelMeta::new("fallthrough", location_here!()),
);
#[cfg(target_family = "wasm")]
crate::__switchyard_submit!(SWITCHYARD_FALLBACKS, CPU_SIMD_FALLS_THROUGH);

/// An op without an autocast policy (a kernel at `Autocast`) runs untouched under autocast.
#[allow(unsafe_code)] // linkme's `link_section`
#[cfg_attr(not(target_family = "wasm"), distributed_slice(SWITCHYARD_FALLBACKS))]
static AUTOCAST_FALLS_THROUGH: FallbackRegistration = FallbackRegistration::new(
    DispatchKey::Autocast,
    FallbackKind::Fallthrough,
    KernelMeta::new("fallthrough", location_here!()),
);
#[cfg(target_family = "wasm")]
crate::__switchyard_submit!(SWITCHYARD_FALLBACKS, AUTOCAST_FALLS_THROUGH);

/// Every op linked into the binary, for `dump()` and `find_op`.
#[cfg(not(target_family = "wasm"))]
#[allow(unsafe_code)] // linkme's `link_section`; no unsafe code of ours
#[distributed_slice]
pub static SWITCHYARD_OPS: [&'static dyn ErasedOp];

/// Every op linked into the module, for `dump()` and `find_op`.
#[cfg(target_family = "wasm")]
pub static SWITCHYARD_OPS: CtorSlice<&'static dyn ErasedOp> = CtorSlice::new();
