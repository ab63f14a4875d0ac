//! Ops seen without their types: handles, lookup by name, and the registry dump.

use std::fmt::{self, Write as _};

use crate::cpu::{CpuPolicy, variant_notes};
use crate::error::{DispatchError, Location};
use crate::key::DispatchKey;
use crate::registry::{FallbackKind, KernelMeta, SWITCHYARD_OPS as OPS, fallbacks};
use crate::table::{ErasedOp, SlotOrigin};

/// A handle to one op, for tools and tests: name, schema, registrations and the computed table.
/// Every op's module has `handle()`; [`find_op`] finds one by name.
#[derive(Clone, Copy)]
pub struct OpHandle {
    op: &'static dyn ErasedOp,
}

impl OpHandle {
    /// Wraps an op's table. Used by generated code.
    pub fn new(op: &'static dyn ErasedOp) -> Self {
        OpHandle { op }
    }

    /// The op's name.
    pub fn name(&self) -> &'static str {
        self.op.info().name
    }

    /// The op's schema, e.g. `mul(x: Tensor, y: Tensor) -> Tensor`.
    pub fn schema(&self) -> &'static str {
        self.op.info().schema
    }

    /// Where the op was declared.
    pub fn location(&self) -> Location {
        self.op.info().location
    }

    /// Every kernel registered for the op, sorted by key.
    pub fn registrations(&self) -> Vec<(DispatchKey, KernelMeta)> {
        self.op.registrations()
    }

    /// Whether the op has a body, used as its composite kernel.
    pub fn has_composite(&self) -> bool {
        self.op.has_composite()
    }

    /// What each key's slot resolved to, highest key first; builds the table if needed.
    pub fn slots(&self) -> Result<Vec<(DispatchKey, SlotOrigin)>, DispatchError> {
        self.op.slots()
    }

    /// What `key`'s slot resolved to.
    pub fn slot(&self, key: DispatchKey) -> Result<SlotOrigin, DispatchError> {
        Ok(self
            .slots()?
            .into_iter()
            .find(|(k, _)| *k == key)
            .map_or(SlotOrigin::Missing, |(_, o)| o))
    }

    /// The computed table, one line per key: `CpuNaive  [kernel] backends/src/cpu/naive.rs:40 mul`.
    /// Under a key with CPU variants, one more line per variant says whether it was chosen and
    /// why not (`CPU lacks avx512f`, `capped by SWITCHYARD_CPU_CAPABILITY=avx2`).
    pub fn table_dump(&self) -> String {
        let mut out = format!("{}\n", self.schema());
        match self.slots() {
            Ok(slots) => {
                let registrations = self.registrations();
                for (key, origin) in slots {
                    let _ = writeln!(out, "  {:<20} {origin}", key.name());
                    for (meta, verdict) in variant_notes(&registrations, key, CpuPolicy::current())
                    {
                        let _ = writeln!(
                            out,
                            "  {:<20}   variant {} (cpu: {}): {verdict}",
                            "", meta.name, meta.cpu
                        );
                    }
                }
            }
            Err(error) => {
                let _ = writeln!(out, "  table not built: {error}");
            }
        }
        out
    }
}

impl fmt::Debug for OpHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpHandle({})", self.schema())
    }
}

/// Every op linked into this binary, sorted by name.
pub fn ops() -> Vec<OpHandle> {
    let mut ops: Vec<OpHandle> = OPS.iter().map(|op| OpHandle::new(*op)).collect();
    ops.sort_by_key(|op| (op.name(), op.location()));
    ops
}

/// The op named `name`, if one is linked into this binary.
pub fn find_op(name: &str) -> Option<OpHandle> {
    OPS.iter()
        .find(|op| op.info().name == name)
        .map(|op| OpHandle::new(*op))
}

/// Every op, its schema, and its kernels with provenance (crate, file:line).
///
/// An op with no kernel and no body is flagged: the usual cause is a kernel crate that the binary
/// never names, so the linker dropped it.
pub fn dump() -> String {
    let ops = ops();
    let mut out = String::new();
    let fallbacks = fallbacks();
    let _ = writeln!(
        out,
        "switchyard: {} ops, {} fallbacks; {}",
        ops.len(),
        fallbacks.len(),
        CpuPolicy::current()
    );
    for fallback in &fallbacks {
        let kind = match fallback.kind {
            FallbackKind::Fallthrough => "fallthrough",
        };
        let _ = writeln!(
            out,
            "fallback {:<20} {kind} from {} at {}",
            fallback.key.name(),
            fallback.location.crate_name(),
            fallback.location
        );
    }
    for op in &ops {
        let _ = writeln!(
            out,
            "{}    (declared in {} at {})",
            op.schema(),
            op.location().crate_name(),
            op.location()
        );
        if op.has_composite() {
            let _ = writeln!(out, "  {:<20} the op's body", "[composite]");
        }
        let registrations = op.registrations();
        for (key, meta) in &registrations {
            let cpu = if meta.cpu.is_empty() {
                String::new()
            } else {
                format!(" (cpu: {})", meta.cpu)
            };
            let _ = writeln!(
                out,
                "  {:<20} {}{cpu} from {} at {}",
                key.name(),
                meta.name,
                meta.location.crate_name(),
                meta.location
            );
        }
        if registrations.is_empty() && !op.has_composite() {
            let _ = writeln!(
                out,
                "  (no kernels: is the crate that provides them linked? name it once, e.g. \
                 `use switchyard_backends as _;`)"
            );
        }
    }
    out
}
