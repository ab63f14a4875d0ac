use switchyard::{DispatchError, DispatchKeySet, OpHandle, Stack, fallback};

// A fallback serves one runtime key; an alias stands for several.
#[fallback(key = Autograd)]
fn autograd_not_implemented(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack,
) -> Result<(), DispatchError> {
    let _ = (op, keys, stack);
    Ok(())
}

fn main() {}
