use switchyard::ops::relu;
use switchyard::{Tensor, UserDType, kernel};

pub const COMPLEX64: UserDType = UserDType::PrivateUse1;
switchyard::declare_dtype!(COMPLEX64, "complex64", bytes = 8, kind = Other);

// A user dtype's name is not a `dtypes` token (names are known at link time, constants now):
// the error says to name its constant.
#[kernel(op = relu, key = CpuSimd, dtypes = "complex64")]
fn relu_simd(x: &Tensor) -> Tensor {
    x.clone()
}

// A constant listed twice, as a token listed twice, is a slip.
#[kernel(op = relu, key = CpuNaive, dtypes = [COMPLEX64, "f32", COMPLEX64])]
fn relu_naive(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
