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

/// `values` collected into a fallibly allocated buffer of exactly `len` (their count): an
/// output the allocator refuses is an error naming `op` and the bytes, not an abort.
fn collect(op: &'static str, len: usize, values: impl Iterator<Item = f32>) -> Result<Vec<f32>> {
    let mut out = switchyard::cpu_buffer(op, len)?;
    out.extend(values);
    Ok(out)
}

fn binary(op: &'static str, x: &Tensor, y: &Tensor, f: impl Fn(f32, f32) -> f32) -> Result<Tensor> {
    same_shape(op, x, y)?;
    let (xs, ys) = (host(op, x)?, host(op, y)?);
    let out = collect(op, xs.len(), xs.iter().zip(ys).map(|(&a, &b)| f(a, b)))?;
    Tensor::from_vec(out, x.shape())
}

fn unary(op: &'static str, x: &Tensor, f: impl Fn(f32) -> f32) -> Result<Tensor> {
    let xs = host(op, x)?;
    Tensor::from_vec(collect(op, xs.len(), xs.iter().map(|&a| f(a)))?, x.shape())
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

/// `(m, k, n)` of `x: [m, k]` times `y: [k, n]` and the result's element count `m·n`, or a shape
/// error, or a size overflow when `m·n` does not fit (`[2³², 0] × [0, 2³²]`: both operands are
/// empty, the result would hold 2⁶⁴ elements). `m·k` and `k·n` fit: they are the operands' own
/// element counts, checked when they were built.
pub(crate) fn matmul_dims(x: &Tensor, y: &Tensor) -> Result<(usize, usize, usize, usize)> {
    let (m, k, n) = match (x.shape(), y.shape()) {
        (&[m, k], &[k2, n]) if k == k2 => (m, k, n),
        (a, b) => {
            return Err(DispatchError::shape(
                "matmul",
                format!("expected [m, k] and [k, n], got {a:?} and {b:?}"),
            ));
        }
    };
    let len = match m.checked_mul(n) {
        None => Err(format!(
            "the result's element count {m} × {n} exceeds usize::MAX"
        )),
        Some(len) => Tensor::checked_numel("matmul", &[len]).map_err(|_| {
            format!(
                "the result's {len} elements (4 bytes each) exceed isize::MAX bytes, the largest \
                 allocation"
            )
        }),
    }
    .map_err(|what| DispatchError::size_overflow("matmul", &[x.shape(), y.shape()], what))?;
    Ok((m, k, n, len))
}

#[kernel(op = "matmul", key = CpuNaive)]
fn matmul_naive(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let (m, k, n, len) = matmul_dims(x, y)?;
    let (xs, ys) = (host("matmul", x)?, host("matmul", y)?);
    let mut out = switchyard::cpu_buffer("matmul", len)?;
    out.resize(len, 0.0);
    // With `k = 0` every element is an empty sum, and `m` may be huge (`[2⁴⁰, 0] × [0, 0]`):
    // the loops below run only when there is something to add.
    if k > 0 && n > 0 {
        for i in 0..m {
            for p in 0..k {
                let a = xs[i * k + p];
                for j in 0..n {
                    out[i * n + j] += a * ys[p * n + j];
                }
            }
        }
    }
    Tensor::from_vec(out, &[m, n])
}

#[kernel(op = "full", key = CpuNaive)]
fn full_naive(shape: &[usize], value: f32, _device: Device) -> Result<Tensor> {
    let len = Tensor::checked_numel("full", shape)?;
    let mut out = switchyard::cpu_buffer("full", len)?;
    out.resize(len, value);
    Tensor::from_vec(out, shape)
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
