use switchyard::{DispatchError, DispatchKeySet, OpHandle, Stack, fallback};

#[fallback(key = Tracer)]
fn record(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack) -> Result<(), DispatchError> {
    let _ = (op, keys, stack);
    Ok(())
}

fn main() {}
