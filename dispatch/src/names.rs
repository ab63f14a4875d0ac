//! The op name index: every linked op by full name (`namespace::name`), and by bare name (the
//! part after `::`), built once at the first lookup. Full names identify ops for `find_op` and in
//! every message, so two ops may not share one; each table build checks its op's name here (one
//! hash lookup) instead of scanning every op. A bare name finds an op when exactly one linked op
//! has it.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::error::{DispatchError, ErrorKind, Location};
pub(crate) use crate::registry::bare_name;
use crate::registry::{ErasedOp, SWITCHYARD_OPS as OPS};

/// The ops of one full name.
struct Named {
    /// The first of them in the op slice: the one `find_op` returns.
    first: &'static dyn ErasedOp,
    /// Where they were declared, sorted, each location once.
    locations: Vec<Location>,
}

struct Index {
    full: HashMap<&'static str, Named>,
    /// Each bare name's full names, sorted, each once.
    bare: HashMap<&'static str, Vec<&'static str>>,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut full: HashMap<&'static str, Named> = HashMap::with_capacity(OPS.len());
        let mut bare: HashMap<&'static str, Vec<&'static str>> = HashMap::with_capacity(OPS.len());
        for op in OPS.iter() {
            let info = op.info();
            full.entry(info.name)
                .or_insert_with(|| Named {
                    first: *op,
                    locations: Vec::new(),
                })
                .locations
                .push(info.location);
            bare.entry(bare_name(info.name))
                .or_default()
                .push(info.name);
        }
        for named in full.values_mut() {
            named.locations.sort();
            named.locations.dedup();
        }
        for names in bare.values_mut() {
            names.sort_unstable();
            names.dedup();
        }
        Index { full, bare }
    })
}

/// What a name finds.
pub(crate) enum Found {
    /// One op (the first in the op slice, if several share its full name).
    One(&'static dyn ErasedOp),
    /// A bare name that ops of several namespaces have: their full names, sorted.
    Ambiguous(&'static [&'static str]),
    /// Nothing.
    Unknown,
}

/// The op named `name`: by full name, or by bare name where exactly one op has it.
pub(crate) fn find(name: &str) -> Found {
    let index = index();
    if let Some(named) = index.full.get(name) {
        return Found::One(named.first);
    }
    if name.contains("::") {
        return Found::Unknown;
    }
    match index.bare.get(name).map(Vec::as_slice) {
        Some([one]) => Found::One(index.full[one].first),
        Some(several @ [_, _, ..]) => Found::Ambiguous(several),
        _ => Found::Unknown,
    }
}

/// The error that makes every op named `name` uncallable, if ops declared in two places share it.
pub(crate) fn check_unique(name: &'static str) -> Result<(), DispatchError> {
    match index()
        .full
        .get(name)
        .map(|named| named.locations.as_slice())
    {
        Some([first, second, ..]) => Err(DispatchError::new(ErrorKind::DuplicateOp {
            op: name,
            first: *first,
            second: *second,
        })),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::bare_name;

    #[test]
    fn bare_names() {
        assert_eq!(bare_name("switchyard::softmax"), "softmax");
        assert_eq!(bare_name("softmax"), "softmax");
    }
}
