//! A binary that never names `switchyard_backends` (nor a crate that does): the linker drops the
//! standard kernels, as it does for a user who forgets `use switchyard_backends as _;`. What
//! `dump()` flags as having no kernels is exactly what a call reports as "no kernels registered at
//! all", op by op. Only the tensor crate's own registrations remain: derivatives at `Autograd`,
//! the view ops' `CompositeExplicit` kernels and the ops with a body.

use switchyard::ops::{try_add, try_exp, try_relu, try_softmax, try_sum, try_transpose};
use switchyard::{DispatchError, ErrorKind, Tensor};

/// The line that flags an op in `dump()`.
const FLAG: &str = "(no kernels";
/// What a call of such an op says.
const NONE_AT_ALL: &str = "no kernels registered at all";

/// The ops `dump()` flags: the op of each block (a line that starts with a schema) followed by
/// the flag line.
fn flagged_in_dump() -> Vec<String> {
    let dump = switchyard::dump();
    let mut flagged = Vec::new();
    let mut op = None;
    for line in dump.lines() {
        if !line.starts_with(' ') {
            op = line.split('(').next().map(str::to_owned);
        } else if line.trim_start().starts_with(FLAG) {
            flagged.extend(op.clone());
        }
    }
    flagged
}

/// Whether the call's error is the "no kernels at all" one, for `op` itself (not an op its body
/// calls).
fn fails_with_none_at_all(op: &str, result: Result<Tensor, DispatchError>) -> bool {
    let Err(error) = result else { return false };
    let missing =
        matches!(error.kind(), ErrorKind::MissingKernel { op: missed, .. } if *missed == op);
    missing && error.to_string().contains(NONE_AT_ALL)
}

#[test]
fn dump_flags_exactly_the_ops_whose_calls_find_no_kernel_at_all() {
    let x = Tensor::from_vec::<f32>(vec![1.0, -2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let flagged = flagged_in_dump();
    let calls: [(&str, Result<Tensor, DispatchError>); 6] = [
        // Only a derivative at `Autograd` is linked: a call without grad finds nothing.
        ("switchyard::add", try_add(&x, &x)),
        ("switchyard::exp", try_exp(&x)),
        ("switchyard::relu", try_relu(&x)),
        ("switchyard::sum", try_sum(&x)),
        // A `CompositeExplicit` kernel serves every backend.
        ("switchyard::transpose", try_transpose(&x, 0, 1)),
        // A body serves every backend (it fails in the ops it calls, not in itself).
        ("switchyard::softmax", try_softmax(&x, 1)),
    ];
    for (op, result) in calls {
        let none_at_all = fails_with_none_at_all(op, result);
        let in_dump = flagged.iter().any(|f| f == op);
        assert_eq!(
            in_dump, none_at_all,
            "`{op}`: flagged by dump() {in_dump}, a call says \"{NONE_AT_ALL}\" {none_at_all}; \
             flagged: {flagged:?}"
        );
    }
    // The ops above that have only a derivative are flagged, so the comparison was not vacuous.
    for op in [
        "switchyard::add",
        "switchyard::exp",
        "switchyard::relu",
        "switchyard::sum",
    ] {
        assert!(flagged.iter().any(|f| f == op), "{op} not in {flagged:?}");
    }
}
