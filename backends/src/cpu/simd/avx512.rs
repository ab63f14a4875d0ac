//! x86_64 AVX-512F kernels, where AVX-512 pays: `exp` (8 `f64` lanes per step, about 2× the
//! AVX2 variant at 1K–64K elements).
//!
//! Measured and dropped: AVX-512 variants of the elementwise ops and of `sum`/`mean` ran at 0.8–0.93×
//! of the AVX2 ones at 64K elements (a 64-byte load from a 16-byte-aligned `Vec` splits a cache
//! line every time, and the ops are load/store-bound), so those ops use AVX2 on AVX-512 CPUs too.
//! Registered with `cpu = "avx512f"`, so on a CPU with AVX-512 it outranks the AVX2 variant, and
//! `SWITCHYARD_CPU_CAPABILITY=avx2` (or a CPU without AVX-512) leaves it unreachable.

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entry

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use switchyard::ops::exp;
use switchyard::{Result, Tensor, kernel};

use super::exp_f64::{HI, LN2_HI, LN2_LO, LO, LOG2E, TAYLOR};
use crate::cpu::naive::host;

/// `f32` lanes of one step of `exp`.
pub const LANES: usize = 8;

#[inline]
#[target_feature(enable = "avx512f")]
fn load(chunk: &[f32; LANES]) -> __m256 {
    // SAFETY: `chunk` is 8 readable `f32`; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_ps(chunk.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store(chunk: &mut [f32; LANES], value: __m256) {
    // SAFETY: `chunk` is 8 writable `f32`; `storeu` has no alignment requirement.
    unsafe { _mm256_storeu_ps(chunk.as_mut_ptr(), value) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store_new(chunk: &mut [MaybeUninit<f32>; LANES], value: __m256) {
    // SAFETY: `chunk` is 8 writable `f32` slots (writing uninitialized ones is fine); `storeu`
    // has no alignment requirement.
    unsafe { _mm256_storeu_ps(chunk.as_mut_ptr().cast(), value) }
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

/// `e^x`, within 1 ulp of the naive kernel (correctly rounded but for rare near-ties).
///
/// # Safety
///
/// The CPU must have AVX-512F. Dispatch installs this kernel only on such a CPU (runtime detection).
#[kernel(op = "exp", key = CpuSimd, cpu = "avx512f")]
#[target_feature(enable = "avx512f")]
pub fn exp_avx512(x: &Tensor) -> Result<Tensor> {
    let xs = host("exp", x)?;
    let (xc, xt) = xs.as_chunks::<LANES>();
    let mut out = switchyard::cpu_buffer("exp", xs.len())?;
    let (oc, ot) = out.spare_capacity_mut()[..xs.len()].as_chunks_mut::<LANES>();
    for (o, a) in oc.iter_mut().zip(xc) {
        store_new(o, exp8(load(a)));
    }
    let mut lanes = [0.0; LANES];
    lanes[..xt.len()].copy_from_slice(xt);
    let mut last = [0.0; LANES];
    store(&mut last, exp8(load(&lanes)));
    for (o, value) in ot.iter_mut().zip(last) {
        o.write(value);
    }
    // SAFETY: all `xs.len()` elements were written: the full chunks (`oc` and `xc` both have
    // `len / LANES`) and then the tail (`ot`), within the capacity (`[..xs.len()]`).
    unsafe { out.set_len(xs.len()) };
    Tensor::from_vec(out, x.shape())
}
