//! The table of standard ops × backends × dtypes that docs/ops.md shows, generated from the
//! registry: what is registered, not what anyone remembers to write down.

use std::fmt::Write as _;

use switchyard::{AliasKey, ColumnSet, DispatchKey, KernelKey};

/// The crate that declares the standard ops (`switchyard::ops`), as its module paths name it.
pub const STANDARD_OPS_CRATE: &str = "switchyard_tensor";

/// The crates whose kernels the table lists: the standard ops' own (the view ops'
/// `CompositeExplicit` kernels) and this one's backends. Kernels of other crates linked into
/// the same binary (a downstream device, a test's) are theirs to document.
const LISTED_CRATES: [&str; 2] = [STANDARD_OPS_CRATE, "switchyard_backends"];

/// The table's columns: each backend key this crate fills, the two composite aliases, and the
/// autocast policies (kernels at `Autocast`, the tensor crate's).
const COLUMNS: [(KernelKey, &str); 7] = [
    (KernelKey::Key(DispatchKey::CpuNaive), "`CpuNaive`"),
    (KernelKey::Key(DispatchKey::CpuSimd), "`CpuSimd`"),
    (KernelKey::Key(DispatchKey::Wgpu), "`Wgpu`"),
    (KernelKey::Key(DispatchKey::Meta), "`Meta`"),
    (
        KernelKey::Alias(AliasKey::CompositeExplicit),
        "`CompositeExplicit`",
    ),
    (
        KernelKey::Alias(AliasKey::CompositeImplicit),
        "`CompositeImplicit` (op body)",
    ),
    (KernelKey::Key(DispatchKey::Autocast), "`Autocast` (policy)"),
];

/// A Markdown table: one row per standard op linked into this binary (by name), one column per
/// key, each cell the dtype columns the registered kernels serve (`builtin`, `all`, `float|int`, `f32`; the
/// union over CPU variants) or `—`.
///
/// It reads registrations, not built tables, so it is the same on every machine: a `CpuSimd`
/// kernel is listed whether or not this CPU can run any of its variants, and the `Wgpu` column
/// needs no GPU. It does need the kernels linked: without this crate's `wgpu` feature the
/// `Wgpu` cells say `not built`. (On a target other than x86_64 and aarch64 there are no SIMD
/// kernels to list.)
pub fn op_table() -> String {
    let mut out = String::from("| op |");
    for (_, title) in COLUMNS {
        let _ = write!(out, " {title} |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(COLUMNS.len()));
    out.push('\n');
    let mut ops = standard_ops();
    ops.sort_by_key(|op| op.name());
    // Every op here is in the `switchyard` namespace: the table names them bare.
    for op in ops {
        let registrations = op.registrations();
        let _ = write!(out, "| `{}` |", op.bare_name());
        for (key, _) in COLUMNS {
            let mut served = registrations
                .iter()
                .filter(|(k, meta)| {
                    *k == key && LISTED_CRATES.contains(&meta.location.crate_name())
                })
                .fold(ColumnSet::EMPTY, |set, (_, meta)| set.union(meta.dtypes));
            if key == KernelKey::Alias(AliasKey::CompositeImplicit) && op.has_composite() {
                served = ColumnSet::ALL;
            }
            let cell = if key == KernelKey::Key(DispatchKey::Wgpu) && !cfg!(feature = "wgpu") {
                "not built".to_string()
            } else if served.is_empty() {
                "—".to_string()
            } else {
                format!("`{served}`")
            };
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    out
}

/// The standard ops: those the tensor crate declares.
pub(crate) fn standard_ops() -> Vec<switchyard::OpHandle> {
    switchyard::ops()
        .into_iter()
        .filter(|op| op.location().crate_name() == STANDARD_OPS_CRATE)
        .collect()
}
