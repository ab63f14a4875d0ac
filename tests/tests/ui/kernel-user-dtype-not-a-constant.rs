use switchyard::ops::{mul, neg, relu};
use switchyard::{DispatchKey, Tensor, UserDType, kernel};

pub const COMPLEX64: UserDType = UserDType::PrivateUse1;
pub const NOT_A_DTYPE: DispatchKey = DispatchKey::CpuSimd;

// A user dtype is named by its constant; a constant of another type is a type error on it.
#[kernel(op = mul, key = CpuSimd, dtypes = ["f32", NOT_A_DTYPE])]
fn mul_simd(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

// A misspelt constant: rustc's "cannot find", on it.
#[kernel(op = neg, key = CpuSimd, dtypes = [COMPLX64])]
fn neg_simd(x: &Tensor) -> Tensor {
    x.clone()
}

// A user dtype's name as a string is not a token: the error says to name its constant; and a
// constant listed twice.
#[kernel(op = relu, key = CpuSimd, dtypes = "complex64")]
fn relu_simd(x: &Tensor) -> Tensor {
    x.clone()
}

#[kernel(op = relu, key = CpuNaive, dtypes = [COMPLEX64, "f32", COMPLEX64])]
fn relu_naive(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
