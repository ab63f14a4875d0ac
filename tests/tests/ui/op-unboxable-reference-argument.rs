use switchyard::{DispatchArg, DispatchKeySet, Tensor, op};

/// Dispatchable, but with no boxed form; taken by reference.
pub struct Window(pub usize);

impl DispatchArg for Window {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::EMPTY
    }
}

#[op]
pub fn smooth(x: &Tensor, window: &Window) -> Tensor;

fn main() {}
