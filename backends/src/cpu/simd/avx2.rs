//! x86_64 AVX2 + FMA kernels: 8 `f32` lanes (4 `f64` lanes inside `exp` and the reductions).
//!
//! Every kernel is a `#[target_feature(enable = "avx2,fma")]` function registered with
//! `cpu = "avx2,fma"`: dispatch installs it only on CPUs where both were detected. `unsafe` is
//! used only for the load and store intrinsics (in `load`, `store`, `store_new`) and to set
//! the length of an output `Vec` whose every element a kernel wrote (no zero-fill pass first).

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entries

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use switchyard::ops::{add, div, exp, matmul, mean, mul, neg, relu, sub, sum};
use switchyard::{Result, Tensor, kernel};

use super::exp_f64::{HI, LN2_HI, LN2_LO, LO, LOG2E, TAYLOR};
use crate::cpu::naive::{host, same_shape};

/// `f32` lanes of one vector.
pub const LANES: usize = 8;

#[inline]
#[target_feature(enable = "avx")]
fn load(chunk: &[f32; LANES]) -> __m256 {
    // SAFETY: `chunk` is 8 readable `f32`; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_ps(chunk.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx")]
fn store(chunk: &mut [f32; LANES], value: __m256) {
    // SAFETY: `chunk` is 8 writable `f32`; `storeu` has no alignment requirement.
    unsafe { _mm256_storeu_ps(chunk.as_mut_ptr(), value) }
}

#[inline]
#[target_feature(enable = "avx")]
fn store_new(chunk: &mut [MaybeUninit<f32>; LANES], value: __m256) {
    // SAFETY: `chunk` is 8 writable `f32` slots (writing uninitialized ones is fine); the
    // store has no alignment requirement.
    unsafe { _mm256_storeu_ps(chunk.as_mut_ptr().cast(), value) }
}

/// The last `len % LANES` elements, zero-padded to one vector.
#[inline]
fn padded(tail: &[f32]) -> [f32; LANES] {
    let mut lanes = [0.0; LANES];
    lanes[..tail.len()].copy_from_slice(tail);
    lanes
}

/// A two-operand elementwise kernel: one vector operation per 8 elements, and the same
/// operation on a zero-padded vector for the tail.
macro_rules! binary {
    ($(#[$doc:meta])* $name:ident, $op:literal, $vector:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// The CPU must have AVX2 and FMA. Dispatch installs this kernel only on such a CPU (runtime detection).
        #[kernel(op = $op, key = CpuSimd, cpu = "avx2,fma")]
        #[target_feature(enable = "avx2,fma")]
        pub fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            same_shape($op, x, y)?;
            let (xs, ys) = (host($op, x)?, host($op, y)?);
            let ((xc, xt), (yc, yt)) = (xs.as_chunks::<LANES>(), ys.as_chunks::<LANES>());
            let mut out = switchyard::cpu_buffer($op, xs.len())?;
            let (oc, ot) = out.spare_capacity_mut()[..xs.len()].as_chunks_mut::<LANES>();
            for ((o, a), b) in oc.iter_mut().zip(xc).zip(yc) {
                store_new(o, $vector(load(a), load(b)));
            }
            let mut last = [0.0; LANES];
            store(&mut last, $vector(load(&padded(xt)), load(&padded(yt))));
            for (o, value) in ot.iter_mut().zip(last) {
                o.write(value);
            }
            // SAFETY: all `xs.len()` elements were written: the full chunks (`oc`, `xc` and `yc`
            // all have `len / LANES`: `ys.len() == xs.len()`, as `x` and `y` have one shape and a
            // tensor holds exactly its shape's element count) and then the tail (`ot`); the
            // capacity is at least `xs.len()` (`cpu_buffer`'s promise, and `[..xs.len()]` above).
            unsafe { out.set_len(xs.len()) };
            Tensor::from_vec(out, x.shape())
        }
    };
}

/// A one-operand elementwise kernel, like [`binary!`].
macro_rules! unary {
    ($(#[$doc:meta])* $name:ident, $op:literal, $vector:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// The CPU must have AVX2 and FMA. Dispatch installs this kernel only on such a CPU (runtime detection).
        #[kernel(op = $op, key = CpuSimd, cpu = "avx2,fma")]
        #[target_feature(enable = "avx2,fma")]
        pub fn $name(x: &Tensor) -> Result<Tensor> {
            let xs = host($op, x)?;
            let (xc, xt) = xs.as_chunks::<LANES>();
            let mut out = switchyard::cpu_buffer($op, xs.len())?;
            let (oc, ot) = out.spare_capacity_mut()[..xs.len()].as_chunks_mut::<LANES>();
            for (o, a) in oc.iter_mut().zip(xc) {
                store_new(o, $vector(load(a)));
            }
            let mut last = [0.0; LANES];
            store(&mut last, $vector(load(&padded(xt))));
            for (o, value) in ot.iter_mut().zip(last) {
                o.write(value);
            }
            // SAFETY: all `xs.len()` elements were written: the full chunks (`oc` and `xc` both
            // have `len / LANES`) and then the tail (`ot`), within the capacity (`[..xs.len()]`).
            unsafe { out.set_len(xs.len()) };
            Tensor::from_vec(out, x.shape())
        }
    };
}

binary!(
    /// `x + y`.
    add_avx2, "add", _mm256_add_ps
);
binary!(
    /// `x - y`.
    sub_avx2, "sub", _mm256_sub_ps
);
binary!(
    /// `x * y`.
    mul_avx2, "mul", _mm256_mul_ps
);
binary!(
    /// `x / y`.
    div_avx2, "div", _mm256_div_ps
);

/// Flips the sign bit, as scalar negation does (NaN included).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn negate(a: __m256) -> __m256 {
    _mm256_xor_ps(a, _mm256_set1_ps(-0.0))
}

/// `0` where `a < 0`, else `a`: NaN and `-0.0` pass through, as in the naive kernel.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn rectify(a: __m256) -> __m256 {
    let negative = _mm256_cmp_ps::<_CMP_LT_OQ>(a, _mm256_setzero_ps());
    _mm256_andnot_ps(negative, a)
}

/// Where `x` is NaN, `x + x` (the quieted input, as the C library's `expf` returns), else
/// `result`: the FMA chain may flip a NaN's sign.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn nan_as_scalar(x: __m128, result: __m128) -> __m128 {
    _mm_blendv_ps(result, _mm_add_ps(x, x), _mm_cmp_ps::<_CMP_UNORD_Q>(x, x))
}

/// `exp` of 4 lanes, in `f64` (see `simd::exp_f64`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn exp4(x: __m128) -> __m128 {
    // `max(LO, x)` returns `x` when `x` is NaN (the second operand), so NaN flows through.
    let wide = _mm256_min_pd(
        _mm256_set1_pd(HI),
        _mm256_max_pd(_mm256_set1_pd(LO), _mm256_cvtps_pd(x)),
    );
    let k = _mm256_round_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_pd(
        wide,
        _mm256_set1_pd(LOG2E),
    ));
    let r = _mm256_fnmadd_pd(k, _mm256_set1_pd(LN2_HI), wide);
    let r = _mm256_fnmadd_pd(k, _mm256_set1_pd(LN2_LO), r);
    let mut p = _mm256_set1_pd(TAYLOR[0]);
    for c in &TAYLOR[1..] {
        p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(*c));
    }
    // 2^k: `k + 1.5·2⁵²` holds `k` in its low bits; add the bias and shift into the exponent.
    const SHIFTER: f64 = 6_755_399_441_055_744.0;
    let bits = _mm256_castpd_si256(_mm256_add_pd(k, _mm256_set1_pd(SHIFTER)));
    let scale = _mm256_slli_epi64::<52>(_mm256_add_epi64(bits, _mm256_set1_epi64x(1023)));
    let result = _mm256_cvtpd_ps(_mm256_mul_pd(p, _mm256_castsi256_pd(scale)));
    nan_as_scalar(x, result)
}

/// `exp` of 8 lanes.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn exp8(x: __m256) -> __m256 {
    let low = exp4(_mm256_castps256_ps128(x));
    let high = exp4(_mm256_extractf128_ps::<1>(x));
    _mm256_set_m128(high, low)
}

unary!(
    /// `-x`.
    neg_avx2, "neg", negate
);
unary!(
    /// `max(x, 0)`, NaN kept.
    relu_avx2, "relu", rectify
);
unary!(
    /// `e^x`, within 1 ulp of the naive kernel.
    exp_avx2, "exp", exp8
);

/// The sum of `xs` in `f64`: 4 vectors of 4 `f64` partial sums each, so that additions overlap.
#[target_feature(enable = "avx2,fma")]
fn total(xs: &[f32]) -> f64 {
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let mut acc = [_mm256_set1_pd(-0.0); 4];
    let (blocks, tail) = xs.as_chunks::<{ 2 * LANES }>();
    for block in blocks {
        let (pair, _) = block.as_chunks::<LANES>();
        for (i, v) in pair.iter().enumerate() {
            let v = load(v);
            acc[2 * i] = _mm256_add_pd(acc[2 * i], _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
            acc[2 * i + 1] = _mm256_add_pd(
                acc[2 * i + 1],
                _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)),
            );
        }
    }
    let mut partials = [-0.0f64; 16];
    for (lanes, v) in partials.as_chunks_mut::<4>().0.iter_mut().zip(acc) {
        // SAFETY: `lanes` is 4 writable `f64`; `storeu` has no alignment requirement.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), v) }
    }
    super::finish_sum(&mut partials, tail)
}

/// The sum, as a 0-dimensional tensor.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA. Dispatch installs this kernel only on such a CPU (runtime detection).
#[kernel(op = "sum", key = CpuSimd, cpu = "avx2,fma")]
#[target_feature(enable = "avx2,fma")]
pub fn sum_avx2(x: &Tensor) -> Result<Tensor> {
    Ok(Tensor::scalar(total(host("sum", x)?) as f32))
}

/// The mean, as a 0-dimensional tensor (NaN when empty).
///
/// # Safety
///
/// The CPU must have AVX2 and FMA. Dispatch installs this kernel only on such a CPU (runtime detection).
#[kernel(op = "mean", key = CpuSimd, cpu = "avx2,fma")]
#[target_feature(enable = "avx2,fma")]
pub fn mean_avx2(x: &Tensor) -> Result<Tensor> {
    let n = x.numel() as f64;
    Ok(Tensor::scalar((total(host("mean", x)?) / n) as f32))
}

/// `matrixmultiply`'s sgemm, whose own detection picks its AVX2+FMA kernel on a CPU that has both
/// (it is built without AVX-512, so it never goes above what this variant declares).
#[kernel(op = "matmul", key = CpuSimd, cpu = "avx2,fma")]
pub fn matmul_avx2(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    super::matmul::gemm(x, y)
}
