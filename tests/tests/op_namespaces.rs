//! A crate that declares its own `add`, `softmax` and `view` (no `name`) beside the standard
//! ones: its ops are `op_namespaces::…`, the library's `switchyard::…`, and both work, typed and
//! by name. A bare name is found where one linked op has it, and refused, naming the candidates,
//! where several do.

use switchyard::{
    ErrorKind, FromValue, Stack, Tensor, Value, call_boxed, find_op, kernel, op, op_named, ops,
};
use switchyard_backends as _;

/// Ours subtracts: which `add` ran shows in the values.
#[op]
pub fn add(x: &Tensor, y: &Tensor) -> Tensor;

#[kernel(op = add, key = CpuNaive)]
fn add_naive(x: &Tensor, y: &Tensor) -> Tensor {
    ops::sub(x, y)
}

/// Twice the standard softmax.
#[op]
pub fn softmax(x: &Tensor, dim: isize) -> Tensor {
    ops::mul(&ops::softmax(x, dim), &Tensor::scalar(2.0))
}

/// Not a view at all: the negation.
#[op]
pub fn view(x: &Tensor) -> Tensor {
    ops::neg(x)
}

fn values(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>()
}

fn pair() -> (Tensor, Tensor) {
    (Tensor::vector(&[5.0, 7.0]), Tensor::vector(&[1.0, 2.0]))
}

#[test]
fn typed_calls_reach_each_crates_op() {
    let (x, y) = pair();
    assert_eq!(values(&add(&x, &y)), [4.0, 5.0]);
    assert_eq!(values(&ops::add(&x, &y)), [6.0, 9.0]);
    let standard = values(&ops::softmax(&x, 0));
    let ours = values(&softmax(&x, 0));
    assert_eq!(ours, standard.iter().map(|v| v * 2.0).collect::<Vec<_>>());
    assert_eq!(values(&view(&x)), [-5.0, -7.0]);
    assert_eq!(ops::view(&x, &[2, 1]).shape(), [2, 1]);
}

#[test]
fn each_op_has_its_crates_namespace() {
    let ours = add::handle();
    assert_eq!(ours.name(), "op_namespaces::add");
    assert_eq!(
        (ours.namespace(), ours.bare_name()),
        ("op_namespaces", "add")
    );
    assert_eq!(
        ours.schema(),
        "op_namespaces::add(x: Tensor, y: Tensor) -> Tensor"
    );
    let standard = ops::add::handle();
    assert_eq!(standard.name(), "switchyard::add");
    assert_eq!(standard.namespace(), "switchyard");
    assert_eq!(softmax::handle().name(), "op_namespaces::softmax");
    assert_eq!(view::handle().name(), "op_namespaces::view");
    assert_eq!(ops::view::handle().name(), "switchyard::view");
}

#[test]
fn full_names_find_each_op() {
    for name in [
        "op_namespaces::add",
        "switchyard::add",
        "op_namespaces::softmax",
        "switchyard::softmax",
        "op_namespaces::view",
        "switchyard::view",
    ] {
        let found = find_op(name).unwrap_or_else(|| panic!("find_op({name:?})"));
        assert_eq!(found.name(), name);
        assert_eq!(op_named(name).unwrap().name(), name);
    }
    assert!(find_op("op_namespaces::mul").is_none());
    assert!(find_op("elsewhere::add").is_none());
}

#[test]
fn a_bare_name_is_found_where_one_op_has_it() {
    // Only the library declares `mul`; only this crate declares nothing else of its own.
    assert_eq!(find_op("mul").unwrap().name(), "switchyard::mul");
    let (x, y) = pair();
    let mut stack: Stack<'_> = [Value::from(&x), Value::from(&y)].into_iter().collect();
    call_boxed("mul", &mut stack).unwrap();
    let out = Tensor::from_value(stack.pop().unwrap()).unwrap();
    assert_eq!(values(&out), [5.0, 14.0]);
}

#[test]
fn a_bare_name_several_ops_have_is_refused_naming_them() {
    for bare in ["add", "softmax", "view"] {
        assert!(find_op(bare).is_none(), "{bare}");
        let error = op_named(bare).unwrap_err();
        let ErrorKind::AmbiguousOp { name, candidates } = error.kind() else {
            panic!("{error}")
        };
        assert_eq!(name, bare);
        let ours = format!("op_namespaces::{bare}");
        let standard = format!("switchyard::{bare}");
        assert_eq!(candidates, &[ours.as_str(), standard.as_str()]);
        let text = error.to_string();
        assert!(
            text.starts_with(&format!("op name `{bare}` is ambiguous"))
                && text.contains(&format!("`{ours}`"))
                && text.contains(&format!("`{standard}`"))
                && text.contains("full name"),
            "{text}"
        );
    }
    let (x, y) = pair();
    let mut stack: Stack<'_> = [Value::from(&x), Value::from(&y)].into_iter().collect();
    let error = call_boxed("add", &mut stack).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::AmbiguousOp { .. }),
        "{error}"
    );
}

#[test]
fn boxed_calls_by_full_name_reach_each_op() {
    let (x, y) = pair();
    for (name, expected) in [
        ("op_namespaces::add", [4.0, 5.0]),
        ("switchyard::add", [6.0, 9.0]),
    ] {
        let mut stack: Stack<'_> = [Value::from(&x), Value::from(&y)].into_iter().collect();
        call_boxed(name, &mut stack).unwrap();
        let out = Tensor::from_value(stack.pop().unwrap()).unwrap();
        assert_eq!(values(&out), expected, "{name}");
    }
    let mut stack: Stack<'_> = [Value::from(&x)].into_iter().collect();
    call_boxed("op_namespaces::view", &mut stack).unwrap();
    let out = Tensor::from_value(stack.pop().unwrap()).unwrap();
    assert_eq!(values(&out), [-5.0, -7.0]);
}

#[test]
fn dumps_traces_and_profiles_tell_them_apart() {
    let dump = switchyard::dump();
    for schema in [
        "op_namespaces::softmax(x: Tensor, dim: int) -> Tensor",
        "switchyard::softmax(",
        "op_namespaces::add(",
        "switchyard::add(",
    ] {
        assert!(dump.contains(schema), "{schema} not in\n{dump}");
    }
    let (x, y) = pair();
    let (_, graph) = switchyard::trace(|| (add(&x, &y), ops::add(&x, &y)));
    assert_eq!(graph.op_names(), ["op_namespaces::add", "switchyard::add"]);
    let (_, profile) = switchyard::profile(|| (add(&x, &y), ops::add(&x, &y), ops::mul(&x, &y)));
    assert_eq!(profile.row("op_namespaces::add").unwrap().calls, 1);
    assert_eq!(profile.row("switchyard::add").unwrap().calls, 1);
    // A bare name: found where one op has it, like `find_op`.
    assert_eq!(profile.row("mul").unwrap().calls, 1);
    assert!(profile.row("add").is_none());
}
