//! Computing an op's table: its registrations gathered, resolved (`resolve.rs`) once per group of
//! dtype columns that the same registrations serve, and laid out for the hot path. Pure: nothing
//! here publishes or locks.

use std::sync::OnceLock;

use crate::alias::{AliasKey, KernelKey};
use crate::dtype::{ColumnSet, DTypeColumn, NUM_COLUMNS};
use crate::error::DispatchError;
use crate::key::{DispatchKey, NUM_KEYS};
use crate::names;
use crate::origin::{KernelMeta, SlotOrigin};
use crate::registry::{Global, KernelRegistration, SWITCHYARD_FALLBACKS};
use crate::resolve::{FallbacksByKey, Registrations, Resolution, fallbacks_by_key, resolve};
use crate::table::{OpTable, Part, RuntimeOp, SLOTS, Table};

impl<F: Copy> Table<F> {
    /// A table with no slots filled and these parts.
    fn empty(parts: Vec<Part<F>>) -> Self {
        Table {
            masks: [0; NUM_COLUMNS],
            slots: [[None; SLOTS]; NUM_COLUMNS],
            part_of: [0; NUM_COLUMNS],
            parts,
            conflicts: Vec::new(),
            error: None,
        }
    }

    /// A table whose every call reports `error` (its masks are empty, so every call goes cold).
    fn failed(error: DispatchError) -> Self {
        let nothing = Part {
            columns: ColumnSet::ALL,
            boxed: [None; SLOTS],
            origins: [SlotOrigin::Missing; NUM_KEYS],
            undefined: Ok(None),
        };
        Table {
            error: Some(error),
            ..Table::empty(vec![nothing])
        }
    }

    /// Lays out `resolution`, the resolution of `columns`, as the table's next part.
    fn install(&mut self, columns: ColumnSet, resolution: Resolution<F>) {
        let part = u8::try_from(self.parts.len()).expect("at most one part per column");
        let mut mask = 0;
        let mut slots = [None; SLOTS];
        let mut boxed = [None; SLOTS];
        let mut origins = [SlotOrigin::Missing; NUM_KEYS];
        for key in DispatchKey::ALL {
            let slot = resolution.slots[key.index()];
            // A conflict stays in the mask with no kernel: calls that reach it go cold and fail.
            if slot.origin != SlotOrigin::Fallthrough {
                mask |= 1 << key.index();
            }
            slots[key.index()] = slot.kernel;
            boxed[key.index()] = slot.boxed;
            origins[key.index()] = slot.origin;
        }
        for column in columns.iter() {
            self.masks[column.index()] = mask;
            self.slots[column.index()] = slots;
            self.part_of[column.index()] = part;
        }
        self.parts.push(Part {
            columns,
            boxed,
            origins,
            undefined: resolution.undefined,
        });
        // A conflict in several columns is one conflict.
        for conflict in resolution.conflicts {
            if !self.conflicts.contains(&conflict) {
                self.conflicts.push(conflict);
            }
        }
    }
}

impl<F: Copy + Send + Sync + 'static> OpTable<F> {
    /// The table of the linked registrations plus, when given, the runtime ones (the op's and
    /// the global fallbacks).
    #[cold]
    pub(super) fn compute(&'static self, live: Option<(&RuntimeOp<F>, &Global)>) -> Table<F> {
        // Op names identify ops for `find_op` and in every message, so two ops may not share one.
        if let Err(error) = names::check_unique(self.info.name) {
            return Table::failed(error);
        }
        let mut kernels: Vec<KernelRegistration<F>> = self.kernels.iter().copied().collect();
        kernels.extend(self.composite.map(|kernel| {
            KernelRegistration::new(
                KernelKey::Alias(AliasKey::CompositeImplicit),
                kernel,
                KernelMeta::new("(the op's body)", self.info.location),
            )
        }));
        let linked_fallbacks;
        let (fallthrough, fallbacks): (Vec<_>, &FallbacksByKey) = match live {
            Some((op, global)) => {
                kernels.extend(op.kernels.iter().map(|(_, r)| *r));
                let fallthrough = op.fallthrough.iter().map(|(_, k, m)| (*k, *m)).collect();
                linked_fallbacks = fallbacks_by_key(&global.all_fallbacks());
                (fallthrough, &linked_fallbacks)
            }
            None => (Vec::new(), linked_fallbacks_by_key()),
        };
        // Fallbacks and fallthroughs serve every column; a column's kernels are those that serve
        // it. Columns served by the same kernels resolve once (usually all of them together).
        let groups = column_groups(kernels);
        let mut table = Table::empty(Vec::with_capacity(groups.len()));
        for (columns, serving) in groups {
            let resolution = resolve(Registrations {
                kernels: serving,
                fallthrough: &fallthrough,
                fallbacks,
                via_boxed: self.boxing.map(|b| b.via_boxed),
            });
            table.install(columns, resolution);
        }
        table
    }
}

/// The linked fallbacks by key: the same for every op, so sorted once per process.
fn linked_fallbacks_by_key() -> &'static FallbacksByKey {
    static BY_KEY: OnceLock<FallbacksByKey> = OnceLock::new();
    BY_KEY.get_or_init(|| fallbacks_by_key(&SWITCHYARD_FALLBACKS))
}

/// The columns, grouped by the registrations that serve them: each group's columns and those
/// registrations. Every column is in exactly one group.
fn column_groups<F: Copy>(
    kernels: Vec<KernelRegistration<F>>,
) -> Vec<(ColumnSet, Vec<KernelRegistration<F>>)> {
    // The common case, every kernel serving the same columns (none declaring `dtypes`: the
    // built-in ones): those columns and the others, which no kernel serves, found without
    // comparing column by column.
    let first = kernels.first().map_or(ColumnSet::ALL, |r| r.meta().dtypes);
    if kernels.iter().all(|r| r.meta().dtypes == first) {
        let rest = ColumnSet::ALL.difference(first);
        if rest.is_empty() {
            return vec![(first, kernels)];
        }
        return vec![(first, kernels), (rest, Vec::new())];
    }
    // Two columns are served alike when every kernel serves both or neither.
    let mut groups: Vec<(ColumnSet, Vec<bool>)> = Vec::new();
    for column in DTypeColumn::ALL {
        let serving: Vec<bool> = kernels
            .iter()
            .map(|r| r.meta().dtypes.has(column))
            .collect();
        match groups.iter_mut().find(|(_, s)| *s == serving) {
            Some((columns, _)) => *columns = columns.union(column.set()),
            None => groups.push((column.set(), serving)),
        }
    }
    groups
        .into_iter()
        .map(|(columns, serving)| {
            let serving = kernels
                .iter()
                .zip(serving)
                .filter_map(|(r, serves)| serves.then_some(*r))
                .collect();
            (columns, serving)
        })
        .collect()
}
