//! Op parameters of type `&mut T`: typed calls, `try_`, `redispatch`, boxed calls whose fallback
//! writes the argument (and the caller sees it), errors that leave the caller's value unchanged,
//! `trace`, `#[op(unboxed)]`, and two `&mut` parameters of one type. `Buf` is a small tensor-like
//! handle of the test's own (the engine knows no concrete tensor).

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

use switchyard::boxing::{SharedTensor, TensorValue};
use switchyard::{
    DispatchArg, DispatchError, DispatchKey, DispatchKeySet, ErrorKind, FromValue, OpHandle, Stack,
    ToValue, Value, boxable_tensor, fallback, include, kernel, op,
};

/// An immutable buffer on the CPU.
#[derive(Debug)]
pub struct BufData {
    values: Vec<f32>,
}

impl TensorValue for BufData {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::CPU_NAIVE
    }
    fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buf[{}]", self.values.len())
    }
}

/// A handle to a buffer: writing a `&mut Buf` replaces the handle.
#[derive(Clone, Debug)]
pub struct Buf(Arc<BufData>);

impl Buf {
    fn new(values: &[f32]) -> Buf {
        Buf(Arc::new(BufData {
            values: values.to_vec(),
        }))
    }
    fn values(&self) -> &[f32] {
        &self.0.values
    }
    fn same(&self, other: &Buf) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl SharedTensor for Buf {
    type Shared = BufData;
    fn shared(&self) -> &Arc<BufData> {
        &self.0
    }
    fn from_shared(shared: Arc<BufData>) -> Buf {
        Buf(shared)
    }
}

impl DispatchArg for Buf {
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.0.dispatch_keys()
    }
}
boxable_tensor!(Buf);

fn zip(x: &Buf, y: &Buf, f: impl Fn(f32, f32) -> f32) -> Buf {
    let values: Vec<f32> = x
        .values()
        .iter()
        .zip(y.values())
        .map(|(a, b)| f(*a, *b))
        .collect();
    Buf::new(&values)
}

// ---- an in-place op: writes `x`, returns its new value ----

#[op(name = "mut_args::add_")]
pub fn add_(x: &mut Buf, y: &Buf) -> Buf;

#[kernel(op = add_, key = CpuNaive)]
fn add_naive(x: &mut Buf, y: &Buf) -> Result<Buf, DispatchError> {
    if x.values().len() != y.values().len() {
        return Err(DispatchError::kernel("mut_args::add_", "lengths differ"));
    }
    *x = zip(x, y, |a, b| a + b);
    Ok(x.clone())
}

/// A layer above the backend that redispatches with the `&mut` argument.
#[kernel(op = add_, key = Custom1)]
fn add_doubled(keys: DispatchKeySet, x: &mut Buf, y: &Buf) -> Result<Buf, DispatchError> {
    let below = keys.below(DispatchKey::Custom1);
    add_::redispatch(below, x, y)?;
    add_::redispatch(below, x, y)
}

#[test]
fn a_typed_call_writes_the_callers_argument() {
    let mut x = Buf::new(&[1.0, 2.0]);
    let y = Buf::new(&[10.0, 20.0]);
    let out = add_(&mut x, &y);
    assert_eq!(x.values(), [11.0, 22.0]);
    assert!(out.same(&x), "the kernel returned the new handle");
    assert_eq!(
        add_::handle().schema(),
        "mut_args::add_(x: mut Buf, y: Buf) -> Buf"
    );
}

#[test]
fn try_form_and_redispatch_take_the_mut_argument() {
    let mut x = Buf::new(&[1.0]);
    let y = Buf::new(&[1.0]);
    assert_eq!(try_add_(&mut x, &y).unwrap().values(), [2.0]);
    assert_eq!(x.values(), [2.0]);
    // The kernel failed before writing: the argument is as it was.
    let before = x.clone();
    let err = try_add_(&mut x, &Buf::new(&[1.0, 2.0])).unwrap_err();
    assert!(err.to_string().contains("lengths differ"), "{err}");
    assert!(x.same(&before));
    // A layer that redispatches twice with the same `&mut`.
    let _layer = include(DispatchKey::Custom1);
    add_(&mut x, &y);
    assert_eq!(x.values(), [4.0]);
}

/// A composite body that writes its argument through another op.
#[op(name = "mut_args::double_")]
pub fn double_(x: &mut Buf) -> Buf {
    let copy = x.clone();
    try_add_(x, &copy)
}

#[test]
fn a_composite_body_writes_through_another_op() {
    let mut x = Buf::new(&[1.5]);
    assert_eq!(double_(&mut x).values(), [3.0]);
    assert_eq!(x.values(), [3.0]);
    // Boxed, through the composite.
    let mut stack: Stack<'_> = [x.to_value()].into_iter().collect();
    double_::handle().call_boxed(&mut stack).unwrap();
    assert_eq!(
        Buf::from_value(stack.values()[0].clone()).unwrap().values(),
        [6.0]
    );
}

// ---- a fallback at a mode key that writes the argument's slot ----

#[derive(Clone, Copy, PartialEq, Debug)]
enum Rewrite {
    /// Replaces `x`'s argument slot before redispatching: the kernel sees the new value.
    ArgumentBefore,
    /// Replaces `x`'s written value after the kernel ran.
    WrittenAfter,
    /// Computes the op itself: pops the arguments, pushes the written `x` and the result.
    Itself,
    /// Runs the kernel, then fails: the caller's `x` must stay as it was.
    FailAfter,
    /// Pops the arguments and pushes only a result, forgetting `x`'s written value.
    ForgetWritten,
}

thread_local! {
    static REWRITE: Cell<Rewrite> = const { Cell::new(Rewrite::ArgumentBefore) };
    static SEEN: Cell<usize> = const { Cell::new(0) };
}

#[fallback(key = Mode2)]
fn rewrite(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    SEEN.with(|s| s.set(s.get() + 1));
    let below = keys.below(DispatchKey::Mode2);
    let base = stack.len() - op.arity();
    // What the fallback sees: `x` as its boxed value, like any argument.
    let x = Buf::from_value(stack.values()[base].clone()).expect("x is a Buf");
    match REWRITE.with(Cell::get) {
        Rewrite::ArgumentBefore => {
            stack.values_mut()[base] = Buf::new(&[100.0; 2]).to_value();
            op.redispatch_boxed(below, stack)
        }
        Rewrite::WrittenAfter => {
            op.redispatch_boxed(below, stack)?;
            // The call left `x`'s written value where the arguments began, the result on top.
            assert_eq!(stack.len(), base + 2);
            let written = Buf::from_value(stack.values()[base].clone()).unwrap();
            assert_eq!(written.values(), zip(&x, &x, |a, _| a + 1.0).values());
            stack.values_mut()[base] = Buf::new(&[-1.0, -1.0]).to_value();
            Ok(())
        }
        Rewrite::Itself => {
            let y = Buf::from_value(stack.pop().unwrap()).unwrap();
            stack.pop();
            let sum = zip(&x, &y, |a, b| a * 1000.0 + b);
            stack.push(&sum);
            stack.push(&sum);
            Ok(())
        }
        Rewrite::FailAfter => {
            op.redispatch_boxed(below, stack)?;
            Err(DispatchError::kernel(op.name(), "the mode gave up"))
        }
        Rewrite::ForgetWritten => {
            stack.pop();
            stack.pop();
            stack.push(&x);
            Ok(())
        }
    }
}

fn through_mode(rewrite: Rewrite, x: &mut Buf) -> Result<Buf, DispatchError> {
    REWRITE.with(|r| r.set(rewrite));
    let _mode = include(DispatchKey::Mode2);
    try_add_(x, &Buf::new(&[1.0, 1.0]))
}

#[test]
fn a_fallback_that_rewrites_the_argument_slot_is_seen_by_the_kernel_and_the_caller() {
    let mut x = Buf::new(&[1.0, 2.0]);
    let seen = SEEN.with(Cell::get);
    let out = through_mode(Rewrite::ArgumentBefore, &mut x).unwrap();
    assert_eq!(
        SEEN.with(Cell::get),
        seen + 1,
        "the typed call went through the fallback"
    );
    assert_eq!(x.values(), [101.0, 101.0]);
    assert!(out.same(&x));
}

#[test]
fn a_fallback_may_replace_the_written_value_after_the_kernel() {
    let mut x = Buf::new(&[1.0, 2.0]);
    let out = through_mode(Rewrite::WrittenAfter, &mut x).unwrap();
    assert_eq!(x.values(), [-1.0, -1.0]);
    assert_eq!(out.values(), [2.0, 3.0], "the result is the kernel's");
}

#[test]
fn a_fallback_that_computes_the_op_itself_writes_the_argument() {
    let mut x = Buf::new(&[1.0, 2.0]);
    through_mode(Rewrite::Itself, &mut x).unwrap();
    assert_eq!(x.values(), [1001.0, 2001.0]);
}

#[test]
fn on_error_the_callers_argument_is_unchanged() {
    let mut x = Buf::new(&[1.0, 2.0]);
    let before = x.clone();
    let err = through_mode(Rewrite::FailAfter, &mut x).unwrap_err();
    assert!(err.to_string().contains("the mode gave up"), "{err}");
    assert!(x.same(&before), "nothing half-written");

    let err = through_mode(Rewrite::ForgetWritten, &mut x).unwrap_err();
    assert!(x.same(&before));
    assert!(
        err.to_string().contains("`x`"),
        "the error names the argument whose value is missing: {err}"
    );
}

// ---- boxed calls ----

#[test]
fn a_boxed_call_hands_back_the_written_argument_under_the_result() {
    let x = Buf::new(&[1.0, 2.0]);
    let mut stack = Stack::new();
    stack.push(&x);
    stack.push(Buf::new(&[3.0, 4.0]));
    add_::handle().call_boxed(&mut stack).unwrap();
    assert_eq!(stack.len(), 2, "x as written, then the result");
    let result = Buf::from_value(stack.pop().unwrap()).unwrap();
    let written = Buf::from_value(stack.pop().unwrap()).unwrap();
    assert_eq!(written.values(), [4.0, 6.0]);
    assert!(written.same(&result));
    assert_eq!(
        x.values(),
        [1.0, 2.0],
        "the boxed value was a copy of the handle"
    );

    // By name, through the mode fallback: the stack is the caller's `&mut`.
    REWRITE.with(|r| r.set(Rewrite::ArgumentBefore));
    let _mode = include(DispatchKey::Mode2);
    let mut stack: Stack<'_> = [x.to_value(), Buf::new(&[1.0, 1.0]).to_value()]
        .into_iter()
        .collect();
    switchyard::call_boxed("mut_args::add_", &mut stack).unwrap();
    let written = Buf::from_value(stack.values()[0].clone()).unwrap();
    assert_eq!(written.values(), [101.0, 101.0]);
}

#[test]
fn a_boxed_argument_of_the_wrong_type_is_an_error_naming_it() {
    let mut stack: Stack<'_> = [Value::Int(1), Buf::new(&[1.0]).to_value()]
        .into_iter()
        .collect();
    let err = add_::handle().call_boxed(&mut stack).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::BoxedType { argument: "x", .. }),
        "{err}"
    );
}

#[test]
fn trace_lists_the_written_argument_among_the_outputs() {
    let mut x = Buf::new(&[1.0]);
    let y = Buf::new(&[2.0]);
    let ((), graph) = switchyard::trace(|| {
        let out = add_(&mut x, &y);
        add_(&mut x, &out);
    });
    assert_eq!(
        graph.to_string(),
        "%0 = mut_args::add_(Buf[1], Buf[1]) -> Buf[1], %0\n\
         %1 = mut_args::add_(%0, %0) -> Buf[1], %1\n"
    );
}

// ---- two `&mut` parameters of one type ----

#[op(name = "mut_args::swap")]
pub fn swap(a: &mut Buf, b: &mut Buf);

#[kernel(op = swap, key = CpuNaive)]
fn swap_naive(a: &mut Buf, b: &mut Buf) {
    std::mem::swap(a, b);
}

#[test]
fn two_mut_parameters_of_one_type() {
    let (mut a, mut b) = (Buf::new(&[1.0]), Buf::new(&[2.0]));
    swap(&mut a, &mut b);
    assert_eq!(
        (a.values(), b.values()),
        ([2.0].as_slice(), [1.0].as_slice())
    );

    // Boxed: both written values, in parameter order, then the result (`()` boxes as `None`).
    let mut stack: Stack<'_> = [a.to_value(), b.to_value()].into_iter().collect();
    swap::handle().call_boxed(&mut stack).unwrap();
    assert_eq!(stack.len(), 3);
    assert!(matches!(stack.values()[2], Value::None));
    assert_eq!(
        Buf::from_value(stack.values()[0].clone()).unwrap().values(),
        [1.0]
    );
    assert_eq!(
        Buf::from_value(stack.values()[1].clone()).unwrap().values(),
        [2.0]
    );

    // Through a fallback that passes the call on unchanged.
    REWRITE.with(|r| r.set(Rewrite::FailAfter));
    let _mode = include(DispatchKey::Mode2);
    let err = try_swap(&mut a, &mut b).unwrap_err();
    assert!(err.to_string().contains("the mode gave up"));
    assert_eq!(
        (a.values(), b.values()),
        ([2.0].as_slice(), [1.0].as_slice())
    );
}

// ---- `#[op(unboxed)]`: a `&mut` of a type with no boxed form ----

/// Counts calls; has no boxed form.
#[derive(Debug)]
pub struct Counter {
    calls: usize,
}

impl DispatchArg for Counter {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::EMPTY
    }
}

#[op(name = "mut_args::count", unboxed)]
pub fn count(x: &Buf, counter: &mut Counter) -> usize;

#[kernel(op = count, key = CpuNaive)]
fn count_naive(x: &Buf, counter: &mut Counter) -> usize {
    counter.calls += 1;
    x.values().len()
}

#[test]
fn an_unboxed_op_takes_a_mut_of_an_unboxable_type() {
    let mut counter = Counter { calls: 0 };
    let x = Buf::new(&[1.0, 2.0, 3.0]);
    assert_eq!(count(&x, &mut counter), 3);
    assert_eq!(try_count(&x, &mut counter), Ok(3));
    assert_eq!(counter.calls, 2);
}
