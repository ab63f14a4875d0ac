//! `#[fallback]` takes its key in either spelling or as a path, like `#[kernel]`.

use switchyard::{
    DispatchError, DispatchKey, DispatchKeySet, OpHandle, SlotOrigin, Stack, fallback, find_op,
};
use switchyard_backends as _;

pub const MY_LAYER: DispatchKey = DispatchKey::Custom2;

#[fallback(key = CUSTOM1)]
fn screaming(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    op.redispatch_boxed(keys.below(DispatchKey::Custom1), stack)
}

#[fallback(key = crate::MY_LAYER)]
fn by_path(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    op.redispatch_boxed(keys.below(MY_LAYER), stack)
}

#[test]
fn every_spelling_registers_for_every_op() {
    let dump = switchyard::dump();
    assert!(
        dump.contains("fallback Custom1              screaming from fallback_keys"),
        "{dump}"
    );
    assert!(
        dump.contains("fallback Custom2              by_path from fallback_keys"),
        "{dump}"
    );
    for op in switchyard::ops() {
        assert!(
            matches!(op.slot(DispatchKey::Custom1).unwrap(), SlotOrigin::Fallback(m) if m.name == "screaming")
        );
        assert!(
            matches!(op.slot(DispatchKey::Custom2).unwrap(), SlotOrigin::Fallback(m) if m.name == "by_path")
        );
    }
    // And both pass calls through.
    let x = switchyard::Tensor::vector(&[2.0]);
    let _layers = switchyard::include(DispatchKeySet::CUSTOM1 | DispatchKeySet::CUSTOM2);
    assert_eq!(switchyard::ops::mul(&x, &x).to_vec::<f32>(), [4.0]);
    assert!(find_op("mul").is_some());
}
