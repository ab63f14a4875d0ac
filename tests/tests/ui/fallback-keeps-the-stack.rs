use std::cell::RefCell;

use switchyard::{DispatchError, DispatchKeySet, OpHandle, Stack, fallback};

thread_local! {
    static KEPT: RefCell<Vec<Stack<'static>>> = const { RefCell::new(Vec::new()) };
}

// A stack may hold tensors the typed call lent it: it cannot outlive the call. (Values popped
// off it may: they are owned.)
#[fallback(key = Tracing)]
fn keep(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> Result<(), DispatchError> {
    KEPT.with_borrow_mut(|kept| kept.push(std::mem::take(stack)));
    let _ = (op, keys);
    Ok(())
}

fn main() {}
