use switchyard::{Tensor, op};

#[derive(Debug)]
pub struct MyError;

// `error = …` types the body's error; a declaration has no body.
#[op(name = "checked", error = MyError)]
pub fn checked(x: &Tensor) -> Tensor;

// `error` takes a type, not a string.
#[op(name = "checked2", error = "MyError")]
pub fn checked2(x: &Tensor) -> Tensor {
    x.clone()
}

// The body must end in `Result<T, MyError>`.
#[op(name = "checked3", error = MyError)]
pub fn checked3(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
