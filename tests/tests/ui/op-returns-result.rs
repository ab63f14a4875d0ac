use switchyard::{DispatchError, Tensor, op};

#[op(name = "checked_neg")]
pub fn checked_neg(x: &Tensor) -> Result<Tensor, DispatchError>;

fn main() {}
