//! Redispatch chains through two layers: typed, boxed, and mixed.
//!
//! `layers` answers the path its call took, e.g. `c1>c2>naive`. Typed kernels at `Custom1` and
//! `Custom2` take the call's keys and redispatch below their own key; boxed fallbacks at `Custom3`
//! and `Custom4` (registered at run time, so no other test sees them) redispatch boxed and prefix
//! the result they get back.

use switchyard::{
    DispatchKey, DispatchKeySet, OpHandle, Stack, Tensor, Value, include, kernel, op,
    register_fallback,
};
use switchyard_backends as _;

#[op(name = "redispatch::layers")]
pub fn layers(x: &Tensor) -> String;

#[kernel(op = "layers", key = CpuNaive)]
fn layers_naive(x: &Tensor) -> String {
    let _ = x;
    "naive".into()
}

#[kernel(op = "layers", key = Custom1)]
fn layers_c1(keys: DispatchKeySet, x: &Tensor) -> switchyard::Result<String> {
    Ok(format!(
        "c1>{}",
        layers::redispatch(keys.below(DispatchKey::Custom1), x)?
    ))
}

#[kernel(op = "layers", key = Custom2)]
fn layers_c2(keys: DispatchKeySet, x: &Tensor) -> String {
    format!(
        "c2>{}",
        layers::redispatch(keys.below(DispatchKey::Custom2), x).unwrap()
    )
}

/// A boxed layer: redispatches boxed below `key`, then prefixes the string result with `tag`.
fn boxed_layer(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
    key: DispatchKey,
    tag: &str,
) -> switchyard::Result<()> {
    // Only ops with a string result are rewritten; others pass through untouched.
    op.redispatch_boxed(keys.below(key), stack)?;
    if op.name() == "redispatch::layers" {
        match stack.pop() {
            Some(Value::Str(below)) => stack.push(Value::Str(format!("{tag}>{below}"))),
            other => panic!("unexpected result {other:?}"),
        }
    }
    Ok(())
}

fn fb3(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> switchyard::Result<()> {
    boxed_layer(op, keys, stack, DispatchKey::Custom3, "fb3")
}

fn fb4(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> switchyard::Result<()> {
    boxed_layer(op, keys, stack, DispatchKey::Custom4, "fb4")
}

fn boxed_call(x: &Tensor) -> String {
    let mut stack = Stack::new();
    stack.push(x);
    layers::handle().call_boxed(&mut stack).unwrap();
    match stack.pop() {
        Some(Value::Str(s)) => s,
        other => panic!("unexpected result {other:?}"),
    }
}

#[test]
fn chains_through_two_layers() {
    let _fb3 = register_fallback(DispatchKey::Custom3, "fb3", fb3).unwrap();
    let _fb4 = register_fallback(DispatchKey::Custom4, "fb4", fb4).unwrap();
    let x = Tensor::vector(&[1.0]);
    assert_eq!(layers(&x), "naive");

    let cases = [
        // typed → typed → typed
        (DispatchKey::Custom1, DispatchKey::Custom2, "c1>c2>naive"),
        // typed → boxed → typed
        (DispatchKey::Custom1, DispatchKey::Custom3, "c1>fb3>naive"),
        // boxed → boxed → typed
        (DispatchKey::Custom3, DispatchKey::Custom4, "fb3>fb4>naive"),
    ];
    for (upper, lower, path) in cases {
        let _layers = include(upper.set() | lower.set());
        assert_eq!(layers(&x), path, "typed call, {upper} over {lower}");
        assert_eq!(boxed_call(&x), path, "boxed call, {upper} over {lower}");
    }
    // Three layers, mixed both ways.
    let _all = include(
        DispatchKey::Custom1.set() | DispatchKey::Custom3.set() | DispatchKey::Custom2.set(),
    );
    assert_eq!(layers(&x), "c1>c2>fb3>naive");
    assert_eq!(boxed_call(&x), "c1>c2>fb3>naive");
}
