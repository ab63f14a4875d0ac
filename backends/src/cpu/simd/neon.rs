//! aarch64 NEON kernels: 4 `f32` lanes.
//!
//! This file holds the lane helpers; `template::simd_kernels!` at the end makes them kernels,
//! registered with `cpu = "neon"` (`SWITCHYARD_CPU_CAPABILITY=default` leaves them unreachable).
//! `unsafe` is used only for the load and store intrinsics (in `load` and `store`).

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entries

use std::arch::aarch64::*;

use switchyard::{Result, Tensor, kernel};

use super::math_f32::{
    EXP_HI, EXP_LO, EXP_Q, LN2_HI, LN2_LO, LOG_P, LOG_SPLIT, LOG_SUBNORMAL_SCALE, LOG2E, SHIFTER,
    SIGMOID_HI, TANH_2X_HI, TANH_SMALL, TANH_T,
};
use super::template::{SUM_LANES, lane_sums_of, simd_kernels};
// A tail's first lanes: copied in and out (no masked loads and stores here).
use super::template::{padded as load_first, write_lanes as store_first};

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

/// Where `x` is NaN, `x + x` (the quieted input, as the C library's functions return), else
/// `result`: the arithmetic on a NaN lane computes garbage (its `k` is no integer).
#[inline]
#[target_feature(enable = "neon")]
fn nan_as_input(x: float32x4_t, result: float32x4_t) -> float32x4_t {
    vbslq_f32(vceqq_f32(x, x), result, vaddq_f32(x, x))
}

/// `p(x)` for the coefficients `c` in Horner's order, with FMA.
#[inline]
#[target_feature(enable = "neon")]
fn horner(x: float32x4_t, c: &[f32]) -> float32x4_t {
    let mut p = vdupq_n_f32(c[0]);
    for &ci in &c[1..] {
        p = vfmaq_f32(vdupq_n_f32(ci), p, x);
    }
    p
}

/// `2^k` for integer lanes `k` in `[−126, 127]`: the biased exponent shifted into place.
#[inline]
#[target_feature(enable = "neon")]
fn pow2(k: int32x4_t) -> float32x4_t {
    vreinterpretq_f32_s32(vshlq_n_s32::<23>(vaddq_s32(k, vdupq_n_s32(127))))
}

/// `(k, r₁, t)` with `e^z = 2^k · (1 + r₁ + t)`, for `z` in `[−104, 104]` (see `math_f32`).
#[inline]
#[target_feature(enable = "neon")]
fn exp_parts(z: float32x4_t) -> (int32x4_t, float32x4_t, float32x4_t) {
    let shifter = vdupq_n_f32(SHIFTER);
    let shifted = vfmaq_f32(shifter, z, vdupq_n_f32(LOG2E));
    let kf = vsubq_f32(shifted, shifter);
    let k = vsubq_s32(
        vreinterpretq_s32_f32(shifted),
        vreinterpretq_s32_f32(shifter),
    );
    let r1 = vfmsq_f32(z, kf, vdupq_n_f32(LN2_HI));
    let c = vmulq_f32(kf, vdupq_n_f32(LN2_LO));
    let r = vsubq_f32(r1, c);
    let t = vfmaq_f32(vnegq_f32(c), vmulq_f32(r, r), horner(r, &EXP_Q));
    (k, r1, t)
}

/// `e^x` of 4 lanes, in `f32` (see `math_f32`): `(1 + s) · 2^(k − ⌊k/2⌋) · 2^⌊k/2⌋`.
#[inline]
#[target_feature(enable = "neon")]
fn exp(x: float32x4_t) -> float32x4_t {
    // NEON's max/min return NaN when either operand is NaN; the lane is fixed below.
    let z = vminq_f32(vdupq_n_f32(EXP_HI), vmaxq_f32(vdupq_n_f32(EXP_LO), x));
    let (k, r1, t) = exp_parts(z);
    let p = vaddq_f32(vdupq_n_f32(1.0), vaddq_f32(r1, t));
    let half = vshrq_n_s32::<1>(k);
    let scaled = vmulq_f32(p, pow2(vsubq_s32(k, half)));
    nan_as_input(x, vmulq_f32(scaled, pow2(half)))
}

/// `(q₀, ρ, a₁, a₂)` with `1 / (1 + e^z) = q₀ · (1 + ρ) · a₁ · a₂` (`a₁·a₂ = 2^−j`), for `z` in
/// `[−44, 104]` (see `math_f32`'s `sigmoid`; the AVX2 twin's steps).
#[inline]
#[target_feature(enable = "neon")]
fn recip_one_plus_exp(z: float32x4_t) -> (float32x4_t, float32x4_t, float32x4_t, float32x4_t) {
    let (k, r1, t) = exp_parts(z);
    let one = vdupq_n_f32(1.0);
    let j = vmaxq_s32(k, vdupq_n_s32(0));
    let half = vshrq_n_s32::<1>(j);
    let a1 = pow2(vnegq_s32(half));
    let a2 = pow2(vsubq_s32(half, j));
    // `D = a + b·(1 + r₁ + t)`: one of `a = 2^−j` and `b = 2^(k−j)` is 1, the other `m ≤ 1`.
    let b = pow2(vsubq_s32(k, j));
    let m = vminq_f32(vmulq_f32(a1, a2), b);
    let a_b = vaddq_f32(one, m);
    let a_b_err = vaddq_f32(vsubq_f32(one, a_b), m);
    // `r₁ + t` as a pair (2Sum: `t`, up to 0.07, may be the larger where `r₁` is near 0).
    let s = vaddq_f32(r1, t);
    let t_part = vsubq_f32(s, r1);
    let s_err = vaddq_f32(vsubq_f32(r1, vsubq_f32(s, t_part)), vsubq_f32(t, t_part));
    let u = vmulq_f32(b, s);
    let d_hi = vaddq_f32(a_b, u);
    let d_lo = vaddq_f32(vsubq_f32(a_b, d_hi), u);
    let d_lo = vfmaq_f32(vaddq_f32(d_lo, a_b_err), b, s_err);
    let q0 = vdivq_f32(one, d_hi);
    let rho = vfmsq_f32(one, q0, d_hi);
    let rho = vfmsq_f32(rho, q0, d_lo);
    (q0, rho, a1, a2)
}

/// `1 / (1 + e^−x)` of 4 lanes (see `math_f32`).
#[inline]
#[target_feature(enable = "neon")]
fn sigmoid(x: float32x4_t) -> float32x4_t {
    let z = vminq_f32(
        vdupq_n_f32(-EXP_LO),
        vmaxq_f32(vdupq_n_f32(-SIGMOID_HI), vnegq_f32(x)),
    );
    let (q0, rho, a1, a2) = recip_one_plus_exp(z);
    let q = vfmaq_f32(q0, q0, rho);
    nan_as_input(x, vmulq_f32(vmulq_f32(q, a1), a2))
}

/// `tanh` of 4 lanes (see `math_f32`): an odd polynomial near 0, `2·sigmoid(2|x|) − 1` beyond.
#[inline]
#[target_feature(enable = "neon")]
fn tanh(x: float32x4_t) -> float32x4_t {
    let ax = vabsq_f32(x);
    let x2 = vmulq_f32(x, x);
    let small = vfmaq_f32(x, vmulq_f32(x, x2), horner(x2, &TANH_T));
    let z = vmaxq_f32(vdupq_n_f32(-TANH_2X_HI), vnegq_f32(vaddq_f32(ax, ax)));
    let (q0, rho, _, _) = recip_one_plus_exp(z);
    let two_q0 = vaddq_f32(q0, q0);
    let large = vfmaq_f32(vsubq_f32(two_q0, vdupq_n_f32(1.0)), two_q0, rho);
    let is_small = vcltq_f32(ax, vdupq_n_f32(TANH_SMALL));
    let unsigned = vreinterpretq_u32_f32(vbslq_f32(is_small, small, large));
    // `x`'s sign onto `tanh|x|`, and onto `tanh(−0) = −0` (the polynomial gives `+0` there).
    let sign = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x8000_0000));
    nan_as_input(x, vreinterpretq_f32_u32(vorrq_u32(unsigned, sign)))
}

/// `ln x` of 4 lanes (see `math_f32`; the AVX2 twin's steps).
#[inline]
#[target_feature(enable = "neon")]
fn log(x: float32x4_t) -> float32x4_t {
    let tiny = vcltq_f32(x, vdupq_n_f32(f32::MIN_POSITIVE));
    let xs = vbslq_f32(tiny, vmulq_f32(x, vdupq_n_f32(LOG_SUBNORMAL_SCALE)), x);
    let split = vdupq_n_s32(LOG_SPLIT);
    let ix = vsubq_s32(vreinterpretq_s32_f32(xs), split);
    let e = vshrq_n_s32::<23>(ix);
    let mantissa = vandq_s32(ix, vdupq_n_s32(0x007F_FFFF));
    let f = vsubq_f32(
        vreinterpretq_f32_s32(vaddq_s32(mantissa, split)),
        vdupq_n_f32(1.0),
    );
    let scaled_away =
        vreinterpretq_f32_u32(vandq_u32(tiny, vreinterpretq_u32_f32(vdupq_n_f32(23.0))));
    let ef = vsubq_f32(vcvtq_f32_s32(e), scaled_away);
    // `e·LN2_HI + f`, then `− f²/2`: Fast2Sum each (the first term is the larger).
    let h = vmulq_f32(ef, vdupq_n_f32(LN2_HI));
    let a = vaddq_f32(h, f);
    let a_err = vaddq_f32(vsubq_f32(h, a), f);
    let f2 = vmulq_f32(f, f);
    let f2_err = vfmaq_f32(vnegq_f32(f2), f, f);
    let g = vmulq_f32(f2, vdupq_n_f32(-0.5));
    let b = vaddq_f32(a, g);
    let b_err = vaddq_f32(vsubq_f32(a, b), g);
    let lo = vfmaq_f32(vaddq_f32(a_err, b_err), f2_err, vdupq_n_f32(-0.5));
    let lo = vfmaq_f32(lo, ef, vdupq_n_f32(LN2_LO));
    let lo = vfmaq_f32(lo, vmulq_f32(f2, f), horner(f, &LOG_P));
    let result = vaddq_f32(b, lo);
    // `ln ±0 = −inf`, `ln` of a negative number is NaN, `ln inf = inf`.
    let zero = vdupq_n_f32(0.0);
    let infinity = vdupq_n_f32(f32::INFINITY);
    let result = vbslq_f32(vceqq_f32(x, zero), vdupq_n_f32(f32::NEG_INFINITY), result);
    let result = vbslq_f32(vcltq_f32(x, zero), vdupq_n_f32(f32::NAN), result);
    let result = vbslq_f32(vceqq_f32(x, infinity), infinity, result);
    nan_as_input(x, result)
}

/// The `f64` lane sums of a superblock's runs ([`lane_sums_of`]): `f32` accumulator `j` is lane
/// `j % 4` of vector `j / 4`, and a finished block's vector `i` goes to `f64` onto lane sums
/// `4i..4i + 4` (its low half onto `wide[2i]`, its high onto `wide[2i + 1]`).
#[inline]
#[target_feature(enable = "neon")]
fn lane_sums(runs: &[[f32; SUM_LANES]]) -> [f64; SUM_LANES] {
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let wide = lane_sums_of(
        runs,
        [vdupq_n_f64(-0.0); SUM_LANES / 2],
        || [vdupq_n_f32(-0.0); SUM_LANES / LANES],
        |mut sums, run| {
            for (sum, v) in sums.iter_mut().zip(run.as_chunks::<LANES>().0) {
                *sum = vaddq_f32(*sum, load(v));
            }
            sums
        },
        |mut wide, sums| {
            for (i, sum) in sums.into_iter().enumerate() {
                wide[2 * i] = vaddq_f64(wide[2 * i], vcvt_f64_f32(vget_low_f32(sum)));
                wide[2 * i + 1] = vaddq_f64(wide[2 * i + 1], vcvt_high_f64_f32(sum));
            }
            wide
        },
    );
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
    log_neon = log,
    tanh_neon = tanh,
    sigmoid_neon = sigmoid,
    sum_neon = sum,
    mean_neon = mean,
}

/// `matrixmultiply`'s sgemm, whose own detection picks its NEON kernel.
#[kernel(op = switchyard::ops::matmul, key = CpuSimd, cpu = "neon", dtypes = "f32")]
pub fn matmul_neon(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    super::matmul::gemm(x, y, super::matmul::Engine::MatrixMultiply)
}
