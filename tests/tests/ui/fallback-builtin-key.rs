// The library's own keys (what `switchyard::trace` and `switchyard::profile` use) are not for users.
use switchyard::{DispatchError, DispatchKeySet, OpHandle, Stack, fallback};

#[fallback(key = BuiltinTrace)]
fn mine(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack) -> Result<(), DispatchError> {
    op.redispatch_boxed(keys, stack)
}

fn main() {}
