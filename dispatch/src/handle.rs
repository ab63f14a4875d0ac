//! Ops seen without their types: what an [`OpHandle`] offers (name, schema, boxed calls,
//! registrations, the table and its dump), lookup by name, and the registry dump.

use std::fmt::{self, Write as _};

use crate::alias::{AliasKey, KernelKey};
use crate::boxing::Stack;
use crate::cpu::{CpuFeatures, CpuPolicy, Verdict};
use crate::dtype::{ColumnSet, DTypeColumn};
use crate::error::{DispatchError, ErrorKind, Location};
use crate::key::{DispatchKey, DispatchKeySet};
use crate::names::{self, Found};
use crate::origin::{Conflict, KernelMeta, SlotOrigin};
use crate::registration::Registration;
use crate::registry::{
    ErasedOp, FallbackKind, FallbackRegistration, OpHandle, SWITCHYARD_OPS as OPS,
};
use crate::resolve::fallback_conflicts;
use crate::runtime;

/// A group of columns that resolved alike, and what each key's slot resolved to there.
type ColumnSlots = (ColumnSet, Vec<(DispatchKey, SlotOrigin)>);

impl OpHandle {
    /// The handle of an op's table: what the generated `handle()` returns. Not public API.
    #[doc(hidden)]
    pub fn new(op: &'static dyn ErasedOp) -> Self {
        OpHandle { op }
    }

    /// The op's full name, `namespace::name` (`switchyard::add`, `my_crate::swish`): what dumps,
    /// traces, profiles and errors show.
    pub fn name(&self) -> &'static str {
        self.op.info().name
    }

    /// The op's namespace: `switchyard` for the standard ops, the declaring crate's name for an
    /// op declared without one.
    pub fn namespace(&self) -> &'static str {
        self.op.info().namespace()
    }

    /// The op's name without its namespace (`add`): what `find_op` also accepts, where no other
    /// linked op has it.
    pub fn bare_name(&self) -> &'static str {
        self.op.info().bare_name()
    }

    /// The op's schema, e.g. `mul(x: Tensor, y: Tensor) -> Tensor`.
    pub fn schema(&self) -> &'static str {
        self.op.info().schema
    }

    /// Where the op was declared.
    pub fn location(&self) -> Location {
        self.op.info().location
    }

    /// The op's Rust item, by its path from its crate's root (`my_crate::ops::cube`): what
    /// `#[kernel(op = …)]` names.
    pub fn item_path(&self) -> String {
        self.op.info().item_path()
    }

    /// How many arguments the op takes.
    pub fn arity(&self) -> usize {
        self.op.info().arity
    }

    /// Every kernel registered for the op (linked, and at run time), sorted by key.
    pub fn registrations(&self) -> Vec<(KernelKey, KernelMeta)> {
        self.op.registrations()
    }

    /// Whether the op has a body, used as its composite kernel.
    pub fn has_composite(&self) -> bool {
        self.op.has_composite()
    }

    /// What each key's slot resolved to for untyped calls (arguments that carry no dtype), highest
    /// key first; builds the table if needed. Kernels that declare no `dtypes` resolve alike in
    /// every column; [`OpHandle::slots_in`] reads one column.
    pub fn slots(&self) -> Result<Vec<(DispatchKey, SlotOrigin)>, DispatchError> {
        self.slots_in(DTypeColumn::Untyped)
    }

    /// What each key's slot resolved to for calls whose dtypes select `column`.
    pub fn slots_in(
        &self,
        column: DTypeColumn,
    ) -> Result<Vec<(DispatchKey, SlotOrigin)>, DispatchError> {
        self.op.slots(column)
    }

    /// What `key`'s slot resolved to for untyped calls.
    pub fn slot(&self, key: DispatchKey) -> Result<SlotOrigin, DispatchError> {
        self.slot_in(key, DTypeColumn::Untyped)
    }

    /// What `key`'s slot resolved to for calls whose dtypes select `column`.
    pub fn slot_in(
        &self,
        key: DispatchKey,
        column: DTypeColumn,
    ) -> Result<SlotOrigin, DispatchError> {
        Ok(self
            .slots_in(column)?
            .into_iter()
            .find(|(k, _)| *k == key)
            .map_or(SlotOrigin::Missing, |(_, o)| o))
    }

    /// The groups of columns whose slots resolved alike (kernels that declare no `dtypes` make
    /// one group of every column), each with what every key's slot resolved to, highest key
    /// first.
    pub fn columns(&self) -> Result<Vec<ColumnSlots>, DispatchError> {
        Ok(self
            .op
            .parts()?
            .into_iter()
            .map(|(columns, origins)| {
                let slots = DispatchKey::ALL
                    .iter()
                    .map(|&k| (k, origins[k.index()]))
                    .collect();
                (columns, slots)
            })
            .collect())
    }

    /// Calls the op boxed: the stack holds exactly its arguments, in order; on success it holds
    /// the result instead. Dispatches on the arguments' keys and the thread's, like a typed call.
    ///
    /// Wrong arity, wrong argument types, and everything a typed call can fail with are errors.
    pub fn call_boxed(&self, stack: &mut Stack<'_>) -> Result<(), DispatchError> {
        self.op.call_boxed(stack)
    }

    /// Calls the op boxed for exactly `keys` (no thread-local sets): how a boxed kernel continues
    /// below its own key, e.g. `op.redispatch_boxed(keys.below(DispatchKey::Tracing), stack)`.
    #[inline]
    pub fn redispatch_boxed(
        &self,
        keys: DispatchKeySet,
        stack: &mut Stack<'_>,
    ) -> Result<(), DispatchError> {
        self.op.redispatch_boxed(keys, stack)
    }

    /// Every conflict among the op's own registrations (two kernels at one (op, key, CPU
    /// variant), CPU variants of one key from two crates, two overrides). Calls that reach a
    /// conflicting slot fail naming both; other slots work. An error if two ops share the name.
    pub fn conflicts(&self) -> Result<Vec<Conflict>, DispatchError> {
        self.op.conflicts()
    }

    /// Makes this op skip `key` (a per-op fallthrough) until the returned guard drops. An op
    /// with a kernel of its own at `key` refuses, naming both registrations.
    #[track_caller]
    pub fn register_fallthrough(&self, key: DispatchKey) -> Result<Registration, DispatchError> {
        self.op
            .register_fallthrough(key, std::panic::Location::caller())
    }

    /// The computed table, one line per key: `CpuNaive  [kernel] backends/src/cpu/naive.rs:40 mul`.
    /// A key whose slot resolved differently per dtype column groups the columns that resolved
    /// alike, the largest group last: `CpuSimd  f32 → [kernel] … add_f32; other dtypes →
    /// fallthrough`. Under a key with CPU variants, one more line per variant says whether it was
    /// chosen and why not (`CPU lacks avx512f`, `capped by SWITCHYARD_CPU_CAPABILITY=avx2`).
    pub fn table_dump(&self) -> String {
        let mut out = format!("{}\n", self.schema());
        match self.op.parts() {
            Ok(parts) => {
                let registrations = self.registrations();
                for key in DispatchKey::ALL {
                    let label = crate::family::key_label(key);
                    let _ = writeln!(out, "  {label:<20} {}", per_column(&parts, key));
                    let at_key = registrations.iter().filter(|(k, _)| *k == key);
                    // With a declared override, the others at the key are listed as replaced.
                    let overriding = at_key.clone().any(|(_, meta)| meta.overrides);
                    let (family, replaced): (Vec<(KernelKey, KernelMeta)>, Vec<_>) =
                        at_key.partition(|(_, meta)| meta.overrides == overriding);
                    for (_, meta) in replaced.iter() {
                        let _ = writeln!(
                            out,
                            "  {:<20}   overridden: {} at {}{}",
                            "",
                            meta.name,
                            meta.location,
                            cpu_note(meta)
                        );
                    }
                    for (meta, verdict) in variant_notes(&family, key, CpuPolicy::current()) {
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

/// The op named `name`, if one is linked into this binary: by full name (`switchyard::add`), or
/// by bare name (`add`) where exactly one linked op has it. `None` also for a bare name that ops
/// of several namespaces have; [`op_named`] says which.
pub fn find_op(name: &str) -> Option<OpHandle> {
    match names::find(name) {
        Found::One(op) => Some(OpHandle::new(op)),
        Found::Ambiguous(_) | Found::Unknown => None,
    }
}

/// The op named `name`, as [`find_op`] finds it, or an error: for a bare name that ops of
/// several namespaces have, naming their full names; for an unknown name, listing linked ops
/// with similar names.
pub fn op_named(name: &str) -> Result<OpHandle, DispatchError> {
    let found = match names::find(name) {
        Found::One(op) => Some(OpHandle::new(op)),
        Found::Ambiguous(candidates) => {
            return Err(DispatchError::new(ErrorKind::AmbiguousOp {
                name: name.to_owned(),
                candidates: candidates.to_vec(),
            }));
        }
        Found::Unknown => None,
    };
    found.ok_or_else(|| {
        let wanted = name.to_lowercase();
        let mut similar: Vec<&'static str> = OPS
            .iter()
            .map(|op| op.info().name)
            .filter(|known| {
                // A bare name is compared with bare names.
                let known = if name.contains("::") {
                    known
                } else {
                    names::bare_name(known)
                };
                let known = known.to_lowercase();
                known.contains(&wanted)
                    || wanted.contains(&known)
                    || edit_distance(&known, &wanted) <= 2
            })
            .collect();
        similar.sort_unstable();
        similar.dedup();
        DispatchError::new(ErrorKind::UnknownOp {
            name: name.to_owned(),
            similar,
        })
    })
}

/// Calls the op named `name` boxed; see [`OpHandle::call_boxed`].
pub fn call_boxed(name: &str, stack: &mut Stack<'_>) -> Result<(), DispatchError> {
    op_named(name)?.call_boxed(stack)
}

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// Every op, its schema, and its kernels with provenance (crate, file:line).
///
/// An op whose calls would find no kernel at all is flagged (`no kernels`, the missing-kernel
/// error's "no kernels registered at all"): the usual cause is a kernel crate that the binary
/// never names, so the linker dropped it.
pub fn dump() -> String {
    let ops = ops();
    let mut out = String::new();
    let mut fallbacks = runtime::lock().all_fallbacks();
    fallbacks.sort_by_key(|f| (std::cmp::Reverse(f.key), f.meta.location));
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
            FallbackKind::Boxed(_) => fallback.meta.name,
        };
        let _ = writeln!(
            out,
            "fallback {:<20} {kind} from {} at {}",
            fallback.key.name(),
            fallback.meta.location.crate_name(),
            fallback.meta.location
        );
    }
    for line in crate::dtype::dump_lines() {
        let _ = writeln!(out, "{line}");
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
            let overrides = if meta.overrides { " (overrides)" } else { "" };
            let _ = writeln!(
                out,
                "  {:<20} {}{}{overrides} from {} at {}",
                match key {
                    KernelKey::Key(key) => crate::family::key_label(*key),
                    alias => alias.name().into(),
                },
                meta.name,
                cpu_note(meta),
                meta.location.crate_name(),
                meta.location
            );
        }
        // The ops whose calls fail with "no kernels registered at all": nothing at a backend key
        // and nothing that fills one (a body, a `CompositeExplicit` kernel). A kernel at the
        // `Autograd` alias, or at a layer's key (`Autocast`), serves no call on its own.
        let fills_a_backend = |key: &KernelKey| {
            key.runtime().is_some_and(DispatchKey::is_backend)
                || *key == KernelKey::Alias(AliasKey::CompositeExplicit)
        };
        if !op.has_composite() && !registrations.iter().any(|(key, _)| fills_a_backend(key)) {
            let only = if registrations.is_empty() {
                ""
            } else {
                " for a backend"
            };
            let _ = writeln!(
                out,
                "  (no kernels{only}: is the crate that provides them linked? name it once, e.g. \
                 `use my_kernels as _;`)"
            );
        }
    }
    write_conflicts(&mut out, &ops, &fallbacks);
    out
}

/// ` (cpu: avx2,fma)` for a CPU variant, ` (dtypes: f32)` for a kernel that serves other columns
/// than the built-in ones (` (dtypes: all)` for one that serves user dtypes too); nothing for a
/// plain kernel.
fn cpu_note(meta: &KernelMeta) -> String {
    let mut note = String::new();
    if !meta.cpu.is_empty() {
        let _ = write!(note, " (cpu: {})", meta.cpu);
    }
    if meta.dtypes != ColumnSet::BUILTIN {
        let _ = write!(note, " (dtypes: {})", meta.dtypes);
    }
    note
}

/// What `key`'s slot resolved to: one origin when every column resolved alike, else the columns
/// grouped by origin, the largest group last as `other dtypes`:
/// `f32 → [kernel] … add_f32; other dtypes → fallthrough`. The columns of user dtype slots that
/// no crate declared are left out: no tensor of a linked crate carries them.
fn per_column(parts: &[(ColumnSet, Vec<SlotOrigin>)], key: DispatchKey) -> String {
    let undeclared = crate::UserDType::ALL
        .into_iter()
        .filter(|d| d.declaration().is_none())
        .fold(ColumnSet::EMPTY, |set, d| set.union(d.columns()));
    let mut groups: Vec<(ColumnSet, SlotOrigin)> = Vec::new();
    for (columns, origins) in parts {
        let columns = &columns.difference(undeclared);
        if columns.is_empty() {
            continue;
        }
        let origin = origins[key.index()];
        match groups.iter_mut().find(|(_, o)| *o == origin) {
            Some((set, _)) => *set = set.union(*columns),
            None => groups.push((*columns, origin)),
        }
    }
    if let [(_, origin)] = groups.as_slice() {
        return origin.to_string();
    }
    // Ties keep the first, so the order depends only on the columns.
    let largest = (0..groups.len())
        .rev()
        .max_by_key(|&i| groups[i].0.iter().count())
        .unwrap_or(0);
    let other = groups.remove(largest);
    groups.sort_by_key(|(columns, _)| *columns);
    let mut line: Vec<String> = groups
        .iter()
        .map(|(columns, origin)| format!("{columns} → {origin}"))
        .collect();
    line.push(format!("other dtypes → {}", other.1));
    line.join("; ")
}

/// The `conflicts:` section of `dump()`: every pair of registrations that claims one slot, and
/// ops that share a name. Calls that reach them fail; nothing else does.
fn write_conflicts(out: &mut String, ops: &[OpHandle], fallbacks: &[FallbackRegistration]) {
    let mut lines = crate::dtype::conflict_lines();
    for conflict in fallback_conflicts(fallbacks) {
        lines.push(format!("every op: {conflict}"));
    }
    for op in ops {
        match op.conflicts() {
            Ok(conflicts) => {
                for conflict in conflicts {
                    lines.push(format!("{}: {conflict}", op.name()));
                }
            }
            Err(error) => lines.push(format!("{}: {error}", op.name())),
        }
    }
    if lines.is_empty() {
        out.push_str("conflicts: none\n");
        return;
    }
    let _ = writeln!(
        out,
        "conflicts: {} (calls that reach them fail, naming both; nothing else does)",
        lines.len()
    );
    for line in lines {
        let _ = writeln!(out, "  {line}");
    }
}

/// For the table dump: each variant registered at `key` with its verdict, when the key has
/// CPU variants (one plain kernel needs no explanation).
fn variant_notes(
    registrations: &[(KernelKey, KernelMeta)],
    key: DispatchKey,
    policy: &CpuPolicy,
) -> Vec<(KernelMeta, Verdict)> {
    let at_key: Vec<KernelMeta> = registrations
        .iter()
        .filter(|(k, _)| *k == key)
        .map(|(_, meta)| *meta)
        .collect();
    if at_key.iter().all(|meta| meta.cpu.is_empty()) {
        return Vec::new();
    }
    let needs: Vec<CpuFeatures> = at_key.iter().map(|meta| meta.cpu).collect();
    let chosen = policy.choose(&needs);
    at_key
        .into_iter()
        .enumerate()
        .map(|(i, meta)| {
            let verdict = if Some(i) == chosen {
                Verdict::Chosen
            } else {
                policy.verdict(meta.cpu)
            };
            (meta, verdict)
        })
        .collect()
}

/// Computes `op`'s table from its linked registrations without installing it: what its first
/// use costs. For benchmarks of table builds. Not public API.
pub fn compute_table_uncached(op: &OpHandle) {
    op.op.compute_table_uncached();
}
