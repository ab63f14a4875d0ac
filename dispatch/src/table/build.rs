//! Computing an op's table: its registrations gathered, resolved (`resolve.rs`) and laid out for
//! the hot path. Pure: nothing here publishes or locks.

use crate::alias::{AliasKey, KernelKey};
use crate::error::DispatchError;
use crate::key::{DispatchKey, NUM_KEYS};
use crate::names;
use crate::origin::{KernelMeta, SlotOrigin};
use crate::registry::{Global, KernelRegistration, SWITCHYARD_FALLBACKS};
use crate::resolve::{Registrations, resolve};
use crate::table::{OpTable, RuntimeOp, SLOTS, Table};

impl<F: Copy> Table<F> {
    fn empty() -> Self {
        Table {
            mask: 0,
            slots: [None; SLOTS],
            boxed: [None; NUM_KEYS],
            origins: [SlotOrigin::Missing; NUM_KEYS],
            undefined: Ok(None),
            conflicts: Vec::new(),
            error: None,
        }
    }

    /// A table whose every call reports `error` (its mask is empty, so every call goes cold).
    fn failed(error: DispatchError) -> Self {
        Table {
            error: Some(error),
            ..Table::empty()
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
        let (fallthrough, fallbacks) = match live {
            Some((op, global)) => {
                kernels.extend(op.kernels.iter().map(|(_, r)| *r));
                let fallthrough = op.fallthrough.iter().map(|(_, k, m)| (*k, *m)).collect();
                (fallthrough, global.all_fallbacks())
            }
            None => (Vec::new(), SWITCHYARD_FALLBACKS.to_vec()),
        };
        let resolution = resolve(Registrations {
            kernels,
            fallthrough,
            fallbacks,
            via_boxed: self.boxing.map(|b| b.via_boxed),
        });
        let mut table = Table::empty();
        for key in DispatchKey::ALL {
            let slot = resolution.slots[key.index()];
            // A conflict stays in the mask with no kernel: calls that reach it go cold and fail.
            if slot.origin != SlotOrigin::Fallthrough {
                table.mask |= key.set().bits();
            }
            table.slots[key.index()] = slot.kernel;
            table.boxed[key.index()] = slot.boxed;
            table.origins[key.index()] = slot.origin;
        }
        table.undefined = resolution.undefined;
        table.conflicts = resolution.conflicts;
        table
    }
}
