//! aarch64 NEON kernels: 4 `f32` lanes (2 `f64` lanes inside `exp`).
//!
//! This file holds the lane helpers; `template::simd_kernels!` at the end makes them kernels,
//! registered with `cpu = "neon"` (`SWITCHYARD_CPU_CAPABILITY=default` leaves them unreachable).
//! `unsafe` is used only for the load and store intrinsics (in `load` and `store`).

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entries

use std::arch::aarch64::*;

use switchyard::{Result, Tensor, kernel};

use super::exp_f64::{HI, LN2_HI, LN2_LO, LO, LOG2E, TAYLOR};
use super::template::{SUM_BLOCK, SUM_LANES, simd_kernels};

/// `f32` lanes of one vector.
pub const LANES: usize = 4;

#[inline]
#[target_feature(enable = "neon")]
fn load(chunk: &[f32; LANES]) -> float32x4_t {
    // SAFETY: `chunk` is 4 readable `f32`; `vld1q` has no alignment requirement beyond `f32`'s.
    unsafe { vld1q_f32(chunk.as_ptr()) }
}

#[inline]
#[target_feature(enable = "neon")]
fn store(value: float32x4_t) -> [f32; LANES] {
    let mut lanes = [0.0; LANES];
    // SAFETY: `lanes` is 4 writable `f32`; `vst1q` has no alignment requirement beyond `f32`'s.
    unsafe { vst1q_f32(lanes.as_mut_ptr(), value) };
    lanes
}

#[inline]
#[target_feature(enable = "neon")]
fn add(a: float32x4_t, b: float32x4_t) -> float32x4_t {
    vaddq_f32(a, b)
}

#[inline]
#[target_feature(enable = "neon")]
fn sub(a: float32x4_t, b: float32x4_t) -> float32x4_t {
    vsubq_f32(a, b)
}

#[inline]
#[target_feature(enable = "neon")]
fn mul(a: float32x4_t, b: float32x4_t) -> float32x4_t {
    vmulq_f32(a, b)
}

#[inline]
#[target_feature(enable = "neon")]
fn div(a: float32x4_t, b: float32x4_t) -> float32x4_t {
    vdivq_f32(a, b)
}

/// Flips the sign bit, as scalar negation does (NaN included).
#[inline]
#[target_feature(enable = "neon")]
fn neg(a: float32x4_t) -> float32x4_t {
    vnegq_f32(a)
}

/// `0` where `a < 0`, else `a`: NaN and `-0.0` pass through, as in the naive kernel.
#[inline]
#[target_feature(enable = "neon")]
fn relu(a: float32x4_t) -> float32x4_t {
    let zero = vdupq_n_f32(0.0);
    vbslq_f32(vcltq_f32(a, zero), zero, a)
}

/// `out ≤ 0 ? +0 : grad` (see the AVX2 twin).
#[inline]
#[target_feature(enable = "neon")]
fn relu_backward(grad: float32x4_t, out: float32x4_t) -> float32x4_t {
    let at_most_zero = vcleq_f32(out, vdupq_n_f32(0.0));
    vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(grad), at_most_zero))
}

/// `exp` of 2 lanes, in `f64` (see `simd::exp_f64`).
#[inline]
#[target_feature(enable = "neon")]
fn exp2(x: float32x2_t) -> float32x2_t {
    // NEON's max/min return NaN when either operand is NaN, so NaN flows through.
    let wide = vminq_f64(vdupq_n_f64(HI), vmaxq_f64(vdupq_n_f64(LO), vcvt_f64_f32(x)));
    let k = vrndnq_f64(vmulq_f64(wide, vdupq_n_f64(LOG2E)));
    let r = vfmsq_f64(wide, k, vdupq_n_f64(LN2_HI));
    let r = vfmsq_f64(r, k, vdupq_n_f64(LN2_LO));
    let mut p = vdupq_n_f64(TAYLOR[0]);
    for c in &TAYLOR[1..] {
        p = vfmaq_f64(vdupq_n_f64(*c), p, r);
    }
    // 2^k from the biased exponent; `k` is an integer in [-150, 128].
    let biased = vaddq_s64(vcvtq_s64_f64(k), vdupq_n_s64(1023));
    let scale = vreinterpretq_f64_s64(vshlq_n_s64::<52>(biased));
    let result = vcvt_f32_f64(vmulq_f64(p, scale));
    // Where `x` is NaN, `x + x` (the quieted input, as the C library's `expf` returns).
    vbsl_f32(vceq_f32(x, x), result, vadd_f32(x, x))
}

/// `exp` of 4 lanes.
#[inline]
#[target_feature(enable = "neon")]
fn exp(x: float32x4_t) -> float32x4_t {
    vcombine_f32(exp2(vget_low_f32(x)), exp2(vget_high_f32(x)))
}

/// The `f64` lane sums of a superblock's runs: within each block of [`SUM_BLOCK`] elements,
/// `f32` accumulator `j` (lane `j % 4` of vector `j / 4`) adds element `j` of each run, eight
/// additions overlapping; then each accumulator goes to `f64` and onto lane `j`'s sum.
#[inline]
#[target_feature(enable = "neon")]
fn lane_sums(runs: &[[f32; SUM_LANES]]) -> [f64; SUM_LANES] {
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let mut wide = [vdupq_n_f64(-0.0); SUM_LANES / 2];
    for block in runs.chunks(SUM_BLOCK / SUM_LANES) {
        let mut sums = [vdupq_n_f32(-0.0); SUM_LANES / LANES];
        for run in block {
            for (sum, v) in sums.iter_mut().zip(run.as_chunks::<LANES>().0) {
                *sum = vaddq_f32(*sum, load(v));
            }
        }
        // Vector `i` holds lanes `4i..4i + 4`: its low half onto `wide[2i]`, its high onto
        // `wide[2i + 1]`.
        for (i, sum) in sums.into_iter().enumerate() {
            wide[2 * i] = vaddq_f64(wide[2 * i], vcvt_f64_f32(vget_low_f32(sum)));
            wide[2 * i + 1] = vaddq_f64(wide[2 * i + 1], vcvt_high_f64_f32(sum));
        }
    }
    let mut lanes = [0.0; SUM_LANES];
    for (chunk, sum) in lanes.as_chunks_mut::<2>().0.iter_mut().zip(wide) {
        *chunk = [vgetq_lane_f64::<0>(sum), vgetq_lane_f64::<1>(sum)];
    }
    lanes
}

// One kernel per line, so that each registration's `file:line` in dumps is its own.
simd_kernels! {
    cpu = "neon", needs = "NEON";
    add_neon = add,
    sub_neon = sub,
    mul_neon = mul,
    div_neon = div,
    neg_neon = neg,
    relu_neon = relu,
    relu_backward_neon = relu_backward,
    exp_neon = exp,
    sum_neon = sum,
    mean_neon = mean,
}

/// `matrixmultiply`'s sgemm, whose own detection picks its NEON kernel.
#[kernel(op = switchyard::ops::matmul, key = CpuSimd, cpu = "neon", dtypes = "f32")]
pub fn matmul_neon(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    super::matmul::gemm(x, y, super::matmul::Engine::MatrixMultiply)
}
