//! x86_64 AVX2 + FMA kernels: 8 `f32` lanes.
//!
//! This file holds the lane helpers; `template::simd_kernels!` at the end makes them kernels,
//! each a `#[target_feature(enable = "avx2,fma")]` function registered with `cpu = "avx2,fma"`:
//! dispatch installs it only on CPUs where both were detected. `unsafe` is used only for the
//! load and store intrinsics (in `load`, `store`, `first_lanes`, `load_first`, `store_first` and
//! `lane_sums`'s spill).

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entries

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use switchyard::{Result, Tensor, kernel};

use super::math_f32::{
    EXP_HI, EXP_LO, EXP_PLAIN, EXP_Q, LN2_HI, LN2_LO, LOG_P, LOG_SPLIT, LOG_SUBNORMAL_SCALE, LOG2E,
    SHIFTER, SIGMOID_HI, TANH_2X_HI, TANH_SMALL, TANH_T,
};
use super::template::{SUM_LANES, lane_sums_of, realigned_lane_sums_of, simd_kernels};

/// `f32` lanes of one vector.
pub const LANES: usize = 8;

#[inline]
#[target_feature(enable = "avx")]
pub(super) fn load(chunk: &[f32; LANES]) -> __m256 {
    // SAFETY: `chunk` is 8 readable `f32`; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_ps(chunk.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx")]
pub(super) fn store(value: __m256) -> [f32; LANES] {
    let mut lanes = [0.0; LANES];
    // SAFETY: `lanes` is 8 writable `f32`; `storeu` has no alignment requirement.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), value) };
    lanes
}

/// Eight all-ones lanes then eight zero lanes: the 8 lanes from `LANES - n` are the mask of
/// a vector's first `n` lanes, one load (building it from `n` takes a dozen instructions).
static FIRST_LANES: [i32; 2 * LANES] = [-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0];

/// The mask of a vector's first `n.min(LANES)` lanes (every masked access of the AVX2 kernels
/// takes its mask here).
#[inline]
#[target_feature(enable = "avx")]
pub(super) fn first_lanes(n: usize) -> __m256i {
    let from = LANES - n.min(LANES);
    // SAFETY: `from + LANES ≤ 2 · LANES`: 8 readable `i32`; `loadu` has no alignment
    // requirement.
    unsafe { _mm256_loadu_si256(FIRST_LANES[from..].as_ptr().cast()) }
}

/// `xs` (fewer than `LANES` elements) in the first lanes, zeros in the rest.
#[inline]
#[target_feature(enable = "avx")]
pub(super) fn load_first(xs: &[f32]) -> [f32; LANES] {
    // SAFETY: the mask enables the first `min(len, 8)` lanes only, and a masked load reads
    // (and can fault on) enabled lanes alone: every element read is one of `xs`'s.
    store(unsafe { _mm256_maskload_ps(xs.as_ptr(), first_lanes(xs.len())) })
}

/// The first `out.len()` (fewer than `LANES`) lanes into `out`.
#[inline]
#[target_feature(enable = "avx")]
pub(super) fn store_first(out: &mut [MaybeUninit<f32>], lanes: [f32; LANES]) {
    // SAFETY: the mask enables the first `min(len, 8)` lanes only, and a masked store writes
    // enabled lanes alone: every element written is one of `out`'s, which are writable.
    unsafe {
        _mm256_maskstore_ps(
            out.as_mut_ptr().cast::<f32>(),
            first_lanes(out.len()),
            load(&lanes),
        )
    }
}

#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn add(a: __m256, b: __m256) -> __m256 {
    _mm256_add_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn sub(a: __m256, b: __m256) -> __m256 {
    _mm256_sub_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn mul(a: __m256, b: __m256) -> __m256 {
    _mm256_mul_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn div(a: __m256, b: __m256) -> __m256 {
    _mm256_div_ps(a, b)
}

/// Flips the sign bit, as scalar negation does (NaN included).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn neg(a: __m256) -> __m256 {
    _mm256_xor_ps(a, _mm256_set1_ps(-0.0))
}

/// `0` where `a < 0`, else `a`: NaN and `-0.0` pass through, as in the naive kernel. One
/// `maxps(0, a)`, which returns its second operand unless the first is greater (so `a` itself
/// for a NaN, of any payload, and for either zero): the naive kernel's bits.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn relu(a: __m256) -> __m256 {
    _mm256_max_ps(_mm256_setzero_ps(), a)
}

/// `out ≤ 0 ? +0 : grad`, as the op's decomposition (`le`, `where`) selects: the ordered
/// comparison is false for a NaN `out`, so `grad` passes there, bit for bit.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn relu_backward(grad: __m256, out: __m256) -> __m256 {
    let at_most_zero = _mm256_cmp_ps::<_CMP_LE_OQ>(out, _mm256_setzero_ps());
    _mm256_andnot_ps(at_most_zero, grad)
}

/// Where `x` is NaN, `x + x` (the quieted input, as the C library's functions return), else
/// `result`: the arithmetic on a NaN lane computes garbage (its `k` is no integer).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn nan_as_input(x: __m256, result: __m256) -> __m256 {
    _mm256_blendv_ps(
        result,
        _mm256_add_ps(x, x),
        _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x),
    )
}

/// `p(x)` for the coefficients `c` in Horner's order, with FMA.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn horner(x: __m256, c: &[f32]) -> __m256 {
    let mut p = _mm256_set1_ps(c[0]);
    for &ci in &c[1..] {
        p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(ci));
    }
    p
}

/// `2^k` for integer lanes `k` in `[−126, 127]`: the biased exponent shifted into place.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn pow2(k: __m256i) -> __m256 {
    _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(
        k,
        _mm256_set1_epi32(127),
    )))
}

/// `(k, r₁, t)` with `e^z = 2^k · (1 + r₁ + t)`, for `z` in `[−104, 104]` (see `math_f32`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn exp_parts(z: __m256) -> (__m256i, __m256, __m256) {
    let shifter = _mm256_set1_ps(SHIFTER);
    let shifted = _mm256_fmadd_ps(z, _mm256_set1_ps(LOG2E), shifter);
    let kf = _mm256_sub_ps(shifted, shifter);
    let k = _mm256_sub_epi32(_mm256_castps_si256(shifted), _mm256_castps_si256(shifter));
    let r1 = _mm256_fnmadd_ps(kf, _mm256_set1_ps(LN2_HI), z);
    let c = _mm256_mul_ps(kf, _mm256_set1_ps(LN2_LO));
    let r = _mm256_sub_ps(r1, c);
    let t = _mm256_fmsub_ps(_mm256_mul_ps(r, r), horner(r, &EXP_Q), c);
    (k, r1, t)
}

/// `e^x` of 8 lanes, in `f32` (see `math_f32`): `(1 + s) · 2^(k − ⌊k/2⌋) · 2^⌊k/2⌋`.
///
/// Where every lane has `|x| < 86` (the common case, one predictable branch per vector), the
/// result `(1 + s)·2^k` is a normal number, so both products by powers of two are exact and so
/// is adding `k` to the exponent field of `1 + s`, which this path does instead (no clamps, no
/// NaN lanes to fix): the same bits as the general path, in fewer instructions.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn exp(x: __m256) -> __m256 {
    let ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0), x);
    let plain = _mm256_cmp_ps::<_CMP_LT_OQ>(ax, _mm256_set1_ps(EXP_PLAIN));
    if _mm256_movemask_ps(plain) == 0xFF {
        let (k, r1, t) = exp_parts(x);
        let p = _mm256_add_ps(_mm256_set1_ps(1.0), _mm256_add_ps(r1, t));
        return _mm256_castsi256_ps(_mm256_add_epi32(
            _mm256_castps_si256(p),
            _mm256_slli_epi32::<23>(k),
        ));
    }
    // `max(LO, x)` returns `x` when `x` is NaN (the second operand); the lane is fixed below.
    let z = _mm256_min_ps(
        _mm256_set1_ps(EXP_HI),
        _mm256_max_ps(_mm256_set1_ps(EXP_LO), x),
    );
    let (k, r1, t) = exp_parts(z);
    let p = _mm256_add_ps(_mm256_set1_ps(1.0), _mm256_add_ps(r1, t));
    let half = _mm256_srai_epi32::<1>(k);
    let scaled = _mm256_mul_ps(p, pow2(_mm256_sub_epi32(k, half)));
    nan_as_input(x, _mm256_mul_ps(scaled, pow2(half)))
}

/// `(q₀, ρ, a₁, a₂)` with `1 / (1 + e^z) = q₀ · (1 + ρ) · a₁ · a₂` (`a₁·a₂ = 2^−j`), for `z` in
/// `[−44, 104]` (see `math_f32`'s `sigmoid`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn recip_one_plus_exp(z: __m256) -> (__m256, __m256, __m256, __m256) {
    let (k, r1, t) = exp_parts(z);
    let one = _mm256_set1_ps(1.0);
    let j = _mm256_max_epi32(k, _mm256_setzero_si256());
    let half = _mm256_srai_epi32::<1>(j);
    let a1 = pow2(_mm256_sub_epi32(_mm256_setzero_si256(), half));
    let a2 = pow2(_mm256_sub_epi32(half, j));
    // `D = a + b·(1 + r₁ + t)`: one of `a = 2^−j` and `b = 2^(k−j)` is 1, the other `m ≤ 1`.
    let b = pow2(_mm256_sub_epi32(k, j));
    let m = _mm256_min_ps(_mm256_mul_ps(a1, a2), b);
    let a_b = _mm256_add_ps(one, m);
    let a_b_err = _mm256_add_ps(_mm256_sub_ps(one, a_b), m);
    // `r₁ + t` as a pair (2Sum: `t`, up to 0.07, may be the larger where `r₁` is near 0).
    let s = _mm256_add_ps(r1, t);
    let t_part = _mm256_sub_ps(s, r1);
    let s_err = _mm256_add_ps(
        _mm256_sub_ps(r1, _mm256_sub_ps(s, t_part)),
        _mm256_sub_ps(t, t_part),
    );
    let u = _mm256_mul_ps(b, s);
    let d_hi = _mm256_add_ps(a_b, u);
    let d_lo = _mm256_add_ps(_mm256_sub_ps(a_b, d_hi), u);
    let d_lo = _mm256_fmadd_ps(b, s_err, _mm256_add_ps(d_lo, a_b_err));
    let q0 = _mm256_div_ps(one, d_hi);
    let rho = _mm256_fnmadd_ps(q0, d_hi, one);
    let rho = _mm256_fnmadd_ps(q0, d_lo, rho);
    (q0, rho, a1, a2)
}

/// `1 / (1 + e^−x)` of 8 lanes (see `math_f32`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn sigmoid(x: __m256) -> __m256 {
    let z = _mm256_min_ps(
        _mm256_set1_ps(-EXP_LO),
        _mm256_max_ps(_mm256_set1_ps(-SIGMOID_HI), neg(x)),
    );
    let (q0, rho, a1, a2) = recip_one_plus_exp(z);
    let q = _mm256_fmadd_ps(q0, rho, q0);
    nan_as_input(x, _mm256_mul_ps(_mm256_mul_ps(q, a1), a2))
}

/// `tanh` of 8 lanes (see `math_f32`): an odd polynomial near 0, `2·sigmoid(2|x|) − 1` beyond.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn tanh(x: __m256) -> __m256 {
    let sign_bit = _mm256_set1_ps(-0.0);
    let ax = _mm256_andnot_ps(sign_bit, x);
    let x2 = _mm256_mul_ps(x, x);
    let small = _mm256_fmadd_ps(_mm256_mul_ps(x, x2), horner(x2, &TANH_T), x);
    let z = _mm256_max_ps(
        _mm256_set1_ps(-TANH_2X_HI),
        _mm256_sub_ps(_mm256_setzero_ps(), _mm256_add_ps(ax, ax)),
    );
    let (q0, rho, _, _) = recip_one_plus_exp(z);
    let two_q0 = _mm256_add_ps(q0, q0);
    let large = _mm256_fmadd_ps(two_q0, rho, _mm256_sub_ps(two_q0, _mm256_set1_ps(1.0)));
    let is_small = _mm256_cmp_ps::<_CMP_LT_OQ>(ax, _mm256_set1_ps(TANH_SMALL));
    // `x`'s sign onto `tanh|x|`, and onto `tanh(−0) = −0` (the polynomial gives `+0` there).
    let sign = _mm256_and_ps(x, sign_bit);
    nan_as_input(
        x,
        _mm256_or_ps(_mm256_blendv_ps(large, small, is_small), sign),
    )
}

/// `ln x` of 8 lanes (see `math_f32`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn log(x: __m256) -> __m256 {
    let tiny = _mm256_cmp_ps::<_CMP_LT_OQ>(x, _mm256_set1_ps(f32::MIN_POSITIVE));
    let xs = _mm256_blendv_ps(
        x,
        _mm256_mul_ps(x, _mm256_set1_ps(LOG_SUBNORMAL_SCALE)),
        tiny,
    );
    let split = _mm256_set1_epi32(LOG_SPLIT);
    let ix = _mm256_sub_epi32(_mm256_castps_si256(xs), split);
    let e = _mm256_srai_epi32::<23>(ix);
    let mantissa = _mm256_and_si256(ix, _mm256_set1_epi32(0x007F_FFFF));
    let f = _mm256_sub_ps(
        _mm256_castsi256_ps(_mm256_add_epi32(mantissa, split)),
        _mm256_set1_ps(1.0),
    );
    let ef = _mm256_sub_ps(
        _mm256_cvtepi32_ps(e),
        _mm256_and_ps(tiny, _mm256_set1_ps(23.0)),
    );
    // `e·LN2_HI + f`, then `− f²/2`: Fast2Sum each (the first term is the larger).
    let h = _mm256_mul_ps(ef, _mm256_set1_ps(LN2_HI));
    let a = _mm256_add_ps(h, f);
    let a_err = _mm256_add_ps(_mm256_sub_ps(h, a), f);
    let f2 = _mm256_mul_ps(f, f);
    let f2_err = _mm256_fmsub_ps(f, f, f2);
    let g = _mm256_mul_ps(f2, _mm256_set1_ps(-0.5));
    let b = _mm256_add_ps(a, g);
    let b_err = _mm256_add_ps(_mm256_sub_ps(a, b), g);
    let lo = _mm256_fmadd_ps(f2_err, _mm256_set1_ps(-0.5), _mm256_add_ps(a_err, b_err));
    let lo = _mm256_fmadd_ps(ef, _mm256_set1_ps(LN2_LO), lo);
    let lo = _mm256_fmadd_ps(_mm256_mul_ps(f2, f), horner(f, &LOG_P), lo);
    let result = _mm256_add_ps(b, lo);
    // `ln ±0 = −inf`, `ln` of a negative number is NaN, `ln inf = inf`.
    let zero = _mm256_setzero_ps();
    let result = _mm256_blendv_ps(
        result,
        _mm256_set1_ps(f32::NEG_INFINITY),
        _mm256_cmp_ps::<_CMP_EQ_OQ>(x, zero),
    );
    let result = _mm256_blendv_ps(
        result,
        _mm256_set1_ps(f32::NAN),
        _mm256_cmp_ps::<_CMP_LT_OQ>(x, zero),
    );
    let infinity = _mm256_set1_ps(f32::INFINITY);
    let result = _mm256_blendv_ps(result, infinity, _mm256_cmp_ps::<_CMP_EQ_OQ>(x, infinity));
    nan_as_input(x, result)
}

/// The `f64` lane sums of a superblock's runs ([`lane_sums_of`]): `f32` accumulator `j` of a
/// block of [`SUM_BLOCK`](super::template::SUM_BLOCK) elements is lane `j % 8` of vector `j / 8`;
/// lane sum `j` is lane `j % 4` of `f64` vector `j / 4`. Runs that do not start on a 32-byte
/// boundary are read in aligned windows ([`realigned_lane_sums_of`]): the same bits.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lane_sums(runs: &[[f32; SUM_LANES]]) -> [f64; SUM_LANES] {
    type Acc = [__m256; SUM_LANES / LANES];
    let add_run = |mut sums: Acc, run: &[f32; SUM_LANES]| {
        for (sum, v) in sums.iter_mut().zip(run.as_chunks::<LANES>().0) {
            *sum = _mm256_add_ps(*sum, load(v));
        }
        sums
    };
    let widen = |mut wide: [__m256d; SUM_LANES / 4], sums: Acc| {
        // Vector `i` holds lanes `8i..8i + 8`: its low half onto `wide[2i]`, its high onto
        // `wide[2i + 1]`.
        for (i, sum) in sums.into_iter().enumerate() {
            let (low, high) = (_mm256_castps256_ps128(sum), _mm256_extractf128_ps::<1>(sum));
            wide[2 * i] = _mm256_add_pd(wide[2 * i], _mm256_cvtps_pd(low));
            wide[2 * i + 1] = _mm256_add_pd(wide[2 * i + 1], _mm256_cvtps_pd(high));
        }
        wide
    };
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let wide = [_mm256_set1_pd(-0.0); SUM_LANES / 4];
    let zero = || [_mm256_set1_ps(-0.0); SUM_LANES / LANES];
    let shift = runs.as_ptr().addr() / size_of::<f32>() % LANES;
    let wide = if shift == 0 {
        lane_sums_of(runs, wide, zero, add_run, widen)
    } else {
        // Position `q` of the windows to accumulator `(q − shift) % 32`: result lane `i` of
        // vector `v` takes position `8v + i + shift`, lane `(i + shift) % 8` of vector `v`, or
        // of vector `v + 1` where `i + shift ≥ 8` (`shift` is below 8).
        let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let moved = _mm256_add_epi32(lane, _mm256_set1_epi32(shift as i32));
        let index = _mm256_and_si256(moved, _mm256_set1_epi32(7));
        let from_next = _mm256_castsi256_ps(_mm256_cmpgt_epi32(moved, _mm256_set1_epi32(7)));
        let rotate = |sums: Acc| {
            std::array::from_fn(|v| {
                let this = _mm256_permutevar8x32_ps(sums[v], index);
                let next = _mm256_permutevar8x32_ps(sums[(v + 1) % sums.len()], index);
                _mm256_blendv_ps(this, next, from_next)
            })
        };
        let add_part = |sums, part: &[f32], at| add_part(sums, part, at);
        realigned_lane_sums_of(runs, shift, wide, zero, add_run, add_part, rotate, widen)
    };
    let mut lanes = [0.0; SUM_LANES];
    for (chunk, sum) in lanes.as_chunks_mut::<4>().0.iter_mut().zip(wide) {
        // SAFETY: `chunk` is 4 writable `f64`; `storeu` has no alignment requirement.
        unsafe { _mm256_storeu_pd(chunk.as_mut_ptr(), sum) };
    }
    lanes
}

/// `sums` plus `part` at positions `at..at + part.len()` of the 32 (lane `i` of vector `v` is
/// position `8v + i`); other positions, and any past 32, unchanged.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn add_part(
    mut sums: [__m256; SUM_LANES / LANES],
    part: &[f32],
    at: usize,
) -> [__m256; SUM_LANES / LANES] {
    let end = at.saturating_add(part.len()).min(SUM_LANES);
    let at = at.min(end);
    let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (v, sum) in sums.iter_mut().enumerate() {
        let first = LANES * v;
        if at >= first + LANES || end <= first {
            continue;
        }
        // Both bounds are at most 32, so the casts are exact.
        let position = _mm256_add_epi32(lane, _mm256_set1_epi32(first as i32));
        let mask = _mm256_andnot_si256(
            _mm256_cmpgt_epi32(_mm256_set1_epi32(at as i32), position),
            _mm256_cmpgt_epi32(_mm256_set1_epi32(end as i32), position),
        );
        // Lane `i` is position `8v + i`, element `8v + i − at` of `part`.
        let lane_0 = part.as_ptr().wrapping_add(first).wrapping_sub(at);
        // SAFETY: `maskload` reads only the lanes whose mask is set (the others are neither
        // accessed nor faulted on), and those are positions `at ≤ 8v + i < end ≤ at +
        // part.len()`: the elements `0 ≤ 8v + i − at < part.len()` of `part`. The address of
        // lane 0 is formed with wrapping arithmetic, so it may lie outside `part` without UB.
        let values = unsafe { _mm256_maskload_ps(lane_0, mask) };
        *sum = _mm256_blendv_ps(*sum, _mm256_add_ps(*sum, values), _mm256_castsi256_ps(mask));
    }
    sums
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
    log_avx2 = log,
    tanh_avx2 = tanh,
    sigmoid_avx2 = sigmoid,
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

#[cfg(test)]
mod tests {
    use super::lane_sums;
    use crate::cpu::simd::template::tests::check_lane_sums_at_every_offset;

    #[test]
    fn lane_sums_are_the_reference_bits_at_every_alignment() {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma"))
        {
            eprintln!("skipped: this CPU has no AVX2 and FMA");
            return;
        }
        // SAFETY: the CPU has AVX2 and FMA (checked above).
        check_lane_sums_at_every_offset(|runs| unsafe { lane_sums(runs) });
    }
}
