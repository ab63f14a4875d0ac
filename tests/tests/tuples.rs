//! Ops that return tuples: `-> (Tensor, Tensor)` boxes as `Value::Tuple`, so the op
//! has a schema, can be called boxed, and runs through a boxed fallback.

use std::sync::atomic::{AtomicUsize, Ordering};

use switchyard::{
    DispatchError, DispatchKey, DispatchKeySet, FromValue, OpHandle, Stack, Tensor, Value,
    call_boxed, fallback, include, kernel, op,
};
use switchyard_backends as _;

/// The positive and the negative parts of `x`: `x = pos + neg`.
#[op(name = "tuples::split_signs")]
pub fn split_signs(x: &Tensor) -> (Tensor, Tensor);

#[kernel(op = split_signs, key = CpuNaive)]
fn split_signs_naive(x: &Tensor) -> (Tensor, Tensor) {
    let values = x.as_slice::<f32>().expect("a CPU tensor");
    let pos = Tensor::from_fn(x.shape(), |i| values[i].max(0.0));
    let neg = Tensor::from_fn(x.shape(), |i| values[i].min(0.0));
    (pos, neg)
}

/// Three results of three kinds: the smallest and largest element and the element count.
#[op(name = "tuples::extent")]
pub fn extent(x: &Tensor) -> (f32, f32, usize);

#[kernel(op = extent, key = CpuNaive)]
fn extent_naive(x: &Tensor) -> (f32, f32, usize) {
    let values = x.as_slice::<f32>().expect("a CPU tensor");
    let min = values.iter().copied().fold(f32::INFINITY, f32::min);
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    (min, max, values.len())
}

static BOXED_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Counts the calls it sees and passes them on: what a user's tracing mode does.
#[fallback(key = Custom3)]
fn count_at_custom3(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    BOXED_CALLS.fetch_add(1, Ordering::Relaxed);
    op.redispatch_boxed(keys.below(DispatchKey::Custom3), stack)
}

fn x() -> Tensor {
    Tensor::vector(&[1.0, -2.0, 3.0])
}

#[test]
fn a_tuple_result_has_a_schema() {
    assert_eq!(
        split_signs::handle().schema(),
        "tuples::split_signs(x: Tensor) -> (Tensor, Tensor)"
    );
    assert_eq!(
        extent::handle().schema(),
        "tuples::extent(x: Tensor) -> (float, float, int)"
    );
}

#[test]
fn a_tuple_result_is_returned_typed() {
    let (pos, neg) = split_signs(&x());
    assert_eq!(pos.to_vec::<f32>(), [1.0, 0.0, 3.0]);
    assert_eq!(neg.to_vec::<f32>(), [0.0, -2.0, 0.0]);
    assert_eq!(extent(&x()), (-2.0, 3.0, 3));
}

#[test]
fn a_tuple_result_is_boxed_element_by_element() {
    let mut stack = Stack::from(vec![Value::from(x())]);
    call_boxed("tuples::split_signs", &mut stack).unwrap();
    assert_eq!(stack.len(), 1);
    let result = stack.pop().unwrap();
    assert_eq!(result.kind(), "tuple");
    let Value::Tuple(items) = &result else {
        panic!("expected a tuple, got {result}");
    };
    assert_eq!(items.len(), 2);
    assert_eq!(
        Tensor::from_value(items[0].clone())
            .unwrap()
            .to_vec::<f32>(),
        [1.0, 0.0, 3.0]
    );
    assert_eq!(
        Tensor::from_value(items[1].clone())
            .unwrap()
            .to_vec::<f32>(),
        [0.0, -2.0, 0.0]
    );
    let (pos, neg) = <(Tensor, Tensor)>::from_value(result).unwrap();
    assert_eq!(
        (pos.to_vec::<f32>(), neg.to_vec::<f32>()),
        (vec![1.0, 0.0, 3.0], vec![0.0, -2.0, 0.0])
    );

    let mut stack = Stack::from(vec![Value::from(x())]);
    extent::handle().call_boxed(&mut stack).unwrap();
    let result = stack.pop().unwrap();
    assert_eq!(result.to_string(), "(-2.0, 3.0, 3)");
    assert_eq!(<(f32, f32, usize)>::from_value(result), Ok((-2.0, 3.0, 3)));
}

#[test]
fn a_tuple_result_runs_through_a_boxed_fallback() {
    let _counting = include(DispatchKey::Custom3);
    let before = BOXED_CALLS.load(Ordering::Relaxed);
    let (pos, neg) = split_signs(&x());
    assert_eq!(pos.to_vec::<f32>(), [1.0, 0.0, 3.0]);
    assert_eq!(neg.to_vec::<f32>(), [0.0, -2.0, 0.0]);
    assert_eq!(extent(&x()), (-2.0, 3.0, 3));
    // A boxed call through the fallback too.
    let mut stack = Stack::from(vec![Value::from(x())]);
    call_boxed("tuples::extent", &mut stack).unwrap();
    assert_eq!(
        <(f32, f32, usize)>::from_value(stack.pop().unwrap()),
        Ok((-2.0, 3.0, 3))
    );
    assert_eq!(BOXED_CALLS.load(Ordering::Relaxed) - before, 3);
}
