//! x86_64 AVX-512F kernels: 16 `f32` lanes (8 `f64` lanes inside `exp` and the reductions).
//!
//! Registered with `cpu = "avx512f"`, so on a CPU with AVX-512 they outrank the AVX2 variants,
//! and `SWITCHYARD_CPU_CAPABILITY=avx2` (or a CPU without AVX-512) leaves them unreachable.
//! `matmul` has no variant here: the AVX2 one serves (see `simd::matmul`).

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entries

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use switchyard::ops::{add, div, exp, mean, mul, neg, relu, sub, sum};
use switchyard::{Result, Tensor, kernel};

use super::exp_f64::{HI, LN2_HI, LN2_LO, LO, LOG2E, TAYLOR};
use crate::cpu::naive::{host, same_shape};

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
fn store(chunk: &mut [f32; LANES], value: __m512) {
    // SAFETY: `chunk` is 16 writable `f32`; `storeu` has no alignment requirement.
    unsafe { _mm512_storeu_ps(chunk.as_mut_ptr(), value) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn load8(chunk: &[f32; 8]) -> __m256 {
    // SAFETY: `chunk` is 8 readable `f32`; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_ps(chunk.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store8(chunk: &mut [f32; 8], value: __m256) {
    // SAFETY: `chunk` is 8 writable `f32`; `storeu` has no alignment requirement.
    unsafe { _mm256_storeu_ps(chunk.as_mut_ptr(), value) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store_new(chunk: &mut [MaybeUninit<f32>; LANES], value: __m512) {
    // SAFETY: `chunk` is 16 writable `f32` slots (writing uninitialized ones is fine); the
    // store has no alignment requirement.
    unsafe { _mm512_storeu_ps(chunk.as_mut_ptr().cast(), value) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store8_new(chunk: &mut [MaybeUninit<f32>; 8], value: __m256) {
    // SAFETY: `chunk` is 8 writable `f32` slots (writing uninitialized ones is fine); `storeu`
    // has no alignment requirement.
    unsafe { _mm256_storeu_ps(chunk.as_mut_ptr().cast(), value) }
}

/// The last `len % N` elements, zero-padded to one vector.
#[inline]
fn padded<const N: usize>(tail: &[f32]) -> [f32; N] {
    let mut lanes = [0.0; N];
    lanes[..tail.len()].copy_from_slice(tail);
    lanes
}

/// A two-operand elementwise kernel (see `avx2::binary!`).
macro_rules! binary {
    ($(#[$doc:meta])* $name:ident, $op:literal, $vector:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// The CPU must have AVX-512F. Dispatch installs this kernel only on such a CPU (runtime detection).
        #[kernel(op = $op, key = CpuSimd, cpu = "avx512f")]
        #[target_feature(enable = "avx512f")]
        pub fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            same_shape($op, x, y)?;
            let (xs, ys) = (host($op, x)?, host($op, y)?);
            let ((xc, xt), (yc, yt)) = (xs.as_chunks::<LANES>(), ys.as_chunks::<LANES>());
            let mut out = Vec::with_capacity(xs.len());
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
            // all have `len / LANES`) and then the tail (`ot`).
            unsafe { out.set_len(xs.len()) };
            Tensor::from_vec(out, x.shape())
        }
    };
}

/// A one-operand elementwise kernel over `N`-lane chunks with `load`/`store` of that width.
macro_rules! unary {
    (
        $(#[$doc:meta])* $name:ident, $op:literal, $vector:ident, $n:expr,
        $load:ident, $store:ident, $store_new:ident
    ) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// The CPU must have AVX-512F. Dispatch installs this kernel only on such a CPU (runtime detection).
        #[kernel(op = $op, key = CpuSimd, cpu = "avx512f")]
        #[target_feature(enable = "avx512f")]
        pub fn $name(x: &Tensor) -> Result<Tensor> {
            let xs = host($op, x)?;
            let (xc, xt) = xs.as_chunks::<{ $n }>();
            let mut out = Vec::with_capacity(xs.len());
            let (oc, ot) = out.spare_capacity_mut()[..xs.len()].as_chunks_mut::<{ $n }>();
            for (o, a) in oc.iter_mut().zip(xc) {
                $store_new(o, $vector($load(a)));
            }
            let mut last = [0.0; $n];
            $store(&mut last, $vector($load(&padded(xt))));
            for (o, value) in ot.iter_mut().zip(last) {
                o.write(value);
            }
            // SAFETY: all `xs.len()` elements were written: the full chunks (`oc` and `xc` both
            // have `len / N`) and then the tail (`ot`).
            unsafe { out.set_len(xs.len()) };
            Tensor::from_vec(out, x.shape())
        }
    };
}

binary!(
    /// `x + y`.
    add_avx512, "add", _mm512_add_ps
);
binary!(
    /// `x - y`.
    sub_avx512, "sub", _mm512_sub_ps
);
binary!(
    /// `x * y`.
    mul_avx512, "mul", _mm512_mul_ps
);
binary!(
    /// `x / y`.
    div_avx512, "div", _mm512_div_ps
);

/// Flips the sign bit, as scalar negation does (NaN included).
#[inline]
#[target_feature(enable = "avx512f")]
fn negate(a: __m512) -> __m512 {
    let sign = _mm512_set1_epi32(i32::MIN);
    _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), sign))
}

/// `0` where `a < 0`, else `a`: NaN and `-0.0` pass through, as in the naive kernel.
#[inline]
#[target_feature(enable = "avx512f")]
fn rectify(a: __m512) -> __m512 {
    let zero = _mm512_setzero_ps();
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, zero), a, zero)
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

unary!(
    /// `-x`.
    neg_avx512, "neg", negate, LANES, load, store, store_new
);
unary!(
    /// `max(x, 0)`, NaN kept.
    relu_avx512, "relu", rectify, LANES, load, store, store_new
);
unary!(
    /// `e^x`, within 1 ulp of the naive kernel.
    exp_avx512, "exp", exp8, 8, load8, store8, store8_new
);

/// The sum of `xs` in `f64`: 4 vectors of 8 `f64` partial sums each, so that additions overlap.
#[target_feature(enable = "avx512f")]
fn total(xs: &[f32]) -> f64 {
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let mut acc = [_mm512_set1_pd(-0.0); 4];
    let (blocks, tail) = xs.as_chunks::<32>();
    for block in blocks {
        let (quarters, _) = block.as_chunks::<8>();
        for (a, v) in acc.iter_mut().zip(quarters) {
            *a = _mm512_add_pd(*a, _mm512_cvtps_pd(load8(v)));
        }
    }
    let mut partials = [-0.0f64; 32];
    for (lanes, v) in partials.as_chunks_mut::<8>().0.iter_mut().zip(acc) {
        // SAFETY: `lanes` is 8 writable `f64`; `storeu` has no alignment requirement.
        unsafe { _mm512_storeu_pd(lanes.as_mut_ptr(), v) }
    }
    super::finish_sum(&mut partials, tail)
}

/// The sum, as a 0-dimensional tensor.
///
/// # Safety
///
/// The CPU must have AVX-512F. Dispatch installs this kernel only on such a CPU (runtime detection).
#[kernel(op = "sum", key = CpuSimd, cpu = "avx512f")]
#[target_feature(enable = "avx512f")]
pub fn sum_avx512(x: &Tensor) -> Result<Tensor> {
    Ok(Tensor::scalar(total(host("sum", x)?) as f32))
}

/// The mean, as a 0-dimensional tensor (NaN when empty).
///
/// # Safety
///
/// The CPU must have AVX-512F. Dispatch installs this kernel only on such a CPU (runtime detection).
#[kernel(op = "mean", key = CpuSimd, cpu = "avx512f")]
#[target_feature(enable = "avx512f")]
pub fn mean_avx512(x: &Tensor) -> Result<Tensor> {
    let n = x.numel() as f64;
    Ok(Tensor::scalar((total(host("mean", x)?) / n) as f32))
}
