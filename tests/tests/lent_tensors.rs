//! A typed call that lands on a boxed fallback lends its tensor arguments to the stack: a kernel
//! the fallback redispatches to gets the caller's own tensors back, and the round trip takes no
//! reference count. Whatever a fallback does with the values (keeps them, rewrites them, moves
//! the whole stack, calls on with another stack), the counts balance and kept values stay valid.
//! `Grid` is a tensor handle of the test's own, so its counts can be read.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::Arc;

use switchyard::boxing::{SharedTensor, TensorValue};
use switchyard::{
    DispatchArg, DispatchError, DispatchKey, DispatchKeySet, OpHandle, Stack, Value,
    boxable_tensor, fallback, include, kernel, op,
};

#[derive(Debug)]
pub struct GridData(usize);

impl TensorValue for GridData {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::CPU_NAIVE
    }
    fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Grid[{}]", self.0)
    }
}

#[derive(Clone, Debug)]
pub struct Grid(Arc<GridData>);

impl Grid {
    fn new(n: usize) -> Grid {
        Grid(Arc::new(GridData(n)))
    }
    fn count(&self) -> usize {
        Arc::strong_count(&self.0)
    }
}

impl SharedTensor for Grid {
    type Shared = GridData;
    fn shared(&self) -> &Arc<GridData> {
        &self.0
    }
    fn from_shared(shared: Arc<GridData>) -> Grid {
        Grid(shared)
    }
}

impl DispatchArg for Grid {
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.0.dispatch_keys()
    }
}
boxable_tensor!(Grid);

thread_local! {
    /// What the kernel saw: the addresses of its arguments and their reference counts.
    static SEEN: Cell<(usize, usize, usize, usize)> = const { Cell::new((0, 0, 0, 0)) };
    /// Values a fallback kept past the call.
    static KEPT: RefCell<Vec<Value>> = const { RefCell::new(Vec::new()) };
}

#[op(name = "lent::sum")]
pub fn sum(x: &Grid, y: &Grid) -> usize;

#[kernel(op = sum, key = CpuNaive)]
fn sum_naive(x: &Grid, y: &Grid) -> usize {
    let address = |g: &Grid| std::ptr::from_ref(g) as usize;
    SEEN.set((address(x), address(y), x.count(), y.count()));
    x.0.0 + y.0.0
}

/// A tensor result: `x` again.
#[op(name = "lent::first")]
pub fn first(x: &Grid, y: &Grid) -> Grid;

#[kernel(op = first, key = CpuNaive)]
fn first_naive(x: &Grid, _y: &Grid) -> Grid {
    x.clone()
}

/// Passes the call on, touching nothing.
#[fallback(key = Mode1)]
fn pass(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> Result<(), DispatchError> {
    op.redispatch_boxed(keys.below(DispatchKey::Mode1), stack)
}

/// Keeps a clone of every argument, pops them and pushes them back, then passes the call on.
#[fallback(key = Mode2)]
fn keep(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> Result<(), DispatchError> {
    KEPT.with_borrow_mut(|kept| kept.extend(stack.values().iter().cloned()));
    let y = stack.pop().expect("two arguments");
    let x = stack.pop().expect("two arguments");
    KEPT.with_borrow_mut(|kept| kept.push(x.clone()));
    stack.push(x);
    stack.push(y);
    op.redispatch_boxed(keys.below(DispatchKey::Mode2), stack)
}

/// Replaces the first argument with a tensor of its own.
#[fallback(key = Mode3)]
fn replace(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    let base = stack.len() - 2;
    stack.values_mut()[base] = Value::from(Grid::new(100));
    op.redispatch_boxed(keys.below(DispatchKey::Mode3), stack)
}

/// Moves the whole stack out, calls on with it, and puts it back.
#[fallback(key = Custom3)]
fn move_stack(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    let mut moved = std::mem::take(stack);
    op.redispatch_boxed(keys.below(DispatchKey::Custom3), &mut moved)?;
    *stack = moved;
    Ok(())
}

/// Calls on with a stack of its own, built from the arguments it pops.
#[fallback(key = Custom4)]
fn restack(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    let y = stack.pop().expect("two arguments");
    let x = stack.pop().expect("two arguments");
    let mut own: Stack<'_> = [x, y].into_iter().collect();
    op.redispatch_boxed(keys.below(DispatchKey::Custom4), &mut own)?;
    stack.push(own.pop().expect("the result"));
    Ok(())
}

/// Spills the stack (seven more values), drops them again, then takes the first argument out
/// through `values_mut`, keeps it, and puts a tensor of its own in its place: the ways a value
/// could leave a stack still lent, all at once.
#[fallback(key = Custom1)]
fn steal(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> Result<(), DispatchError> {
    let base = stack.len() - 2;
    for i in 0..7 {
        stack.push(i);
    }
    stack.truncate(base + 2);
    let stolen = std::mem::replace(&mut stack.values_mut()[base], Value::from(Grid::new(50)));
    KEPT.with_borrow_mut(|kept| kept.push(stolen));
    op.redispatch_boxed(keys.below(DispatchKey::Custom1), stack)
}

/// Spills the stack with the lent arguments on it, then panics.
#[fallback(key = Custom2)]
fn panic_spilled(
    _op: &OpHandle,
    _keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    for i in 0..7 {
        stack.push(format!("value {i}"));
    }
    panic!("a fallback that panics with lent tensors on its stack");
}

#[test]
fn the_kernel_behind_a_fallback_gets_the_callers_own_tensors_and_no_count() {
    let (x, y) = (Grid::new(1), Grid::new(2));
    let _mode = include(DispatchKey::Mode1);
    assert_eq!(sum(&x, &y), 3);
    let (ax, ay, cx, cy) = SEEN.get();
    assert_eq!(
        (ax, ay),
        (
            std::ptr::from_ref(&x) as usize,
            std::ptr::from_ref(&y) as usize
        ),
        "the very references the caller passed"
    );
    assert_eq!((cx, cy), (1, 1), "no reference count taken");
    assert_eq!((x.count(), y.count()), (1, 1));
}

#[test]
fn values_a_fallback_keeps_are_owned_and_outlive_the_callers_tensors() {
    {
        let (x, y) = (Grid::new(3), Grid::new(4));
        let _mode = include(DispatchKey::Mode2);
        assert_eq!(sum(&x, &y), 7);
        // Kept: clones of both, and a clone of the popped `x`.
        assert_eq!((x.count(), y.count()), (3, 2));
        // The kernel got the popped values back, owned by the stack then.
        assert_eq!(
            SEEN.get().2,
            4,
            "x: the caller's, two kept, the stack's own"
        );
    }
    KEPT.with_borrow_mut(|kept| {
        let summaries: Vec<String> = kept.iter().map(ToString::to_string).collect();
        assert_eq!(summaries, ["Grid[3]", "Grid[4]", "Grid[3]"]);
        let counts: Vec<usize> = kept
            .iter()
            .map(|v| {
                let boxed = v.as_tensor().expect("a tensor").clone();
                let shared = boxed.downcast::<GridData>().unwrap();
                Arc::strong_count(&shared) - 1
            })
            .collect();
        assert_eq!(counts, [2, 1, 2], "only the kept values hold the data now");
        kept.clear();
    });
}

#[test]
fn a_fallback_that_rewrites_an_argument_sets_what_the_kernel_sees() {
    let (x, y) = (Grid::new(5), Grid::new(6));
    let _mode = include(DispatchKey::Mode3);
    assert_eq!(sum(&x, &y), 106);
    assert_eq!((x.count(), y.count()), (1, 1));
}

#[test]
fn a_fallback_may_move_the_stack_or_call_on_with_its_own() {
    let (x, y) = (Grid::new(7), Grid::new(8));
    {
        let _mode = include(DispatchKey::Custom3);
        assert_eq!(sum(&x, &y), 15);
        assert_eq!(SEEN.get().2, 1, "moved, the stack still lends");
    }
    {
        let _mode = include(DispatchKey::Custom4);
        assert_eq!(sum(&x, &y), 15);
        assert_eq!(SEEN.get().2, 2, "popped: owned by the fallback's stack");
    }
    assert_eq!((x.count(), y.count()), (1, 1));
}

#[test]
fn counts_balance_after_many_calls_through_every_fallback() {
    let (x, y) = (Grid::new(9), Grid::new(10));
    for key in [
        DispatchKey::Mode1,
        DispatchKey::Mode3,
        DispatchKey::Custom3,
        DispatchKey::Custom4,
    ] {
        let _mode = include(key);
        for _ in 0..100 {
            assert!(try_sum(&x, &y).is_ok());
            let result = first(&x, &y);
            // The kernel's clone of its argument (the caller's and the result's counts), or,
            // replaced by `Mode3`, the replacement's only count.
            let counts = if key == DispatchKey::Mode3 { 1 } else { 2 };
            assert_eq!(result.count(), counts, "{key:?}");
        }
    }
    {
        // All at once: each layer above passes the stack on to the next.
        let _pass = include(DispatchKey::Mode1);
        let _replace = include(DispatchKey::Mode3);
        let _move = include(DispatchKey::Custom3);
        let _restack = include(DispatchKey::Custom4);
        assert_eq!(sum(&x, &y), 110);
        let result = first(&x, &y);
        assert_eq!(result.0.0, 100, "the first argument replaced");
        assert_eq!(result.count(), 1);
    }
    assert_eq!((x.count(), y.count()), (1, 1));
}

#[test]
fn a_boxed_call_by_name_with_lent_tensors_unboxes_them_borrowed() {
    let (x, y) = (Grid::new(11), Grid::new(12));
    let mut stack = Stack::new();
    stack.push_lent(&x);
    stack.push_lent(&y);
    sum::handle().call_boxed(&mut stack).unwrap();
    assert!(matches!(stack.values(), [Value::Int(23)]));
    assert_eq!(SEEN.get().2, 1);
    assert_eq!((x.count(), y.count()), (1, 1));
}

#[test]
fn a_value_taken_out_through_values_mut_is_owned_and_outlives_the_callers_tensor() {
    {
        let (x, y) = (Grid::new(13), Grid::new(14));
        let _mode = include(DispatchKey::Custom1);
        assert_eq!(sum(&x, &y), 64, "the kernel saw the replacement");
        assert_eq!(x.count(), 2, "the stolen value holds a count of its own");
        assert_eq!(y.count(), 1);
    }
    KEPT.with_borrow_mut(|kept| {
        let stolen = kept.pop().expect("the fallback kept a value");
        // The caller's `x` is gone; the stolen value still reads (a use after free shows under
        // `-Zsanitizer=address`; Miri cannot run linkme's registrations).
        assert_eq!(stolen.to_string(), "Grid[13]");
        let boxed = stolen.as_tensor().expect("a tensor").clone();
        drop(stolen);
        let shared = boxed.downcast::<GridData>().unwrap();
        assert_eq!(
            Arc::strong_count(&shared),
            1,
            "only the stolen value held it"
        );
    });
}

#[test]
fn a_fallback_that_panics_with_lent_tensors_on_a_spilled_stack_balances_the_counts() {
    let (x, y) = (Grid::new(15), Grid::new(16));
    let _mode = include(DispatchKey::Custom2);
    for _ in 0..3 {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sum(&x, &y)));
        assert!(caught.is_err(), "the fallback's panic reaches the caller");
        assert_eq!((x.count(), y.count()), (1, 1));
    }
    assert_eq!(x.0.0 + y.0.0, 31, "the tensors are intact");
}

#[test]
fn many_threads_lend_the_same_tensors_through_fallbacks_and_the_counts_balance() {
    let (x, y) = (Grid::new(17), Grid::new(18));
    let calls = if cfg!(miri) { 3 } else { 500 };
    std::thread::scope(|scope| {
        for key in [
            DispatchKey::Mode1,
            DispatchKey::Mode3,
            DispatchKey::Custom3,
            DispatchKey::Custom4,
        ] {
            let (x, y) = (&x, &y);
            scope.spawn(move || {
                let _mode = include(key);
                for _ in 0..calls {
                    let expected = if key == DispatchKey::Mode3 { 118 } else { 35 };
                    assert_eq!(sum(x, y), expected, "{key:?}");
                    drop(first(x, y));
                }
            });
        }
    });
    assert_eq!((x.count(), y.count()), (1, 1));
}
