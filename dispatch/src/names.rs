//! The op name index: every linked op by name, built once at the first lookup. Op names identify
//! ops for `find_op` and in every message, so two ops may not share one; each table build checks
//! its op's name here (one hash lookup) instead of scanning every op.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::error::{DispatchError, ErrorKind, Location};
use crate::registry::{ErasedOp, SWITCHYARD_OPS as OPS};

/// The ops of one name.
struct Named {
    /// The first of them in the op slice: the one `find_op` returns.
    first: &'static dyn ErasedOp,
    /// Where they were declared, sorted, each location once.
    locations: Vec<Location>,
}

fn index() -> &'static HashMap<&'static str, Named> {
    static INDEX: OnceLock<HashMap<&'static str, Named>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index: HashMap<&'static str, Named> = HashMap::with_capacity(OPS.len());
        for op in OPS {
            let info = op.info();
            index
                .entry(info.name)
                .or_insert_with(|| Named {
                    first: *op,
                    locations: Vec::new(),
                })
                .locations
                .push(info.location);
        }
        for named in index.values_mut() {
            named.locations.sort();
            named.locations.dedup();
        }
        index
    })
}

/// The op named `name`, if one is linked (the first in the op slice, if several are).
pub(crate) fn find(name: &str) -> Option<&'static dyn ErasedOp> {
    index().get(name).map(|named| named.first)
}

/// The error that makes every op named `name` uncallable, if ops declared in two places share it.
pub(crate) fn check_unique(name: &'static str) -> Result<(), DispatchError> {
    match index().get(name).map(|named| named.locations.as_slice()) {
        Some([first, second, ..]) => Err(DispatchError::new(ErrorKind::DuplicateOp {
            op: name,
            first: *first,
            second: *second,
        })),
        _ => Ok(()),
    }
}
