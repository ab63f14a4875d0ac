//! A dtype of this crate's own, `complex64`, and kernels for standard ops on it: `add` and `mul`
//! on the CPU here, and on the GPU in `gpu.rs` (feature `wgpu`). A `complex64` tensor is a
//! storage of `i64` words seen as [`COMPLEX64`] (`Tensor::as_user_dtype`): each element's real
//! part is the low word's `f32` bits, its imaginary part the high word's, so the bytes are
//! `[re, im]` little-endian, as C's `float _Complex` and NumPy's `complex64` lay them out.

use switchyard::ops::{add, mul};
use switchyard::rules::broadcast_pair;
use switchyard::{Result, Tensor, UserDType, declare_dtype, kernel};

/// This crate's `complex64`: a pair of `f32`s. Only the kernels below (`dtypes = [COMPLEX64]`)
/// serve it; every other op on it is a "no kernel for dtype complex64" error.
pub const COMPLEX64: UserDType = UserDType::PrivateUse4;
declare_dtype!(COMPLEX64, "complex64", bytes = 8, kind = Other);

/// One element: its real and imaginary parts.
type Complex = (f32, f32);

/// One element's storage word: the real part's bits low, the imaginary part's high.
fn pack((re, im): Complex) -> i64 {
    (u64::from(im.to_bits()) << 32 | u64::from(re.to_bits())) as i64
}

fn unpack(word: i64) -> Complex {
    let word = word as u64;
    (
        f32::from_bits(word as u32),
        f32::from_bits((word >> 32) as u32),
    )
}

/// A CPU `complex64` tensor of `shape` from `(re, im)` pairs.
///
/// ```
/// use switchyard::ops::mul;
/// use switchyard_example_downstream::{complex, complex_values};
/// # use switchyard_backends as _;
///
/// let z = complex(&[(1.0, 2.0), (0.0, 1.0)], &[2]).unwrap();
/// // (1 + 2i)² = −3 + 4i, i² = −1
/// assert_eq!(complex_values(&mul(&z, &z)).unwrap(), [(-3.0, 4.0), (-1.0, 0.0)]);
/// ```
pub fn complex(values: &[(f32, f32)], shape: &[usize]) -> Result<Tensor> {
    Tensor::from_vec(values.iter().copied().map(pack).collect(), shape)?.as_user_dtype(COMPLEX64)
}

/// The `(re, im)` pairs of a `complex64` tensor on any device, row-major.
pub fn complex_values(z: &Tensor) -> Result<Vec<(f32, f32)>> {
    if z.user_dtype() != Some(COMPLEX64) {
        return Err(switchyard::DispatchError::kernel(
            "downstream::complex_values",
            format!("expected a complex64 tensor, got {z:?}"),
        ));
    }
    Ok(z.as_storage_dtype()
        .try_to_vec::<i64>()?
        .into_iter()
        .map(unpack)
        .collect())
}

/// Both operands are `complex64`: a call that mixes it with another dtype reaches this crate's
/// kernels too (a user dtype's column takes every call that carries it), and this crate defines
/// no mixing.
pub(crate) fn both_complex(op: &'static str, x: &Tensor, y: &Tensor) -> Result<()> {
    if x.user_dtype() == Some(COMPLEX64) && y.user_dtype() == Some(COMPLEX64) {
        return Ok(());
    }
    Err(switchyard::DispatchError::kernel(
        op,
        format!(
            "complex64 is computed with complex64 only, got {} and {}; make both complex \
             with `downstream::complex`",
            x.dtype_name(),
            y.dtype_name()
        ),
    ))
}

/// `x ∘ y` elementwise on `complex64` CPU tensors, broadcast as every binary op is.
fn complex_binary(
    op: &'static str,
    x: &Tensor,
    y: &Tensor,
    f: fn(Complex, Complex) -> Complex,
) -> Result<Tensor> {
    both_complex(op, x, y)?;
    let (x, y, shape) = broadcast_pair(op, x, y)?;
    let xs = x.as_storage_dtype().try_to_vec::<i64>()?;
    let ys = y.as_storage_dtype().try_to_vec::<i64>()?;
    let words = xs
        .into_iter()
        .zip(ys)
        .map(|(a, b)| pack(f(unpack(a), unpack(b))))
        .collect();
    Tensor::from_vec::<i64>(words, &shape)?.as_user_dtype(COMPLEX64)
}

/// `(a + bi) + (c + di)`.
pub(crate) fn complex_add((a, b): Complex, (c, d): Complex) -> Complex {
    (a + c, b + d)
}

/// `(a + bi)(c + di) = (ac − bd) + (ad + bc)i`, each product and sum rounded once, as written.
pub(crate) fn complex_mul((a, b): Complex, (c, d): Complex) -> Complex {
    (a * c - b * d, a * d + b * c)
}

#[kernel(op = add, key = CpuNaive, dtypes = [COMPLEX64])]
fn add_complex_cpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    complex_binary("add", x, y, complex_add)
}

#[kernel(op = mul, key = CpuNaive, dtypes = [COMPLEX64])]
fn mul_complex_cpu(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    complex_binary("mul", x, y, complex_mul)
}
