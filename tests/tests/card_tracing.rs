//! The design card verbatim: a user crate's `#[fallback(key = Tracing)]` and the library's own
//! `switchyard::trace` / `switchyard::profile` in one binary. The built-in modes use keys of their
//! own (`BuiltinTrace`, `BuiltinProfile`), so the keys the docs offer users stay free.

use std::cell::RefCell;

use switchyard::ops::{add, mean, mul};
use switchyard::{DispatchError, DispatchKey, DispatchKeySet, OpHandle, Stack, Tensor, fallback};
use switchyard_backends as _;

thread_local! {
    static RECORDED: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

fn record(name: &'static str, _stack: &Stack<'_>) {
    RECORDED.with(|r| r.borrow_mut().push(name));
}

// The card's example, verbatim but for the function name (`trace` is imported above).
#[fallback(key = Tracing)]
fn trace_calls(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    record(op.name(), stack);
    op.redispatch_boxed(keys.below(DispatchKey::Tracing), stack)
}

fn recorded() -> Vec<&'static str> {
    RECORDED.with(|r| r.borrow().clone())
}

#[test]
fn a_user_tracing_fallback_breaks_no_op_when_tracing_is_off() {
    let x = Tensor::vector(&[1.0, 2.0]);
    assert_eq!(mul(&x, &x).to_vec::<f32>(), [1.0, 4.0]);
    assert_eq!(
        switchyard::ops::try_mean(&x).unwrap().to_vec::<f32>(),
        [1.5]
    );
    assert!(recorded().is_empty(), "Tracing is not on: nothing recorded");
}

#[test]
fn the_user_fallback_runs_under_include_tracing() {
    let x = Tensor::vector(&[1.0, 2.0]);
    let _on = switchyard::include(DispatchKey::Tracing);
    assert_eq!(mean(&mul(&x, &x)).to_vec::<f32>(), [2.5]);
    assert_eq!(recorded(), ["switchyard::mul", "switchyard::mean"]);
}

#[test]
fn builtin_trace_and_profile_work_beside_it() {
    let x = Tensor::vector(&[1.0, 2.0]);
    let (value, graph) = switchyard::trace(|| mean(&add(&x, &x)));
    assert_eq!(value.to_vec::<f32>(), [3.0]);
    let text = graph.to_string();
    assert!(text.contains("add(") && text.contains("mean("), "{text}");
    let (_, profile) = switchyard::profile(|| mul(&x, &x));
    assert_eq!(profile.row("mul").map(|r| r.calls), Some(1));
    assert!(
        recorded().is_empty(),
        "the built-in modes do not enter the user's key"
    );
}

#[test]
fn both_at_once_see_every_call() {
    let x = Tensor::vector(&[1.0, 2.0]);
    let _on = switchyard::include(DispatchKey::Tracing);
    let (_, graph) = switchyard::trace(|| mul(&x, &x));
    assert!(graph.to_string().contains("mul("), "{graph}");
    assert_eq!(recorded(), ["switchyard::mul"]);
}

#[test]
fn builtin_keys_are_the_librarys() {
    // The built-in modes' keys sit above every key offered to users, and are named as such.
    for key in [DispatchKey::BuiltinTrace, DispatchKey::BuiltinProfile] {
        assert!(key.is_builtin(), "{key}");
        assert!(key > DispatchKey::Profiler && key > DispatchKey::Tracing);
    }
    assert!(!DispatchKey::Tracing.is_builtin());
    let err = switchyard::register_fallthrough(DispatchKey::BuiltinTrace).unwrap_err();
    assert!(
        err.to_string()
            .contains("`BuiltinTrace` is the library's own key"),
        "{err}"
    );
}
