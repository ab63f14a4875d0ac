use switchyard::{DispatchKeySet, OpHandle, Stack, fallback};

// A fallback returns `Result<(), DispatchError>`; this one forgot.
#[fallback(key = Tracing)]
fn record(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack) {
    let _ = (op, keys, stack);
}

fn main() {}
