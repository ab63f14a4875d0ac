//! x86_64 AVX2 + FMA kernels: 8 `f32` lanes (4 `f64` lanes inside `exp`).
//!
//! This file holds the lane helpers; `template::simd_kernels!` at the end makes them kernels,
//! each a `#[target_feature(enable = "avx2,fma")]` function registered with `cpu = "avx2,fma"`:
//! dispatch installs it only on CPUs where both were detected. `unsafe` is used only for the
//! load and store intrinsics (in `load`, `store` and `lane_sums`'s spill).

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entries

use std::arch::x86_64::*;

use switchyard::{Result, Tensor, kernel};

use super::exp_f64::{HI, LN2_HI, LN2_LO, LO, LOG2E, TAYLOR};
use super::template::{SUM_BLOCK, SUM_LANES, simd_kernels};

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
fn store(value: __m256) -> [f32; LANES] {
    let mut lanes = [0.0; LANES];
    // SAFETY: `lanes` is 8 writable `f32`; `storeu` has no alignment requirement.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), value) };
    lanes
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn add(a: __m256, b: __m256) -> __m256 {
    _mm256_add_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn sub(a: __m256, b: __m256) -> __m256 {
    _mm256_sub_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn mul(a: __m256, b: __m256) -> __m256 {
    _mm256_mul_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn div(a: __m256, b: __m256) -> __m256 {
    _mm256_div_ps(a, b)
}

/// Flips the sign bit, as scalar negation does (NaN included).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn neg(a: __m256) -> __m256 {
    _mm256_xor_ps(a, _mm256_set1_ps(-0.0))
}

/// `0` where `a < 0`, else `a`: NaN and `-0.0` pass through, as in the naive kernel.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn relu(a: __m256) -> __m256 {
    let negative = _mm256_cmp_ps::<_CMP_LT_OQ>(a, _mm256_setzero_ps());
    _mm256_andnot_ps(negative, a)
}

/// `out ≤ 0 ? +0 : grad`, as the op's decomposition (`le`, `where`) selects: the ordered
/// comparison is false for a NaN `out`, so `grad` passes there, bit for bit.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn relu_backward(grad: __m256, out: __m256) -> __m256 {
    let at_most_zero = _mm256_cmp_ps::<_CMP_LE_OQ>(out, _mm256_setzero_ps());
    _mm256_andnot_ps(at_most_zero, grad)
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
fn exp(x: __m256) -> __m256 {
    let low = exp4(_mm256_castps256_ps128(x));
    let high = exp4(_mm256_extractf128_ps::<1>(x));
    _mm256_set_m128(high, low)
}

/// The `f64` lane sums of a superblock's runs: within each block of [`SUM_BLOCK`] elements,
/// `f32` accumulator `j` (lane `j % 8` of vector `j / 8`) adds element `j` of each run, four
/// additions overlapping; then each accumulator goes to `f64` and onto lane `j`'s sum.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lane_sums(runs: &[[f32; SUM_LANES]]) -> [f64; SUM_LANES] {
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let mut wide = [_mm256_set1_pd(-0.0); SUM_LANES / 4];
    for block in runs.chunks(SUM_BLOCK / SUM_LANES) {
        let mut sums = [_mm256_set1_ps(-0.0); SUM_LANES / LANES];
        for run in block {
            for (sum, v) in sums.iter_mut().zip(run.as_chunks::<LANES>().0) {
                *sum = _mm256_add_ps(*sum, load(v));
            }
        }
        // Vector `i` holds lanes `8i..8i + 8`: its low half onto `wide[2i]`, its high onto
        // `wide[2i + 1]`.
        for (i, sum) in sums.into_iter().enumerate() {
            let (low, high) = (_mm256_castps256_ps128(sum), _mm256_extractf128_ps::<1>(sum));
            wide[2 * i] = _mm256_add_pd(wide[2 * i], _mm256_cvtps_pd(low));
            wide[2 * i + 1] = _mm256_add_pd(wide[2 * i + 1], _mm256_cvtps_pd(high));
        }
    }
    let mut lanes = [0.0; SUM_LANES];
    for (chunk, sum) in lanes.as_chunks_mut::<4>().0.iter_mut().zip(wide) {
        // SAFETY: `chunk` is 4 writable `f64`; `storeu` has no alignment requirement.
        unsafe { _mm256_storeu_pd(chunk.as_mut_ptr(), sum) };
    }
    lanes
}

// One kernel per line, so that each registration's `file:line` in dumps is its own.
simd_kernels! {
    cpu = "avx2,fma", needs = "AVX2 and FMA";
    add_avx2 = add,
    sub_avx2 = sub,
    mul_avx2 = mul,
    div_avx2 = div,
    neg_avx2 = neg,
    relu_avx2 = relu,
    relu_backward_avx2 = relu_backward,
    exp_avx2 = exp,
    sum_avx2 = sum,
    mean_avx2 = mean,
}

/// Our 6 × 16 register tiles with FMA (`sgemm_avx2.rs`) up to 512³ multiply-adds and for a
/// row-major `x` (at 64² and 256² about 1.1× the `matrixmultiply` kernel), `matrixmultiply`'s
/// AVX2+FMA kernel for the rest.
#[kernel(op = switchyard::ops::matmul, key = CpuSimd, cpu = "avx2,fma", dtypes = "f32")]
pub fn matmul_avx2(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    super::matmul::gemm(x, y, super::matmul::Engine::Avx2Tiles)
}
