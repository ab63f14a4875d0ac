//! x86_64 AVX-512F kernels, where AVX-512 pays: `exp` (8 `f64` lanes per step, about 2× the
//! AVX2 variant at 1K–64K elements).
//!
//! Measured and dropped: AVX-512 variants of the elementwise ops and of `sum`/`mean` ran at 0.8–0.93×
//! of the AVX2 ones at 64K elements (a 64-byte load from a 16-byte-aligned `Vec` splits a cache
//! line every time, and the ops are load/store-bound), so those ops use AVX2 on AVX-512 CPUs too.
//! Registered with `cpu = "avx512f"`, so on a CPU with AVX-512 it outranks the AVX2 variant, and
//! `SWITCHYARD_CPU_CAPABILITY=avx2` (or a CPU without AVX-512) leaves it unreachable.
//!
//! A step reads and writes 8 `f32` (one AVX vector, with the AVX2 file's `load` and `store`:
//! AVX-512F implies AVX), so this file holds only `exp`; `template::simd_kernels!` makes it the
//! kernel.

#![allow(unsafe_code)] // the macro's target-feature entry

use std::arch::x86_64::*;

use super::avx2::{load, store};
use super::exp_f64::{HI, LN2_HI, LN2_LO, LO, LOG2E, TAYLOR};
use super::template::simd_kernels;

/// `exp` of 8 lanes, in `f64` (see `simd::exp_f64`); `scalef` applies `2^k` exactly.
#[inline]
#[target_feature(enable = "avx512f")]
fn exp(x: __m256) -> __m256 {
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

simd_kernels! {
    cpu = "avx512f", needs = "AVX-512F";
    exp_avx512 = exp,
}
