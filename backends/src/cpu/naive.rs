//! The naive CPU backend: plain scalar loops over any layout and every dtype, written for
//! obviousness, not speed. It is the oracle every other backend is tested against.
//!
//! Every kernel reads its inputs through their strides (views, broadcasts, transposes need no
//! copy) and writes a fresh contiguous output from the caching allocator. Mixed-dtype inputs are
//! first converted to the dtype the op computes in ([`switchyard::rules`]), then the loop runs in
//! that one type.

use switchyard::half::{bf16, f16};
use switchyard::ops::{
    add, contiguous, copy_, div, exp, full, log, matmul, mean, mul, neg, relu, sigmoid, sqrt, sub,
    sum, tanh, to, to_dtype, try_to,
};
use switchyard::{
    DType, Device, DispatchError, Element, HostVec, HostView, Result, Scalar, Tensor, host_buffer,
    kernel, rules, with_element,
};

/// Arithmetic of one element type, as the naive kernels use it (and the SIMD kernels' tails, so
/// that their last elements are computed exactly as the oracle computes them). `f16` and `bf16`
/// compute in `f32` and round once; integers wrap; `bool` has only what [`rules`] lets reach it
/// (`add` is or, `mul` is and; the rest is never called).
pub(crate) trait Arith: Element {
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn div(a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
    fn relu(a: Self) -> Self;
    fn exp(a: Self) -> Self;
    fn log(a: Self) -> Self;
    fn tanh(a: Self) -> Self;
    fn sigmoid(a: Self) -> Self;
    fn sqrt(a: Self) -> Self;
}

/// `1 / (1 + e^-x)` in `f64`, never through an infinity: `e^x / (1 + e^x)` for negative `x`
/// (where `e^-x` would overflow), so both branches divide finite numbers; NaN stays NaN.
fn sigmoid_f64(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

macro_rules! float_arith {
    ($($ty:ty),*) => {$(
        impl Arith for $ty {
            fn add(a: Self, b: Self) -> Self { a + b }
            fn sub(a: Self, b: Self) -> Self { a - b }
            fn mul(a: Self, b: Self) -> Self { a * b }
            fn div(a: Self, b: Self) -> Self { a / b }
            fn neg(a: Self) -> Self { -a }
            // NaN stays NaN (as in PyTorch); `max` would turn it into 0.
            fn relu(a: Self) -> Self { if a < Self::ZERO { Self::ZERO } else { a } }
            fn exp(a: Self) -> Self { a.exp() }
            fn log(a: Self) -> Self { a.ln() }
            // In `f64` and rounded once, as `sigmoid`: the C library's `tanhf` errs by up to 2
            // ulp (glibc), too far for an oracle of 1-ulp kernels.
            fn tanh(a: Self) -> Self { f64::from(a).tanh() as Self }
            // In `f64` and rounded once: the oracle's `f32` is within half an ulp but for
            // `e^-x`'s own error.
            fn sigmoid(a: Self) -> Self { sigmoid_f64(f64::from(a)) as Self }
            fn sqrt(a: Self) -> Self { a.sqrt() }
        }
    )*};
}
float_arith!(f32, f64);

macro_rules! half_arith {
    ($($ty:ty),*) => {$(
        impl Arith for $ty {
            fn add(a: Self, b: Self) -> Self { <$ty>::from_f32(a.to_f32() + b.to_f32()) }
            fn sub(a: Self, b: Self) -> Self { <$ty>::from_f32(a.to_f32() - b.to_f32()) }
            fn mul(a: Self, b: Self) -> Self { <$ty>::from_f32(a.to_f32() * b.to_f32()) }
            fn div(a: Self, b: Self) -> Self { <$ty>::from_f32(a.to_f32() / b.to_f32()) }
            fn neg(a: Self) -> Self { -a }
            fn relu(a: Self) -> Self { if a < Self::ZERO { Self::ZERO } else { a } }
            fn exp(a: Self) -> Self { <$ty>::from_f32(a.to_f32().exp()) }
            fn log(a: Self) -> Self { <$ty>::from_f32(a.to_f32().ln()) }
            fn tanh(a: Self) -> Self { <$ty>::from_f32(a.to_f32().tanh()) }
            fn sigmoid(a: Self) -> Self { <$ty>::from_f64(sigmoid_f64(a.to_f64())) }
            fn sqrt(a: Self) -> Self { <$ty>::from_f32(a.to_f32().sqrt()) }
        }
    )*};
}
half_arith!(f16, bf16);

macro_rules! int_arith {
    ($($ty:ty),*) => {$(
        impl Arith for $ty {
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn sub(a: Self, b: Self) -> Self { a.wrapping_sub(b) }
            fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            // Integer `div` is true division in `f32` (rules::binary): never called.
            fn div(a: Self, b: Self) -> Self { a.checked_div(b).unwrap_or(0) }
            fn neg(a: Self) -> Self { a.wrapping_neg() }
            fn relu(a: Self) -> Self { a.max(0) }
            // `exp` and the other transcendental ops of an integer compute in `f32`
            // (rules::unary): never called.
            fn exp(a: Self) -> Self { a }
            fn log(a: Self) -> Self { a }
            fn tanh(a: Self) -> Self { a }
            fn sigmoid(a: Self) -> Self { a }
            fn sqrt(a: Self) -> Self { a }
        }
    )*};
}
int_arith!(u8, i32, i64);

impl Arith for bool {
    fn add(a: Self, b: Self) -> Self {
        a | b
    }
    fn sub(a: Self, b: Self) -> Self {
        a ^ b
    }
    fn mul(a: Self, b: Self) -> Self {
        a & b
    }
    fn div(a: Self, _: Self) -> Self {
        a
    }
    fn neg(a: Self) -> Self {
        a
    }
    fn relu(a: Self) -> Self {
        a
    }
    fn exp(a: Self) -> Self {
        a
    }
    fn log(a: Self) -> Self {
        a
    }
    fn tanh(a: Self) -> Self {
        a
    }
    fn sigmoid(a: Self) -> Self {
        a
    }
    fn sqrt(a: Self) -> Self {
        a
    }
}

/// `x` in `dtype`: itself when it has it, else converted (a copy).
pub(crate) fn as_dtype(x: &Tensor, dtype: DType) -> Result<Tensor> {
    if x.dtype() == dtype {
        Ok(x.clone())
    } else {
        convert(x, dtype)
    }
}

/// The values of `x` (any layout) in row-major order into a new contiguous tensor of `T`, each
/// mapped by `f`.
pub(crate) fn map_into<X: Element, T: Element>(
    op: &'static str,
    x: &Tensor,
    f: impl Fn(X) -> T,
) -> Result<Tensor> {
    let view = x.host::<X>(op)?;
    let mut out = host_buffer::<T>(op, x.numel())?;
    match view.contiguous() {
        Some(xs) => out.extend(xs.iter().map(|&a| f(a))),
        None => out.extend(view.iter().map(f)),
    }
    Tensor::from_host(out, x.shape())
}

fn convert(x: &Tensor, dtype: DType) -> Result<Tensor> {
    with_element!(x.dtype(), X => with_element!(dtype, T => {
        map_into::<X, T>("to_dtype", x, |a| T::from_scalar(a.to_scalar()))
    }))
}

fn binary(op: &'static str, x: &Tensor, y: &Tensor, f: fn(DType) -> BinaryFn) -> Result<Tensor> {
    let dtype = rules::binary(op, x, y)?;
    let (x, y, shape) = rules::broadcast_pair(op, x, y)?;
    let (x, y) = (as_dtype(&x, dtype)?, as_dtype(&y, dtype)?);
    f(dtype)(op, &x, &y, &shape)
}

type UnaryFn = fn(&'static str, &Tensor) -> Result<Tensor>;

type BinaryFn = fn(&'static str, &Tensor, &Tensor, &[usize]) -> Result<Tensor>;

fn zip<T: Arith>(
    op: &'static str,
    x: &Tensor,
    y: &Tensor,
    shape: &[usize],
    f: fn(T, T) -> T,
) -> Result<Tensor> {
    let (xv, yv) = (x.host::<T>(op)?, y.host::<T>(op)?);
    let mut out = host_buffer::<T>(op, x.numel())?;
    zip_values(&xv, &yv, &mut out, f);
    Tensor::from_host(out, shape)
}

/// Appends `f(a, b)` for each pair of `x`'s and `y`'s values (two views of one shape, either
/// possibly broadcast), in row-major order. Both contiguous: one pass over two slices. One
/// contiguous and the other one run repeated (a broadcast scalar or row, e.g. a bias added to
/// every row, a 0-d factor, a comparison against a 0-d zero; `HostView::repeated_block`): the
/// contiguous side in runs of that length, each paired with the run. Anything else: both
/// through their strides, element by element (about ten times slower).
pub(crate) fn zip_values<A: Element, B: Element, O: Element>(
    xv: &HostView<'_, A>,
    yv: &HostView<'_, B>,
    out: &mut HostVec<O>,
    f: impl Fn(A, B) -> O,
) {
    if let (Some(xs), Some(ys)) = (xv.contiguous(), yv.contiguous()) {
        out.extend(xs.iter().zip(ys).map(|(&a, &b)| f(a, b)));
    } else if let (Some(xs), Some(run)) = (xv.contiguous(), yv.repeated_block()) {
        // One shape: the contiguous side is whole runs (`chunks` ends on a whole run, since the
        // pattern is whole runs too).
        debug_assert_eq!(xs.len() % run.len(), 0);
        let pattern = long_pattern(run);
        for part in xs.chunks(pattern.len()) {
            out.extend(part.iter().zip(&*pattern).map(|(&a, &b)| f(a, b)));
        }
    } else if let (Some(run), Some(ys)) = (xv.repeated_block(), yv.contiguous()) {
        debug_assert_eq!(ys.len() % run.len(), 0);
        let pattern = long_pattern(run);
        for part in ys.chunks(pattern.len()) {
            out.extend(pattern.iter().zip(part).map(|(&a, &b)| f(a, b)));
        }
    } else {
        out.extend(xv.iter().zip(yv.iter()).map(|(a, b)| f(a, b)));
    }
}

/// `run` repeated to at least 256 elements (whole copies), so that each pass of `zip_values`'s
/// loop is long: a broadcast scalar's run is one element, which would make a call per element.
/// `run` itself when it is long already, or when there is no room for the copy.
fn long_pattern<T: Copy>(run: &[T]) -> std::borrow::Cow<'_, [T]> {
    const LONG: usize = 256;
    if run.is_empty() || run.len() >= LONG {
        return std::borrow::Cow::Borrowed(run);
    }
    let copies = LONG.div_ceil(run.len());
    let mut pattern = Vec::new();
    if pattern.try_reserve_exact(copies * run.len()).is_err() {
        return std::borrow::Cow::Borrowed(run);
    }
    for _ in 0..copies {
        pattern.extend_from_slice(run);
    }
    std::borrow::Cow::Owned(pattern)
}

macro_rules! binary_kernel {
    ($name:ident, $op:literal, $method:ident) => {
        #[kernel(op = $op, key = CpuNaive)]
        pub(crate) fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            binary($op, x, y, |dtype| with_element!(dtype, T => |op, x, y, shape| zip::<T>(op, x, y, shape, T::$method)))
        }
    };
}

binary_kernel!(add_naive, "add", add);
binary_kernel!(sub_naive, "sub", sub);
binary_kernel!(mul_naive, "mul", mul);
binary_kernel!(div_naive, "div", div);

fn unary(op: &'static str, x: &Tensor, f: fn(DType) -> UnaryFn) -> Result<Tensor> {
    let dtype = rules::unary(op, x.dtype())?;
    f(dtype)(op, &as_dtype(x, dtype)?)
}

macro_rules! unary_kernel {
    ($name:ident, $op:literal, $method:ident) => {
        #[kernel(op = $op, key = CpuNaive)]
        pub(crate) fn $name(x: &Tensor) -> Result<Tensor> {
            unary($op, x, |dtype| with_element!(dtype, T => |op, x| map_into::<T, T>(op, x, <T as Arith>::$method)))
        }
    };
}

unary_kernel!(neg_naive, "neg", neg);
unary_kernel!(relu_naive, "relu", relu);
unary_kernel!(exp_naive, "exp", exp);
unary_kernel!(log_naive, "log", log);
unary_kernel!(tanh_naive, "tanh", tanh);
unary_kernel!(sigmoid_naive, "sigmoid", sigmoid);
unary_kernel!(sqrt_naive, "sqrt", sqrt);

/// The sum of `x`'s elements: floats in `f64` (slow but accurate, what an oracle should be),
/// integers and booleans in wrapping `i64`.
fn total(op: &'static str, x: &Tensor) -> Result<Scalar> {
    with_element!(x.dtype(), T => {
        let view = x.host::<T>(op)?;
        Ok(if T::DTYPE.is_float() {
            Scalar::Float(view.iter().map(|a| a.to_scalar().as_f64()).sum())
        } else {
            Scalar::Int(view.iter().fold(0i64, |acc, a| acc.wrapping_add(a.to_scalar().as_i64())))
        })
    })
}

fn scalar_of(op: &'static str, dtype: DType, value: Scalar) -> Result<Tensor> {
    with_element!(dtype, T => {
        let mut out = host_buffer::<T>(op, 1)?;
        out.push(T::from_scalar(value));
        Tensor::from_host(out, &[])
    })
}

#[kernel(op = "sum", key = CpuNaive)]
pub(crate) fn sum_naive(x: &Tensor) -> Result<Tensor> {
    scalar_of("sum", rules::sum(x.dtype()), total("sum", x)?)
}

#[kernel(op = "mean", key = CpuNaive)]
pub(crate) fn mean_naive(x: &Tensor) -> Result<Tensor> {
    let dtype = rules::mean(x.dtype())?;
    // 0 / 0 is NaN: the mean of nothing is undefined, as in PyTorch.
    let mean = total("mean", x)?.as_f64() / x.numel() as f64;
    scalar_of("mean", dtype, Scalar::Float(mean))
}

/// Two matrices here; other ranks through [`rules::matmul_batched`], one matrix product each.
#[kernel(op = "matmul", key = CpuNaive)]
pub(crate) fn matmul_naive(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    if x.dim() != 2 || y.dim() != 2 {
        return rules::matmul_batched(x, y, matmul_naive);
    }
    let dtype = rules::matmul(x.dtype(), y.dtype())?;
    let (m, k, n, _) = rules::matmul_dims(x, y, dtype)?;
    let (x, y) = (as_dtype(x, dtype)?, as_dtype(y, dtype)?);
    with_element!(dtype, T => matmul_typed::<T>(&x, &y, m, k, n))
}

/// Each output element is a dot product accumulated in `f64` (floats) or wrapping `i64`
/// (integers), rounded once; except that a dot product of a narrower float whose accumulation
/// in `f32` overflows (a product or a partial sum beyond `f32`'s range, as every `f32` BLAS
/// meets it) is that infinity, the IEEE answer, not the exact sum rounded back into range.
fn matmul_typed<T: Element>(
    x: &Tensor,
    y: &Tensor,
    m: usize,
    k: usize,
    n: usize,
) -> Result<Tensor> {
    const OP: &str = "matmul";
    let (xv, yv) = (x.host::<T>(OP)?, y.host::<T>(OP)?);
    let (xs, ys) = (xv.storage(), yv.storage());
    let (xo, xst, yo, yst) = (
        x.storage_offset(),
        x.strides(),
        y.storage_offset(),
        y.strides(),
    );
    let mut out = host_buffer::<T>(OP, m * n)?;
    // `m` may be huge when the result is empty (`[2⁴⁰, 0] × [0, 0]`): the loops run only when
    // there is an output element. (With `k = 0` each is an empty sum; the allocation above
    // bounded their count.)
    if n == 0 {
        return Tensor::from_host(out, &[m, n]);
    }
    for i in 0..m {
        for j in 0..n {
            let pairs = (0..k).map(|p| {
                (
                    xs[xo + i * xst[0] + p * xst[1]],
                    ys[yo + p * yst[0] + j * yst[1]],
                )
            });
            out.push(if T::DTYPE.is_float() {
                // From +0, as a product matrix starts (`Iterator::sum` starts an `f64` at -0,
                // which would make an empty dot product -0). Beside it, the `f32` chain of
                // fused multiply-adds the SIMD kernels and PyTorch's BLAS run, only to see
                // whether it overflows.
                let (dot, chain) = pairs.fold((0.0, 0.0f32), |(acc, chain), (a, b)| {
                    let (a, b) = (a.to_scalar().as_f64(), b.to_scalar().as_f64());
                    (acc + a * b, (a as f32).mul_add(b as f32, chain))
                });
                let overflowed = T::DTYPE != DType::F64 && chain.is_infinite() && dot.is_finite();
                T::from_scalar(Scalar::Float(if overflowed { chain.into() } else { dot }))
            } else {
                let dot = pairs.fold(0i64, |acc, (a, b)| {
                    acc.wrapping_add(a.to_scalar().as_i64().wrapping_mul(b.to_scalar().as_i64()))
                });
                T::from_scalar(Scalar::Int(dot))
            });
        }
    }
    Tensor::from_host(out, &[m, n])
}

#[kernel(op = "full", key = CpuNaive)]
fn full_naive(shape: &[usize], value: f64, dtype: DType, _device: Device) -> Result<Tensor> {
    with_element!(dtype, T => {
        let len = Tensor::checked_numel("full", shape, dtype)?;
        let mut out = host_buffer::<T>("full", len)?;
        out.extend(std::iter::repeat_n(T::from_scalar(Scalar::Float(value)), len));
        Tensor::from_host(out, shape)
    })
}

#[kernel(op = "to_dtype", key = CpuNaive)]
fn to_dtype_naive(x: &Tensor, dtype: DType) -> Result<Tensor> {
    as_dtype(x, dtype)
}

#[kernel(op = "contiguous", key = CpuNaive)]
fn contiguous_naive(x: &Tensor) -> Result<Tensor> {
    if x.is_contiguous() {
        return Ok(x.clone());
    }
    with_element!(x.dtype(), T => map_into::<T, T>("contiguous", x, |a| a))
}

/// CPU to CPU is the same tensor. Moves that involve another device dispatch to that device's
/// backend (its key is higher), which does the copy.
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

/// Writes `src` (any device, dtype and layout that broadcasts to `dst`'s shape) into a CPU
/// `dst` through its strides, under one write borrow (one version).
#[kernel(op = "copy_", key = CpuNaive)]
fn copy_naive(dst: &mut Tensor, src: &Tensor) -> Result<()> {
    const OP: &str = "copy_";
    if dst.device() != Device::Cpu {
        return Err(DispatchError::kernel(
            OP,
            format!(
                "the {} backend has no copy_ kernel: tensors on {} cannot be written in place",
                dst.device(),
                dst.device()
            ),
        ));
    }
    let src = if src.device() == Device::Cpu {
        src.clone()
    } else {
        try_to(src, Device::Cpu)?
    };
    let src = rules::copy_source(OP, dst, &src)?;
    // A source in the destination's storage is read in full first: reading and writing one
    // storage at once is refused by its borrow guard, and an overlap would read written values.
    let src = if src.same_storage(dst) {
        with_element!(src.dtype(), S => map_into::<S, S>(OP, &src, |a| a))?
    } else {
        src
    };
    with_element!(dst.dtype(), T => with_element!(src.dtype(), S => {
        write_converted::<S, T>(OP, dst, &src)
    }))
}

/// `dst[i] = src[i]` converted, `i` row-major over `dst`'s shape (which `src` has).
fn write_converted<S: Element, T: Element>(
    op: &'static str,
    dst: &Tensor,
    src: &Tensor,
) -> Result<()> {
    let from = src.host::<S>(op)?;
    let mut to = dst.host_mut::<T>(op)?;
    let (elements, offsets) = to.parts();
    for (offset, value) in offsets.zip(from.iter()) {
        elements[offset] = T::from_scalar(value.to_scalar());
    }
    Ok(())
}
