//! wasm32 SIMD kernels (`simd128`): 4 `f32` lanes, compiled only into a module built with
//! `-C target-feature=+simd128` (WebAssembly has no runtime detection: an engine without SIMD
//! refuses such a module as a whole, so every kernel here is a plain function).
//!
//! This file holds the lane helpers; `template::simd_kernels!` at the end makes them kernels,
//! registered with `cpu = "simd128"` (`SWITCHYARD_CPU_CAPABILITY=default` leaves them
//! unreachable). `unsafe` is used only for the load and store intrinsics (in `load` and `store`).
//!
//! wasm SIMD has no fused multiply-add (relaxed SIMD's `madd` may or may not fuse), and the
//! transcendental algorithms (`math_f32`) need one: `fma` below computes `a·b + c` rounded once,
//! exactly as a fused instruction does, in `f64` lanes. So the transcendental kernels give the
//! same bits as the AVX2, AVX-512 and NEON ones, at the cost of some twenty instructions per FMA.

#![allow(unsafe_code)] // the load/store intrinsics below

use core::arch::wasm32::*;

use switchyard::{Result, Tensor, kernel};

use super::math_f32::{
    EXP_HI, EXP_LO, EXP_Q, LN2_HI, LN2_LO, LOG_P, LOG_SPLIT, LOG_SUBNORMAL_SCALE, LOG2E, SHIFTER,
    SIGMOID_HI, TANH_2X_HI, TANH_SMALL, TANH_T,
};
use super::template::{SUM_BLOCK, SUM_LANES, simd_kernels};

/// `f32` lanes of one vector.
pub const LANES: usize = 4;

#[inline]
fn load(chunk: &[f32; LANES]) -> v128 {
    // SAFETY: `chunk` is 16 readable bytes; `v128_load` has no alignment requirement.
    unsafe { v128_load(chunk.as_ptr().cast::<v128>()) }
}

#[inline]
fn store(value: v128) -> [f32; LANES] {
    let mut lanes = [0.0; LANES];
    // SAFETY: `lanes` is 16 writable bytes; `v128_store` has no alignment requirement.
    unsafe { v128_store(lanes.as_mut_ptr().cast::<v128>(), value) };
    lanes
}

#[inline]
fn splat(x: f32) -> v128 {
    f32x4_splat(x)
}

#[inline]
fn add(a: v128, b: v128) -> v128 {
    f32x4_add(a, b)
}

#[inline]
fn sub(a: v128, b: v128) -> v128 {
    f32x4_sub(a, b)
}

#[inline]
fn mul(a: v128, b: v128) -> v128 {
    f32x4_mul(a, b)
}

#[inline]
fn div(a: v128, b: v128) -> v128 {
    f32x4_div(a, b)
}

/// Flips the sign bit, as scalar negation does (NaN included).
#[inline]
fn neg(a: v128) -> v128 {
    f32x4_neg(a)
}

/// `0` where `a < 0`, else `a`: NaN and `-0.0` pass through, as in the naive kernel.
#[inline]
fn relu(a: v128) -> v128 {
    let zero = splat(0.0);
    v128_bitselect(zero, a, f32x4_lt(a, zero))
}

/// `out ≤ 0 ? +0 : grad` (see the AVX2 twin).
#[inline]
fn relu_backward(grad: v128, out: v128) -> v128 {
    v128_andnot(grad, f32x4_le(out, splat(0.0)))
}

/// Where `x` is NaN, `x + x` (the quieted input, as the C library's functions return), else
/// `result`: the arithmetic on a NaN lane computes garbage (its `k` is no integer).
#[inline]
fn nan_as_input(x: v128, result: v128) -> v128 {
    v128_bitselect(result, f32x4_add(x, x), f32x4_eq(x, x))
}

/// `a·b + c` of 2 lanes, each `f32` widened to `f64`, rounded to odd in `f64`: the product is
/// exact (24 + 24 bits < 53), the sum rounds to nearest, and 2Sum gives its exact error; where
/// the sum was inexact and its last bit is 0, it steps one `f64` ulp towards the exact value.
/// Rounding that to `f32` then rounds the exact `a·b + c` once, to nearest (round-to-odd with
/// 53 ≥ 24 + 2 bits never leaves a false tie; Boldo and Melquiond, 2008).
#[inline]
fn fma_f64_to_odd(a: v128, b: v128, c: v128) -> v128 {
    let p = f64x2_mul(a, b);
    let s = f64x2_add(p, c);
    let c_part = f64x2_sub(s, p);
    let err = f64x2_add(f64x2_sub(p, f64x2_sub(s, c_part)), f64x2_sub(c, c_part));
    // Infinite or NaN lanes have a NaN `err`: neither comparison holds, and `s` stays.
    let zero = f64x2_splat(0.0);
    let inexact = v128_or(f64x2_lt(err, zero), f64x2_gt(err, zero));
    let even = i64x2_eq(v128_and(s, i64x2_splat(1)), i64x2_splat(0));
    // `+1` on the bits moves away from 0: towards the exact value where `err` has `s`'s sign
    // (`s` is not 0 here: a zero sum is exact), else `−1`.
    let opposite = i64x2_shr(v128_xor(s, err), 63);
    let step = i64x2_add(i64x2_shl(opposite, 1), i64x2_splat(1));
    i64x2_add(s, v128_and(step, v128_and(inexact, even)))
}

/// `a·b + c` rounded once to `f32`, as a fused multiply-add computes it (see `fma_f64_to_odd`).
#[inline]
fn fma(a: v128, b: v128, c: v128) -> v128 {
    let high = |v: v128| f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(v, v));
    let low = f64x2_promote_low_f32x4;
    let lo = fma_f64_to_odd(low(a), low(b), low(c));
    let hi = fma_f64_to_odd(high(a), high(b), high(c));
    i32x4_shuffle::<0, 1, 4, 5>(f32x4_demote_f64x2_zero(lo), f32x4_demote_f64x2_zero(hi))
}

/// `c − a·b` rounded once (NEON's `vfms`).
#[inline]
fn fms(c: v128, a: v128, b: v128) -> v128 {
    fma(f32x4_neg(a), b, c)
}

/// `p(x)` for the coefficients `c` in Horner's order, with FMA.
#[inline]
fn horner(x: v128, c: &[f32]) -> v128 {
    let mut p = splat(c[0]);
    for &ci in &c[1..] {
        p = fma(p, x, splat(ci));
    }
    p
}

/// `2^k` for integer lanes `k` in `[−126, 127]`: the biased exponent shifted into place.
#[inline]
fn pow2(k: v128) -> v128 {
    i32x4_shl(i32x4_add(k, i32x4_splat(127)), 23)
}

/// `(k, r₁, t)` with `e^z = 2^k · (1 + r₁ + t)`, for `z` in `[−104, 104]` (see `math_f32`).
#[inline]
fn exp_parts(z: v128) -> (v128, v128, v128) {
    let shifter = splat(SHIFTER);
    let shifted = fma(z, splat(LOG2E), shifter);
    let kf = f32x4_sub(shifted, shifter);
    let k = i32x4_sub(shifted, shifter);
    // `kf·LN2_HI` is exact (see `math_f32`), so the fused and the unfused `z − kf·LN2_HI` are
    // one rounding of the same value: no emulated FMA needed.
    let r1 = f32x4_sub(z, f32x4_mul(kf, splat(LN2_HI)));
    let c = f32x4_mul(kf, splat(LN2_LO));
    let r = f32x4_sub(r1, c);
    let t = fma(f32x4_mul(r, r), horner(r, &EXP_Q), f32x4_neg(c));
    (k, r1, t)
}

/// `e^x` of 4 lanes, in `f32` (see `math_f32`): `(1 + s) · 2^(k − ⌊k/2⌋) · 2^⌊k/2⌋`.
#[inline]
fn exp(x: v128) -> v128 {
    // wasm's min/max return NaN when either operand is NaN; the lane is fixed below.
    let z = f32x4_min(splat(EXP_HI), f32x4_max(splat(EXP_LO), x));
    let (k, r1, t) = exp_parts(z);
    let p = f32x4_add(splat(1.0), f32x4_add(r1, t));
    let half = i32x4_shr(k, 1);
    let scaled = f32x4_mul(p, pow2(i32x4_sub(k, half)));
    nan_as_input(x, f32x4_mul(scaled, pow2(half)))
}

/// `(q₀, ρ, a₁, a₂)` with `1 / (1 + e^z) = q₀ · (1 + ρ) · a₁ · a₂` (`a₁·a₂ = 2^−j`), for `z` in
/// `[−44, 104]` (see `math_f32`'s `sigmoid`; the AVX2 twin's steps).
#[inline]
fn recip_one_plus_exp(z: v128) -> (v128, v128, v128, v128) {
    let (k, r1, t) = exp_parts(z);
    let one = splat(1.0);
    let j = i32x4_max(k, i32x4_splat(0));
    let half = i32x4_shr(j, 1);
    let a1 = pow2(i32x4_neg(half));
    let a2 = pow2(i32x4_sub(half, j));
    // `D = a + b·(1 + r₁ + t)`: one of `a = 2^−j` and `b = 2^(k−j)` is 1, the other `m ≤ 1`.
    let b = pow2(i32x4_sub(k, j));
    let m = f32x4_min(f32x4_mul(a1, a2), b);
    let a_b = f32x4_add(one, m);
    let a_b_err = f32x4_add(f32x4_sub(one, a_b), m);
    // `r₁ + t` as a pair (2Sum: `t`, up to 0.07, may be the larger where `r₁` is near 0).
    let s = f32x4_add(r1, t);
    let t_part = f32x4_sub(s, r1);
    let s_err = f32x4_add(f32x4_sub(r1, f32x4_sub(s, t_part)), f32x4_sub(t, t_part));
    let u = f32x4_mul(b, s);
    let d_hi = f32x4_add(a_b, u);
    let d_lo = f32x4_add(f32x4_sub(a_b, d_hi), u);
    let d_lo = fma(b, s_err, f32x4_add(d_lo, a_b_err));
    let q0 = f32x4_div(one, d_hi);
    let rho = fms(one, q0, d_hi);
    let rho = fms(rho, q0, d_lo);
    (q0, rho, a1, a2)
}

/// `1 / (1 + e^−x)` of 4 lanes (see `math_f32`).
#[inline]
fn sigmoid(x: v128) -> v128 {
    let z = f32x4_min(splat(-EXP_LO), f32x4_max(splat(-SIGMOID_HI), f32x4_neg(x)));
    let (q0, rho, a1, a2) = recip_one_plus_exp(z);
    let q = fma(q0, rho, q0);
    nan_as_input(x, f32x4_mul(f32x4_mul(q, a1), a2))
}

/// `tanh` of 4 lanes (see `math_f32`): an odd polynomial near 0, `2·sigmoid(2|x|) − 1` beyond.
#[inline]
fn tanh(x: v128) -> v128 {
    let ax = f32x4_abs(x);
    let x2 = f32x4_mul(x, x);
    let small = fma(f32x4_mul(x, x2), horner(x2, &TANH_T), x);
    let z = f32x4_max(splat(-TANH_2X_HI), f32x4_neg(f32x4_add(ax, ax)));
    let (q0, rho, _, _) = recip_one_plus_exp(z);
    let two_q0 = f32x4_add(q0, q0);
    let large = fma(two_q0, rho, f32x4_sub(two_q0, splat(1.0)));
    let is_small = f32x4_lt(ax, splat(TANH_SMALL));
    let unsigned = v128_bitselect(small, large, is_small);
    // `x`'s sign onto `tanh|x|`, and onto `tanh(−0) = −0` (the polynomial gives `+0` there).
    let sign = v128_and(x, u32x4_splat(0x8000_0000));
    nan_as_input(x, v128_or(unsigned, sign))
}

/// `ln x` of 4 lanes (see `math_f32`; the AVX2 twin's steps).
#[inline]
fn log(x: v128) -> v128 {
    let tiny = f32x4_lt(x, splat(f32::MIN_POSITIVE));
    let xs = v128_bitselect(f32x4_mul(x, splat(LOG_SUBNORMAL_SCALE)), x, tiny);
    let split = i32x4_splat(LOG_SPLIT);
    let ix = i32x4_sub(xs, split);
    let e = i32x4_shr(ix, 23);
    let mantissa = v128_and(ix, i32x4_splat(0x007F_FFFF));
    let f = f32x4_sub(i32x4_add(mantissa, split), splat(1.0));
    let scaled_away = v128_and(tiny, splat(23.0));
    let ef = f32x4_sub(f32x4_convert_i32x4(e), scaled_away);
    // `e·LN2_HI + f`, then `− f²/2`: Fast2Sum each (the first term is the larger).
    let h = f32x4_mul(ef, splat(LN2_HI));
    let a = f32x4_add(h, f);
    let a_err = f32x4_add(f32x4_sub(h, a), f);
    let f2 = f32x4_mul(f, f);
    let f2_err = fma(f, f, f32x4_neg(f2));
    let g = f32x4_mul(f2, splat(-0.5));
    let b = f32x4_add(a, g);
    let b_err = f32x4_add(f32x4_sub(a, b), g);
    let lo = fma(f2_err, splat(-0.5), f32x4_add(a_err, b_err));
    let lo = fma(ef, splat(LN2_LO), lo);
    let lo = fma(f32x4_mul(f2, f), horner(f, &LOG_P), lo);
    let result = f32x4_add(b, lo);
    // `ln ±0 = −inf`, `ln` of a negative number is NaN, `ln inf = inf`.
    let zero = splat(0.0);
    let infinity = splat(f32::INFINITY);
    let result = v128_bitselect(splat(f32::NEG_INFINITY), result, f32x4_eq(x, zero));
    let result = v128_bitselect(splat(f32::NAN), result, f32x4_lt(x, zero));
    let result = v128_bitselect(infinity, result, f32x4_eq(x, infinity));
    nan_as_input(x, result)
}

/// The `f64` lane sums of a superblock's runs: within each block of [`SUM_BLOCK`] elements,
/// `f32` accumulator `j` (lane `j % 4` of vector `j / 4`) adds element `j` of each run, eight
/// additions overlapping; then each accumulator goes to `f64` and onto lane `j`'s sum.
#[inline]
fn lane_sums(runs: &[[f32; SUM_LANES]]) -> [f64; SUM_LANES] {
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let mut wide = [f64x2_splat(-0.0); SUM_LANES / 2];
    for block in runs.chunks(SUM_BLOCK / SUM_LANES) {
        let mut sums = [splat(-0.0); SUM_LANES / LANES];
        for run in block {
            for (sum, v) in sums.iter_mut().zip(run.as_chunks::<LANES>().0) {
                *sum = f32x4_add(*sum, load(v));
            }
        }
        // Vector `i` holds lanes `4i..4i + 4`: its low half onto `wide[2i]`, its high onto
        // `wide[2i + 1]`.
        for (i, sum) in sums.into_iter().enumerate() {
            let high = i32x4_shuffle::<2, 3, 2, 3>(sum, sum);
            wide[2 * i] = f64x2_add(wide[2 * i], f64x2_promote_low_f32x4(sum));
            wide[2 * i + 1] = f64x2_add(wide[2 * i + 1], f64x2_promote_low_f32x4(high));
        }
    }
    let mut lanes = [0.0; SUM_LANES];
    for (chunk, sum) in lanes.as_chunks_mut::<2>().0.iter_mut().zip(wide) {
        *chunk = [f64x2_extract_lane::<0>(sum), f64x2_extract_lane::<1>(sum)];
    }
    lanes
}

// One kernel per line, so that each registration's `file:line` in dumps is its own.
simd_kernels! {
    cpu = "simd128", needs = "SIMD128";
    add_simd128 = add,
    sub_simd128 = sub,
    mul_simd128 = mul,
    div_simd128 = div,
    neg_simd128 = neg,
    relu_simd128 = relu,
    relu_backward_simd128 = relu_backward,
    exp_simd128 = exp,
    log_simd128 = log,
    tanh_simd128 = tanh,
    sigmoid_simd128 = sigmoid,
    sum_simd128 = sum,
    mean_simd128 = mean,
}

/// `matrixmultiply`'s sgemm: its portable kernel (the crate has no wasm SIMD one), compiled
/// with `simd128` like the rest of the module.
#[kernel(op = switchyard::ops::matmul, key = CpuSimd, cpu = "simd128", dtypes = "f32")]
pub fn matmul_simd128(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    super::matmul::gemm(x, y, super::matmul::Engine::MatrixMultiply)
}
