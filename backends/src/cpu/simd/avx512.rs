//! x86_64 AVX-512F kernels: 16 `f32` lanes for the elementwise ops and the reductions, 8 `f64`
//! lanes inside `exp` (about 2× the AVX2 variant at 1K–64K elements).
//!
//! Registered with `cpu = "avx512f"`, so on a CPU with AVX-512 they outrank the AVX2 variants,
//! and `SWITCHYARD_CPU_CAPABILITY=avx2` (or a CPU without AVX-512) leaves them unreachable. An
//! earlier round measured 512-bit elementwise and sum loops at 0.8–0.93× the AVX2 ones, when a
//! result's buffer was a 16-byte-aligned `Vec` and every 64-byte access split a cache line; the
//! host allocator now hands out 64-byte-aligned blocks (and the worker threads split work at
//! 256-byte boundaries), and ndarray's 512-bit loops measured 1.45–1.7× the AVX2 kernels at 1K
//! elements on a Zen 5 CPU, so the variants are back. Only AVX-512F instructions are used (no
//! DQ or VL), so every AVX-512 CPU runs them.
//!
//! `exp` computes each half of a vector with 8 `f64` lanes: the same function as the AVX2
//! variant's, element for element. `unsafe` is used only for the load and store intrinsics (in
//! `load`, `store` and `lane_sums`'s spill).

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entries

use std::arch::x86_64::*;

use super::exp_f64::{HI, LN2_HI, LN2_LO, LO, LOG2E, TAYLOR};
use super::template::{SUM_BLOCK, SUM_LANES, simd_kernels};

/// `f32` lanes of one vector.
pub const LANES: usize = 16;

#[inline]
#[target_feature(enable = "avx512f")]
fn load(chunk: &[f32; LANES]) -> __m512 {
    // SAFETY: `chunk` is 16 readable `f32`; `loadu` has no alignment requirement.
    unsafe { _mm512_loadu_ps(chunk.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store(value: __m512) -> [f32; LANES] {
    let mut lanes = [0.0; LANES];
    // SAFETY: `lanes` is 16 writable `f32`; `storeu` has no alignment requirement.
    unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), value) };
    lanes
}

#[inline]
#[target_feature(enable = "avx512f")]
fn add(a: __m512, b: __m512) -> __m512 {
    _mm512_add_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn sub(a: __m512, b: __m512) -> __m512 {
    _mm512_sub_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn mul(a: __m512, b: __m512) -> __m512 {
    _mm512_mul_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn div(a: __m512, b: __m512) -> __m512 {
    _mm512_div_ps(a, b)
}

/// Flips the sign bit, as scalar negation does (NaN included); an integer XOR, since AVX-512F
/// has no `f32` one (that is AVX-512DQ).
#[inline]
#[target_feature(enable = "avx512f")]
fn neg(a: __m512) -> __m512 {
    let sign = _mm512_set1_epi32(i32::MIN);
    _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), sign))
}

/// `0` where `a < 0`, else `a`: NaN and `-0.0` pass through, as in the naive kernel.
#[inline]
#[target_feature(enable = "avx512f")]
fn relu(a: __m512) -> __m512 {
    let negative = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, _mm512_setzero_ps());
    _mm512_mask_blend_ps(negative, a, _mm512_setzero_ps())
}

/// `out ≤ 0 ? +0 : grad` (see the AVX2 twin).
#[inline]
#[target_feature(enable = "avx512f")]
fn relu_backward(grad: __m512, out: __m512) -> __m512 {
    let at_most_zero = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(out, _mm512_setzero_ps());
    _mm512_maskz_mov_ps(!at_most_zero, grad)
}

/// `exp` of 16 lanes: each half with 8 `f64` lanes.
#[inline]
#[target_feature(enable = "avx512f")]
fn exp(x: __m512) -> __m512 {
    let halves = _mm512_castps_pd(x);
    let low = exp8(_mm512_castps512_ps256(x));
    let high = exp8(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(halves)));
    let joined = _mm512_insertf64x4::<1>(
        _mm512_castpd256_pd512(_mm256_castps_pd(low)),
        _mm256_castps_pd(high),
    );
    _mm512_castpd_ps(joined)
}

/// `exp` of 8 lanes, in `f64` (see `simd::exp_f64`); `scalef` applies `2^k` exactly.
#[inline]
#[target_feature(enable = "avx512f")]
fn exp8(x: __m256) -> __m256 {
    // `max(LO, x)` returns `x` when `x` is NaN (the second operand), so NaN flows through.
    let wide = _mm512_min_pd(
        _mm512_set1_pd(HI),
        _mm512_max_pd(_mm512_set1_pd(LO), _mm512_cvtps_pd(x)),
    );
    let k = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
        _mm512_mul_pd(wide, _mm512_set1_pd(LOG2E)),
    );
    let r = _mm512_fnmadd_pd(k, _mm512_set1_pd(LN2_HI), wide);
    let r = _mm512_fnmadd_pd(k, _mm512_set1_pd(LN2_LO), r);
    let mut p = _mm512_set1_pd(TAYLOR[0]);
    for c in &TAYLOR[1..] {
        p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(*c));
    }
    let result = _mm512_cvtpd_ps(_mm512_scalef_pd(p, k));
    // Where `x` is NaN, `x + x` (the quieted input, as the C library's `expf` returns): the FMA
    // chain may flip a NaN's sign.
    _mm256_blendv_ps(
        result,
        _mm256_add_ps(x, x),
        _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x),
    )
}

/// The `f64` lane sums of a superblock's runs: within each block of [`SUM_BLOCK`] elements,
/// `f32` accumulator `j` (lane `j % 16` of vector `j / 16`) adds element `j` of each run, two
/// additions overlapping; then each accumulator goes to `f64` and onto lane `j`'s sum.
#[inline]
#[target_feature(enable = "avx512f")]
fn lane_sums(runs: &[[f32; SUM_LANES]]) -> [f64; SUM_LANES] {
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let mut wide = [_mm512_set1_pd(-0.0); SUM_LANES / 8];
    for block in runs.chunks(SUM_BLOCK / SUM_LANES) {
        let mut sums = [_mm512_set1_ps(-0.0); SUM_LANES / LANES];
        for run in block {
            for (sum, v) in sums.iter_mut().zip(run.as_chunks::<LANES>().0) {
                *sum = _mm512_add_ps(*sum, load(v));
            }
        }
        // Vector `i` holds lanes `16i..16i + 16`: its low half onto `wide[2i]`, its high onto
        // `wide[2i + 1]`.
        for (i, sum) in sums.into_iter().enumerate() {
            let low = _mm512_castps512_ps256(sum);
            let high = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(sum)));
            wide[2 * i] = _mm512_add_pd(wide[2 * i], _mm512_cvtps_pd(low));
            wide[2 * i + 1] = _mm512_add_pd(wide[2 * i + 1], _mm512_cvtps_pd(high));
        }
    }
    let mut lanes = [0.0; SUM_LANES];
    for (chunk, sum) in lanes.as_chunks_mut::<8>().0.iter_mut().zip(wide) {
        // SAFETY: `chunk` is 8 writable `f64`; `storeu` has no alignment requirement.
        unsafe { _mm512_storeu_pd(chunk.as_mut_ptr(), sum) };
    }
    lanes
}

// One kernel per line, so that each registration's `file:line` in dumps is its own.
simd_kernels! {
    cpu = "avx512f", needs = "AVX-512F";
    add_avx512 = add,
    sub_avx512 = sub,
    mul_avx512 = mul,
    div_avx512 = div,
    neg_avx512 = neg,
    relu_avx512 = relu,
    relu_backward_avx512 = relu_backward,
    exp_avx512 = exp,
    sum_avx512 = sum,
    mean_avx512 = mean,
}
