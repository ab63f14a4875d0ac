//! Where a kernel comes from and where a slot's kernel came from: a registration's provenance
//! ([`KernelMeta`]), what one slot of an op's table resolved to ([`SlotOrigin`]), and two
//! registrations that claim one slot ([`Conflict`]). What dumps, errors and the trace print.

use std::fmt;

use crate::alias::KernelKey;
use crate::cpu::CpuFeatures;
use crate::dtype::ColumnSet;
use crate::error::{DispatchError, ErrorKind, Location};

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
    /// The columns of the op's table the kernel serves (`dtypes = "f32"`); every column for a
    /// kernel that declares none, and for fallbacks, fallthroughs and an op's body.
    pub dtypes: ColumnSet,
}

impl KernelMeta {
    /// A plain kernel's provenance: no CPU features, not an override, the built-in columns. What
    /// generated registrations use; not public API (the fields are public).
    #[doc(hidden)]
    pub const fn new(name: &'static str, location: Location) -> Self {
        KernelMeta {
            name,
            location,
            cpu: CpuFeatures::empty(),
            overrides: false,
            dtypes: ColumnSet::BUILTIN,
        }
    }
}

/// What one slot of an op's table resolved to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum SlotOrigin {
    /// A kernel registered for exactly this key.
    Kernel(KernelMeta),
    /// A `CompositeExplicit` kernel (backend keys only).
    CompositeExplicit(KernelMeta),
    /// The op's composite body (or a kernel registered for `CompositeImplicit`).
    Composite,
    /// A kernel registered for the `Autograd` alias.
    AutogradAlias(KernelMeta),
    /// The boxed fallback registered for this key.
    Fallback(KernelMeta),
    /// A boxed fallback is registered for this key, but the op is `#[op(unboxed)]`: calling it is
    /// an error.
    FallbackUnboxed(KernelMeta),
    /// Two registrations claim this slot: a call that lands here fails, naming both.
    Conflict(Conflict),
    /// Skipped: the call continues with the next lower key.
    Fallthrough,
    /// Nothing: a call that lands here is an error.
    Missing,
}

/// Two registrations that claim one slot. Only calls that reach the slot fail.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Conflict {
    /// The contested key: a runtime key or an alias.
    pub key: KernelKey,
    /// The two registrations, in sorted order.
    pub first: KernelMeta,
    /// See `first`.
    pub second: KernelMeta,
    /// Whether they are fallbacks (serving every op at `key`) rather than kernels of one op.
    pub fallbacks: bool,
}

impl Conflict {
    /// The error a call that reaches the slot gets.
    pub(crate) fn error(&self, op: &'static str) -> DispatchError {
        let sites = |meta: KernelMeta| (meta.name, meta.location);
        match self.key.runtime().filter(|_| self.fallbacks) {
            Some(key) => DispatchError::new(ErrorKind::DuplicateFallback {
                key,
                first: sites(self.first),
                second: sites(self.second),
            }),
            None => DispatchError::new(ErrorKind::DuplicateKernel {
                op,
                key: self.key,
                first: sites(self.first),
                second: sites(self.second),
            }),
        }
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.fallbacks {
            "fallbacks"
        } else {
            "kernels"
        };
        write!(
            f,
            "[conflict] two {what} at `{}`: `{}` at {} and `{}` at {}",
            self.key, self.first.name, self.first.location, self.second.name, self.second.location
        )
    }
}

impl fmt::Display for SlotOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlotOrigin::Kernel(meta) => {
                write!(f, "[kernel] {} {}", meta.location, meta.name)?;
                if !meta.cpu.is_empty() {
                    write!(f, " (cpu: {})", meta.cpu)?;
                }
                if meta.overrides {
                    f.write_str(" (overrides)")?;
                }
                Ok(())
            }
            SlotOrigin::CompositeExplicit(meta) => {
                write!(f, "[composite explicit] {} {}", meta.location, meta.name)
            }
            SlotOrigin::Composite => f.write_str("[composite]"),
            SlotOrigin::AutogradAlias(meta) => {
                write!(f, "[autograd alias] {} {}", meta.location, meta.name)
            }
            SlotOrigin::Fallback(meta) => write!(f, "[fallback] {} {}", meta.location, meta.name),
            SlotOrigin::FallbackUnboxed(meta) => write!(
                f,
                "missing (the fallback {} at {} cannot serve an unboxed op)",
                meta.name, meta.location
            ),
            SlotOrigin::Conflict(conflict) => conflict.fmt(f),
            SlotOrigin::Fallthrough => f.write_str("fallthrough"),
            SlotOrigin::Missing => f.write_str("missing"),
        }
    }
}
