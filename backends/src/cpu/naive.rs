//! The naive CPU backend: plain scalar loops, written for obviousness, not speed. It is the
//! oracle every other backend is tested against.

use switchyard::ops::{add, div, exp, full, matmul, mean, mul, neg, relu, sub, sum, to};
use switchyard::{Device, DispatchError, Result, Tensor, kernel};

/// The values of a CPU tensor, or an error naming `op` if the tensor is elsewhere (which dispatch
/// rules out unless a kernel is registered at the wrong key).
pub fn host<'t>(op: &'static str, tensor: &'t Tensor) -> Result<&'t [f32]> {
    tensor.cpu_data().ok_or_else(|| {
        DispatchError::kernel(
            op,
            format!("the CPU backend got a tensor on {}", tensor.device()),
        )
    })
}

/// Checks that two operands of an elementwise op have one shape.
pub fn same_shape(op: &'static str, x: &Tensor, y: &Tensor) -> Result<()> {
    if x.shape() == y.shape() {
        Ok(())
    } else {
        Err(DispatchError::shape(
            op,
            format!(
                "elementwise operands must have one shape, got {:?} and {:?}",
                x.shape(),
                y.shape()
            ),
        ))
    }
}

fn binary(op: &'static str, x: &Tensor, y: &Tensor, f: impl Fn(f32, f32) -> f32) -> Result<Tensor> {
    same_shape(op, x, y)?;
    let (xs, ys) = (host(op, x)?, host(op, y)?);
    Tensor::from_vec(
        xs.iter().zip(ys).map(|(&a, &b)| f(a, b)).collect(),
        x.shape(),
    )
}

fn unary(op: &'static str, x: &Tensor, f: impl Fn(f32) -> f32) -> Result<Tensor> {
    Tensor::from_vec(host(op, x)?.iter().map(|&a| f(a)).collect(), x.shape())
}

#[kernel(op = "add", key = CpuNaive)]
fn add_naive(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("add", x, y, |a, b| a + b)
}

#[kernel(op = "sub", key = CpuNaive)]
fn sub_naive(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("sub", x, y, |a, b| a - b)
}

#[kernel(op = "mul", key = CpuNaive)]
fn mul_naive(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("mul", x, y, |a, b| a * b)
}

#[kernel(op = "div", key = CpuNaive)]
fn div_naive(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    binary("div", x, y, |a, b| a / b)
}

#[kernel(op = "neg", key = CpuNaive)]
fn neg_naive(x: &Tensor) -> Result<Tensor> {
    unary("neg", x, |a| -a)
}

#[kernel(op = "relu", key = CpuNaive)]
fn relu_naive(x: &Tensor) -> Result<Tensor> {
    // NaN stays NaN (as in PyTorch); `f32::max` would turn it into 0.
    unary("relu", x, |a| if a < 0.0 { 0.0 } else { a })
}

#[kernel(op = "exp", key = CpuNaive)]
fn exp_naive(x: &Tensor) -> Result<Tensor> {
    unary("exp", x, f32::exp)
}

/// Sums in `f64`: slow but accurate, which is what an oracle should be.
fn total(op: &'static str, x: &Tensor) -> Result<f64> {
    Ok(host(op, x)?.iter().map(|&a| f64::from(a)).sum())
}

#[kernel(op = "sum", key = CpuNaive)]
fn sum_naive(x: &Tensor) -> Result<Tensor> {
    Ok(Tensor::scalar(total("sum", x)? as f32))
}

#[kernel(op = "mean", key = CpuNaive)]
fn mean_naive(x: &Tensor) -> Result<Tensor> {
    // 0 / 0 is NaN: the mean of nothing is undefined, as in PyTorch.
    Ok(Tensor::scalar(
        (total("mean", x)? / x.numel() as f64) as f32,
    ))
}

#[kernel(op = "matmul", key = CpuNaive)]
fn matmul_naive(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let (m, k, n) = match (x.shape(), y.shape()) {
        (&[m, k], &[k2, n]) if k == k2 => (m, k, n),
        (a, b) => {
            return Err(DispatchError::shape(
                "matmul",
                format!("expected [m, k] and [k, n], got {a:?} and {b:?}"),
            ));
        }
    };
    let (xs, ys) = (host("matmul", x)?, host("matmul", y)?);
    let mut out = vec![0.0f32; m * n];
    for i in 0..m {
        for p in 0..k {
            let a = xs[i * k + p];
            for j in 0..n {
                out[i * n + j] += a * ys[p * n + j];
            }
        }
    }
    Tensor::from_vec(out, &[m, n])
}

#[kernel(op = "full", key = CpuNaive)]
fn full_naive(shape: &[usize], value: f32, _device: Device) -> Tensor {
    Tensor::from_fn(shape, |_| value)
}

/// CPU to CPU: tensors are immutable, so the copy is the same tensor. Moves that involve another
/// device dispatch to that device's backend (its key is higher), which does the copy.
#[kernel(op = "to", key = CpuNaive)]
fn to_naive(x: &Tensor, device: Device) -> Result<Tensor> {
    match (x.device(), device) {
        (Device::Cpu, Device::Cpu) => Ok(x.clone()),
        (from, to) => Err(DispatchError::kernel(
            "to",
            format!("the CPU backend copies within the CPU only, not from {from} to {to}"),
        )),
    }
}
