use switchyard::ops::{mul, neg, relu};
use switchyard::{Tensor, kernel};

// A misspelled dtype would serve nothing: reported on the string, listing the valid tokens.
#[kernel(op = "mul", key = CpuSimd, dtypes = "f32,float64")]
fn mul_simd(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

// An empty list, a repeated token and a value that is not a string.
#[kernel(op = "neg", key = CpuSimd, dtypes = "")]
fn neg_simd(x: &Tensor) -> Tensor {
    x.clone()
}

#[kernel(op = "relu", key = CpuSimd, dtypes = "f32, f32")]
fn relu_simd(x: &Tensor) -> Tensor {
    x.clone()
}

#[kernel(op = "relu", key = CpuNaive, dtypes = f32, dtypes = "f64")]
fn relu_naive(x: &Tensor) -> Tensor {
    x.clone()
}

fn main() {}
