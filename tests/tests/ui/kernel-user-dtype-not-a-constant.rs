use switchyard::ops::{mul, neg};
use switchyard::{DispatchKey, Tensor, kernel};

pub const NOT_A_DTYPE: DispatchKey = DispatchKey::CpuSimd;

// A user dtype is named by its `UserDType` constant; a constant of another type is a type error
// on it.
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

fn main() {}
