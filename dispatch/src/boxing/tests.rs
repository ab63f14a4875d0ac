//! The stack (inline values, spilling) and lent tensors on it: reference counts, and every way a
//! value leaves a stack. These run under Miri too (`cargo +nightly miri test -p
//! switchyard-dispatch --lib boxing`), which checks the stack's and the lending's unsafe code: no
//! value or count is dropped twice or leaked, no slot read uninitialised, no borrow outlives its
//! lender.

use std::fmt;
use std::sync::Arc;

use super::stack::INLINE;
use super::{BoxedTensor, Held, SharedTensor, Stack, TensorValue, ToValue, Unbox, Value};
use crate::key::DispatchKeySet;

#[derive(Debug)]
struct Grid(usize);

impl TensorValue for Grid {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::CPU_NAIVE
    }
    fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Grid[{}]", self.0)
    }
}

/// Another shared value type.
#[derive(Debug)]
struct Cube;

impl TensorValue for Cube {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::CPU_NAIVE
    }
    fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cube")
    }
}

#[derive(Clone, Debug)]
struct GridTensor(Arc<Grid>);

impl SharedTensor for GridTensor {
    type Shared = Grid;
    fn shared(&self) -> &Arc<Grid> {
        &self.0
    }
    fn from_shared(shared: Arc<Grid>) -> Self {
        GridTensor(shared)
    }
}

crate::boxable_tensor!(GridTensor);

/// A second handle type over the same shared value: a value lent as one is never handed out as
/// the other.
#[derive(Clone, Debug)]
struct OtherHandle(Arc<Grid>);

impl SharedTensor for OtherHandle {
    type Shared = Grid;
    fn shared(&self) -> &Arc<Grid> {
        &self.0
    }
    fn from_shared(shared: Arc<Grid>) -> Self {
        OtherHandle(shared)
    }
}

crate::boxable_tensor!(OtherHandle);

fn grid(n: usize) -> GridTensor {
    GridTensor(Arc::new(Grid(n)))
}

fn count(t: &GridTensor) -> usize {
    Arc::strong_count(&t.0)
}

#[test]
fn a_lent_tensor_comes_back_as_the_lenders_own_reference_with_no_count() {
    let (x, y) = (grid(1), grid(2));
    let mut stack = Stack::new();
    stack.push_lent(&x);
    stack.push_lent(&y);
    assert_eq!((count(&x), count(&y)), (1, 1), "lending takes no count");
    assert_eq!(stack.values()[0].to_string(), "Grid[1]");
    assert_eq!(stack.values()[1].dispatch_keys(), DispatchKeySet::CPU_NAIVE);
    assert!(
        stack.pop_lent::<OtherHandle>().is_none(),
        "lent as another type"
    );
    let back = stack
        .pop_lent::<GridTensor>()
        .expect("lent as a GridTensor");
    assert!(std::ptr::eq(back, &y), "the lender's own reference");
    assert!(std::ptr::eq(stack.pop_lent::<GridTensor>().unwrap(), &x));
    assert!(stack.is_empty());
    assert_eq!((count(&x), count(&y)), (1, 1));
}

#[test]
fn a_value_that_leaves_the_stack_is_owned() {
    let x = grid(3);
    let mut stack = Stack::new();
    stack.push_lent(&x);
    stack.push_lent(&x);
    stack.push_lent(&x);
    // Popped: owned, one count.
    let popped = stack.pop().unwrap();
    assert_eq!(count(&x), 2);
    // Cloned: owned.
    let cloned = stack.values()[0].clone();
    let whole = stack.clone();
    assert_eq!(count(&x), 5);
    // Handed out to rewrite: both left are owned first.
    let taken = std::mem::replace(&mut stack.values_mut()[0], Value::None);
    assert_eq!(count(&x), 7);
    drop(stack);
    assert_eq!(
        count(&x),
        6,
        "the owned value left on the stack is released"
    );
    // Unboxed owned: the count moves into the handle.
    let Value::Tensor(boxed) = taken else {
        panic!("a tensor")
    };
    let shared = boxed.downcast::<Grid>().unwrap();
    assert!(Arc::ptr_eq(&shared, &x.0));
    drop((popped, cloned, whole, shared));
    assert_eq!(count(&x), 1);
}

#[test]
fn values_that_outlive_their_stack_stay_valid() {
    let kept: Vec<Value> = {
        let x = grid(4);
        let mut stack = Stack::new();
        stack.push_lent(&x);
        stack.push_lent(&x);
        let first = stack.pop().unwrap();
        let second = stack.values_mut()[0].clone();
        vec![first, second]
        // `x` is dropped here; the values hold their own counts.
    };
    for value in &kept {
        assert_eq!(value.to_string(), "Grid[4]");
        assert_eq!(
            value
                .as_tensor()
                .and_then(BoxedTensor::downcast_ref::<Grid>)
                .unwrap()
                .0,
            4
        );
    }
}

#[test]
fn lent_values_spill_truncate_and_drop_without_counts() {
    let x = grid(5);
    let mut stack = Stack::new();
    for n in 0..3 {
        stack.push(i64::from(n));
        stack.push_lent(&x);
    }
    stack.push("spills");
    stack.push_lent(&x);
    assert_eq!(stack.len(), 8);
    assert_eq!(count(&x), 1);
    // Spilled: a lent value is popped owned.
    assert!(stack.pop_lent::<GridTensor>().is_none());
    let owned = stack.pop().unwrap();
    assert_eq!(count(&x), 2);
    stack.truncate(3);
    assert_eq!(stack.len(), 3);
    assert_eq!(count(&x), 2);
    stack.clear();
    drop(owned);
    assert_eq!(count(&x), 1);
    let mut inline = Stack::new();
    inline.push_lent(&x);
    inline.push("x");
    inline.truncate(0);
    inline.push_lent(&x);
    drop(inline);
    assert_eq!(count(&x), 1);
}

#[test]
fn a_reference_argument_is_taken_lent_or_owned() {
    let x = grid(6);
    let other = OtherHandle(Arc::clone(&x.0));
    let mut stack = Stack::new();
    stack.push(x.to_value());
    <&GridTensor as Unbox<'_>>::lend(&&x, &mut stack);
    assert_eq!(
        count(&x),
        3,
        "the pushed value owns a count, the lent one none"
    );
    let lent = <&GridTensor as Unbox<'_>>::take(&mut stack).unwrap();
    assert!(matches!(lent, Held::Lent(t) if std::ptr::eq(t, &x)));
    {
        let mut owned = <&GridTensor as Unbox<'_>>::take(&mut stack).unwrap();
        assert!(matches!(owned, Held::Owned(_)));
        assert!(Arc::ptr_eq(&<&GridTensor>::unbox(&mut owned).0, &x.0));
    }
    assert_eq!(count(&x), 2);
    // A lent value of another handle type is taken owned.
    stack.push_lent(&other);
    assert!(matches!(
        <&GridTensor as Unbox<'_>>::take(&mut stack),
        Ok(Held::Owned(_))
    ));
    assert_eq!(count(&x), 2);
}

#[test]
fn a_stack_with_lent_values_may_move_to_another_thread_within_the_borrow() {
    let x = grid(7);
    let lender = &x;
    let mut stack = Stack::new();
    stack.push_lent(lender);
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                assert!(std::ptr::eq(
                    stack.pop_lent::<GridTensor>().unwrap(),
                    lender
                ));
            })
            .join()
            .unwrap();
    });
    assert_eq!(count(&x), 1);
}

#[test]
fn a_tensor_is_popped_where_it_lies_owned_or_lent() {
    let x = grid(8);
    let mut stack = Stack::new();
    // An owned value: its count moves into the `Arc`.
    stack.push(x.clone().into_value());
    assert_eq!(count(&x), 2, "moved in: the clone's count, no other");
    assert!(stack.pop_tensor::<Cube>().is_none(), "not a `Cube`");
    assert_eq!(stack.len(), 1);
    let owned = stack.pop_tensor::<Grid>().unwrap();
    assert!(stack.is_empty());
    assert_eq!(count(&x), 2);
    drop(owned);
    assert_eq!(count(&x), 1);
    // A lent one takes a count.
    stack.push_lent(&x);
    let taken = stack.pop_tensor::<Grid>().unwrap();
    assert_eq!(count(&x), 2);
    drop(taken);
    // As the generated code takes them: a `&T` argument from an owned value, and a result.
    stack.push(x.to_value());
    {
        let mut holder = <&GridTensor as Unbox<'_>>::take(&mut stack).unwrap();
        assert!(matches!(holder, Held::Owned(_)));
        assert!(Arc::ptr_eq(&<&GridTensor>::unbox(&mut holder).0, &x.0));
    }
    assert_eq!(count(&x), 1);
    stack.push(x.clone().into_value());
    let result = <GridTensor as super::BoxedResult>::unboxed_from(&mut stack).unwrap();
    assert!(Arc::ptr_eq(&result.0, &x.0));
    drop(result);
    // Spilled: left to the general path.
    let mut spilled = Stack::from(vec![x.to_value()]);
    assert!(spilled.pop_tensor::<Grid>().is_none());
    assert!(spilled.pop().is_some());
    assert_eq!(count(&x), 1);
}

// ---- the stack ----

fn ints(stack: &Stack<'_>) -> Vec<i64> {
    stack
        .values()
        .iter()
        .map(|v| match v {
            Value::Int(i) => *i,
            other => panic!("not an int: {other}"),
        })
        .collect()
}

#[test]
fn values_past_the_inline_ones_spill_in_order() {
    let mut stack = Stack::new();
    for i in 0..20 {
        stack.push(i);
        assert_eq!(stack.len(), usize::try_from(i).unwrap() + 1);
    }
    assert_eq!(ints(&stack), (0..20).collect::<Vec<_>>());
    for i in (0..20).rev() {
        assert!(matches!(stack.pop(), Some(Value::Int(n)) if n == i));
    }
    assert!(stack.pop().is_none());
    assert!(stack.is_empty());
    stack.push(7);
    assert_eq!(ints(&stack), [7]);
}

#[test]
fn strings_are_dropped_once_inline_spilled_and_cleared() {
    // Values with heap memory: a double drop or a leak shows under Miri (and ASan).
    let mut stack = Stack::new();
    for n in 0..INLINE {
        stack.push(format!("v{n}"));
    }
    let snapshot = stack.clone();
    stack.push("spills");
    assert_eq!(stack.len(), INLINE + 1);
    assert_eq!(snapshot.len(), INLINE);
    assert_eq!(stack.top(2)[0].to_string(), format!("\"v{}\"", INLINE - 1));
    stack.clear();
    assert!(stack.is_empty());
    let mut other = snapshot.clone();
    other.values_mut()[0] = Value::Str("replaced".into());
    assert_eq!(other.values()[0].to_string(), "\"replaced\"");
    assert_eq!(
        other.pop().unwrap().to_string(),
        format!("\"v{}\"", INLINE - 1)
    );
    drop(other);
    drop(snapshot);
}

#[test]
fn a_spilled_stack_reads_no_inline_slot() {
    // Spilled, the inline slots are uninitialised: every in-place read must miss them, even with
    // the very value it reads on top of the stack (it is popped whole instead).
    let x = grid(9);
    let mut stack = Stack::from(vec![Value::Int(1), Value::Int(2)]);
    assert!(stack.pop_read(Value::as_plain).is_none());
    stack.push_lent(&x);
    assert!(stack.pop_lent::<GridTensor>().is_none());
    assert!(stack.pop_tensor::<Grid>().is_none());
    for n in 0..8 {
        stack.push(n);
    }
    assert!(stack.pop_read(Value::as_plain).is_none());
    assert_eq!(stack.len(), 11);
    assert!(matches!(stack.pop(), Some(Value::Int(7))));
    assert_eq!(count(&x), 1);
}

#[test]
fn a_stack_from_a_vec_or_an_iterator_holds_its_values() {
    let from_vec = Stack::from(vec![Value::Int(1), Value::Str("x".into())]);
    assert_eq!(from_vec.len(), 2);
    let collected: Stack<'_> = (0..10).map(Value::Int).collect();
    assert_eq!(ints(&collected), (0..10).collect::<Vec<_>>());
    assert_eq!(
        format!("{:?}", Stack::from(vec![Value::Int(1)])),
        "Stack { values: [Int(1)] }"
    );
    let mut empty = Stack::from(Vec::new());
    empty.push(3);
    assert_eq!(ints(&empty), [3]);
}
