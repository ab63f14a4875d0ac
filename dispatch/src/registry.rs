//! What the macros register: kernels (one linkme slice per op), fallbacks and ops (one global
//! slice each). Nothing here runs before `main`; tables read these slices at first use.

use linkme::distributed_slice;

use crate::cpu::CpuFeatures;
use crate::error::Location;
use crate::key::{DispatchKey, DispatchKeySet};

/// Provenance of a kernel, shown in dumps and errors.
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

/// One `#[kernel]`: a typed function pointer for one op at one key. `F` is the op's kernel type,
/// so a kernel of the wrong signature cannot be registered.
#[derive(Debug)]
pub struct KernelRegistration<F: 'static> {
    /// The key this kernel serves.
    pub key: DispatchKey,
    /// The kernel, adapted to return `Result`.
    pub kernel: F,
    /// Provenance.
    pub meta: KernelMeta,
}

/// What a fallback does for every op at its key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum FallbackKind {
    /// Skip the key: ops without a kernel of their own there continue with the next lower key.
    Fallthrough,
}

/// One fallback: a behaviour for every op at one key.
#[derive(Debug)]
pub struct FallbackRegistration {
    /// The key served.
    pub key: DispatchKey,
    /// What happens there.
    pub kind: FallbackKind,
    /// Where it was registered.
    pub location: Location,
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
    location: Location {
        module: module_path!(),
        file: file!(),
        line: line!(),
    },
};

/// Every fallback, sorted by key (highest first) then location.
pub(crate) fn fallbacks() -> Vec<&'static FallbackRegistration> {
    let mut all: Vec<_> = SWITCHYARD_FALLBACKS.iter().collect();
    all.sort_by_key(|f| (std::cmp::Reverse(f.key), f.location));
    all
}

/// The keys that every op skips unless it has a kernel of its own there.
pub(crate) fn fallthrough_keys() -> DispatchKeySet {
    SWITCHYARD_FALLBACKS
        .iter()
        .filter(|f| f.kind == FallbackKind::Fallthrough)
        .map(|f| f.key)
        .collect()
}

/// Every op linked into the binary, for `dump()` and `find_op`.
#[allow(unsafe_code)] // linkme's `link_section`; no unsafe code of ours
#[distributed_slice]
pub static SWITCHYARD_OPS: [&'static dyn crate::table::ErasedOp];
