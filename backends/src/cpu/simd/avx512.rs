//! x86_64 AVX-512F kernels: 16 `f32` lanes for the elementwise ops, the transcendental ones
//! (`exp`, `log`, `tanh`, `sigmoid`) and the reductions; `matmul`'s 14 × 32 register tiles.
//!
//! Registered with `cpu = "avx512f"`, so on a CPU with AVX-512 they outrank the AVX2 variants,
//! and `SWITCHYARD_CPU_CAPABILITY=avx2` (or a CPU without AVX-512) leaves them unreachable. An
//! earlier round measured 512-bit elementwise and sum loops at 0.8–0.93× the AVX2 ones, when a
//! result's buffer was a 16-byte-aligned `Vec` and every 64-byte access split a cache line; the
//! host allocator now hands out 64-byte-aligned blocks (and the worker threads split work at
//! 256-byte boundaries), and ndarray's 512-bit loops measured 1.45–1.7× the AVX2 kernels at 1K
//! elements on a Zen 5 CPU, so the variants are back. Past L1 the two-operand elementwise ops
//! (`add`, `sub`, `mul`, `div`, `relu_backward`) were again slower at 512 bits on an Intel Xeon
//! (64K elements: 7.1 against 5.9 µs), so parts longer than 4096 elements run on the AVX2 lane
//! helpers (`narrow = avx2 past 4096` below; AVX-512F implies AVX2 and FMA). Only AVX-512F
//! instructions are used (no DQ or VL), so every AVX-512 CPU runs them.
//!
//! The transcendental ops take the AVX2 variants' steps (`simd::math_f32`), with `scalef` for
//! the scaling by `2^k` (one rounding, as the AVX2 variants' two exact factors): the same
//! function, element for element. `unsafe` is used only for the load and store intrinsics (in
//! `load`, `store`, `load_first`, `store_first` and `lane_sums`'s spill).

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entries

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use switchyard::{Result, Tensor, kernel};

use super::avx2;
use super::math_f32::{
    EXP_HI, EXP_LO, EXP_PLAIN, EXP_Q, LN2_HI, LN2_LO, LOG_P, LOG_SPLIT, LOG_SUBNORMAL_SCALE, LOG2E,
    SHIFTER, SIGMOID_HI, TANH_2X_HI, TANH_SMALL, TANH_T,
};
use super::template::{SUM_LANES, lane_sums_of, realigned_lane_sums_of, simd_kernels};

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

/// The mask of a vector's first `n.min(LANES)` lanes (every masked access of the AVX-512
/// kernels takes its mask here).
#[inline]
pub(super) fn first_lanes(n: usize) -> __mmask16 {
    // `n.min(16) ≤ 16`: the shift stays below 32 bits, and the value fits 16.
    ((1u32 << n.min(LANES)) - 1) as __mmask16
}

/// `xs` (fewer than `LANES` elements) in the first lanes, zeros in the rest.
#[inline]
#[target_feature(enable = "avx512f")]
fn load_first(xs: &[f32]) -> [f32; LANES] {
    // SAFETY: the mask enables the first `min(len, 16)` lanes only, and a masked load reads
    // (and can fault on) enabled lanes alone: every element read is one of `xs`'s.
    store(unsafe { _mm512_maskz_loadu_ps(first_lanes(xs.len()), xs.as_ptr()) })
}

/// The first `out.len()` (fewer than `LANES`) lanes into `out`.
#[inline]
#[target_feature(enable = "avx512f")]
fn store_first(out: &mut [MaybeUninit<f32>], lanes: [f32; LANES]) {
    let mask = first_lanes(out.len());
    // SAFETY: the mask enables the first `min(len, 16)` lanes only, and a masked store writes
    // enabled lanes alone: every element written is one of `out`'s, which are writable.
    unsafe { _mm512_mask_storeu_ps(out.as_mut_ptr().cast::<f32>(), mask, load(&lanes)) }
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

/// `0` where `a < 0`, else `a`, as `maxps(0, a)` (see the AVX2 twin).
#[inline]
#[target_feature(enable = "avx512f")]
fn relu(a: __m512) -> __m512 {
    _mm512_max_ps(_mm512_setzero_ps(), a)
}

/// `out ≤ 0 ? +0 : grad` (see the AVX2 twin).
#[inline]
#[target_feature(enable = "avx512f")]
fn relu_backward(grad: __m512, out: __m512) -> __m512 {
    let at_most_zero = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(out, _mm512_setzero_ps());
    _mm512_maskz_mov_ps(!at_most_zero, grad)
}

/// Where `x` is NaN, `x + x` (the quieted input, as the C library's functions return), else
/// `result`: the arithmetic on a NaN lane computes garbage (its `k` is no integer).
#[inline]
#[target_feature(enable = "avx512f")]
fn nan_as_input(x: __m512, result: __m512) -> __m512 {
    let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
    _mm512_mask_blend_ps(nan, result, _mm512_add_ps(x, x))
}

/// `p(x)` for the coefficients `c` in Horner's order, with FMA.
#[inline]
#[target_feature(enable = "avx512f")]
fn horner(x: __m512, c: &[f32]) -> __m512 {
    let mut p = _mm512_set1_ps(c[0]);
    for &ci in &c[1..] {
        p = _mm512_fmadd_ps(p, x, _mm512_set1_ps(ci));
    }
    p
}

/// `2^k` for integer lanes `k` in `[−126, 127]`: the biased exponent shifted into place.
#[inline]
#[target_feature(enable = "avx512f")]
fn pow2(k: __m512i) -> __m512 {
    _mm512_castsi512_ps(_mm512_slli_epi32::<23>(_mm512_add_epi32(
        k,
        _mm512_set1_epi32(127),
    )))
}

/// `(k, k as f32, r₁, t)` with `e^z = 2^k · (1 + r₁ + t)`, for `z` in `[−104, 104]` (see
/// `math_f32`).
#[inline]
#[target_feature(enable = "avx512f")]
fn exp_parts(z: __m512) -> (__m512i, __m512, __m512, __m512) {
    let shifter = _mm512_set1_ps(SHIFTER);
    let shifted = _mm512_fmadd_ps(z, _mm512_set1_ps(LOG2E), shifter);
    let kf = _mm512_sub_ps(shifted, shifter);
    let k = _mm512_sub_epi32(_mm512_castps_si512(shifted), _mm512_castps_si512(shifter));
    let r1 = _mm512_fnmadd_ps(kf, _mm512_set1_ps(LN2_HI), z);
    let c = _mm512_mul_ps(kf, _mm512_set1_ps(LN2_LO));
    let r = _mm512_sub_ps(r1, c);
    let t = _mm512_fmsub_ps(_mm512_mul_ps(r, r), horner(r, &EXP_Q), c);
    (k, kf, r1, t)
}

/// `e^x` of 16 lanes, in `f32` (see `math_f32`): `scalef` multiplies by `2^k` with one rounding,
/// as the AVX2 variant's two exact factors do, so both give the same bits.
///
/// Where every lane has `|x| < 86` (the common case: one predictable branch per vector), the
/// clamps change nothing and no lane is NaN, so that path skips them and the NaN fix-up, as the
/// AVX2 variant's does: the same bits in 15 vector operations instead of 20.
#[inline]
#[target_feature(enable = "avx512f")]
fn exp(x: __m512) -> __m512 {
    let plain = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(_mm512_abs_ps(x), _mm512_set1_ps(EXP_PLAIN));
    if plain == 0xFFFF {
        let (_, kf, r1, t) = exp_parts(x);
        let p = _mm512_add_ps(_mm512_set1_ps(1.0), _mm512_add_ps(r1, t));
        return _mm512_scalef_ps(p, kf);
    }
    // `max(LO, x)` returns `x` when `x` is NaN (the second operand); the lane is fixed below.
    let z = _mm512_min_ps(
        _mm512_set1_ps(EXP_HI),
        _mm512_max_ps(_mm512_set1_ps(EXP_LO), x),
    );
    let (_, kf, r1, t) = exp_parts(z);
    let p = _mm512_add_ps(_mm512_set1_ps(1.0), _mm512_add_ps(r1, t));
    // `kf` is `k` exactly (an integer below 2⁸ in magnitude).
    nan_as_input(x, _mm512_scalef_ps(p, kf))
}

/// `(q₀, ρ, −j)` with `1 / (1 + e^z) = q₀ · (1 + ρ) · 2^−j`, for `z` in `[−44, 104]` (see
/// `math_f32`'s `sigmoid`; the AVX2 twin's steps).
#[inline]
#[target_feature(enable = "avx512f")]
fn recip_one_plus_exp(z: __m512) -> (__m512, __m512, __m512) {
    let (k, _, r1, t) = exp_parts(z);
    let one = _mm512_set1_ps(1.0);
    let j = _mm512_max_epi32(k, _mm512_setzero_si512());
    let minus_j = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_setzero_si512(), j));
    // `D = a + b·(1 + r₁ + t)`: one of `a = 2^−j` and `b = 2^(k−j)` is 1, the other `m ≤ 1`.
    let b = pow2(_mm512_sub_epi32(k, j));
    let m = _mm512_min_ps(_mm512_scalef_ps(one, minus_j), b);
    let a_b = _mm512_add_ps(one, m);
    let a_b_err = _mm512_add_ps(_mm512_sub_ps(one, a_b), m);
    // `r₁ + t` as a pair (2Sum: `t`, up to 0.07, may be the larger where `r₁` is near 0).
    let s = _mm512_add_ps(r1, t);
    let t_part = _mm512_sub_ps(s, r1);
    let s_err = _mm512_add_ps(
        _mm512_sub_ps(r1, _mm512_sub_ps(s, t_part)),
        _mm512_sub_ps(t, t_part),
    );
    let u = _mm512_mul_ps(b, s);
    let d_hi = _mm512_add_ps(a_b, u);
    let d_lo = _mm512_add_ps(_mm512_sub_ps(a_b, d_hi), u);
    let d_lo = _mm512_fmadd_ps(b, s_err, _mm512_add_ps(d_lo, a_b_err));
    let q0 = _mm512_div_ps(one, d_hi);
    let rho = _mm512_fnmadd_ps(q0, d_hi, one);
    let rho = _mm512_fnmadd_ps(q0, d_lo, rho);
    (q0, rho, minus_j)
}

/// `1 / (1 + e^−x)` of 16 lanes (see `math_f32`).
#[inline]
#[target_feature(enable = "avx512f")]
fn sigmoid(x: __m512) -> __m512 {
    let z = _mm512_min_ps(
        _mm512_set1_ps(-EXP_LO),
        _mm512_max_ps(_mm512_set1_ps(-SIGMOID_HI), neg(x)),
    );
    let (q0, rho, minus_j) = recip_one_plus_exp(z);
    let q = _mm512_fmadd_ps(q0, rho, q0);
    nan_as_input(x, _mm512_scalef_ps(q, minus_j))
}

/// `tanh` of 16 lanes (see `math_f32`): an odd polynomial near 0, `2·sigmoid(2|x|) − 1` beyond.
#[inline]
#[target_feature(enable = "avx512f")]
fn tanh(x: __m512) -> __m512 {
    let sign_bit = _mm512_set1_epi32(i32::MIN);
    let ax = _mm512_abs_ps(x);
    let x2 = _mm512_mul_ps(x, x);
    let small = _mm512_fmadd_ps(_mm512_mul_ps(x, x2), horner(x2, &TANH_T), x);
    let z = _mm512_max_ps(
        _mm512_set1_ps(-TANH_2X_HI),
        _mm512_sub_ps(_mm512_setzero_ps(), _mm512_add_ps(ax, ax)),
    );
    let (q0, rho, _) = recip_one_plus_exp(z);
    let two_q0 = _mm512_add_ps(q0, q0);
    let large = _mm512_fmadd_ps(two_q0, rho, _mm512_sub_ps(two_q0, _mm512_set1_ps(1.0)));
    let is_small = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(ax, _mm512_set1_ps(TANH_SMALL));
    let unsigned = _mm512_castps_si512(_mm512_mask_blend_ps(is_small, large, small));
    // `x`'s sign onto `tanh|x|`, and onto `tanh(−0) = −0` (the polynomial gives `+0` there).
    let sign = _mm512_and_si512(_mm512_castps_si512(x), sign_bit);
    nan_as_input(x, _mm512_castsi512_ps(_mm512_or_si512(unsigned, sign)))
}

/// `ln x` of 16 lanes (see `math_f32`; the AVX2 twin's steps).
#[inline]
#[target_feature(enable = "avx512f")]
fn log(x: __m512) -> __m512 {
    let tiny = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, _mm512_set1_ps(f32::MIN_POSITIVE));
    let scaled = _mm512_mul_ps(x, _mm512_set1_ps(LOG_SUBNORMAL_SCALE));
    let xs = _mm512_mask_blend_ps(tiny, x, scaled);
    let split = _mm512_set1_epi32(LOG_SPLIT);
    let ix = _mm512_sub_epi32(_mm512_castps_si512(xs), split);
    let e = _mm512_srai_epi32::<23>(ix);
    let mantissa = _mm512_and_si512(ix, _mm512_set1_epi32(0x007F_FFFF));
    let f = _mm512_sub_ps(
        _mm512_castsi512_ps(_mm512_add_epi32(mantissa, split)),
        _mm512_set1_ps(1.0),
    );
    let ef = _mm512_mask_sub_ps(
        _mm512_cvtepi32_ps(e),
        tiny,
        _mm512_cvtepi32_ps(e),
        _mm512_set1_ps(23.0),
    );
    // `e·LN2_HI + f`, then `− f²/2`: Fast2Sum each (the first term is the larger).
    let h = _mm512_mul_ps(ef, _mm512_set1_ps(LN2_HI));
    let a = _mm512_add_ps(h, f);
    let a_err = _mm512_add_ps(_mm512_sub_ps(h, a), f);
    let f2 = _mm512_mul_ps(f, f);
    let f2_err = _mm512_fmsub_ps(f, f, f2);
    let g = _mm512_mul_ps(f2, _mm512_set1_ps(-0.5));
    let b = _mm512_add_ps(a, g);
    let b_err = _mm512_add_ps(_mm512_sub_ps(a, b), g);
    let lo = _mm512_fmadd_ps(f2_err, _mm512_set1_ps(-0.5), _mm512_add_ps(a_err, b_err));
    let lo = _mm512_fmadd_ps(ef, _mm512_set1_ps(LN2_LO), lo);
    let lo = _mm512_fmadd_ps(_mm512_mul_ps(f2, f), horner(f, &LOG_P), lo);
    let result = _mm512_add_ps(b, lo);
    // `ln ±0 = −inf`, `ln` of a negative number is NaN, `ln inf = inf`.
    let zero = _mm512_setzero_ps();
    let infinity = _mm512_set1_ps(f32::INFINITY);
    let is_zero = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(x, zero);
    let result = _mm512_mask_blend_ps(is_zero, result, _mm512_set1_ps(f32::NEG_INFINITY));
    let negative = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, zero);
    let result = _mm512_mask_blend_ps(negative, result, _mm512_set1_ps(f32::NAN));
    let is_inf = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(x, infinity);
    nan_as_input(x, _mm512_mask_blend_ps(is_inf, result, infinity))
}

/// The `f64` lane sums of a superblock's runs ([`lane_sums_of`]): `f32` accumulator `j` of a
/// block of [`SUM_BLOCK`](super::template::SUM_BLOCK) elements is lane `j % 16` of vector
/// `j / 16`; lane sum `j` is lane `j % 8` of `f64` vector `j / 8`. Runs that do not start on a
/// 64-byte boundary are read in aligned windows ([`realigned_lane_sums_of`]): the same bits.
#[inline]
#[target_feature(enable = "avx512f")]
fn lane_sums(runs: &[[f32; SUM_LANES]]) -> [f64; SUM_LANES] {
    type Acc = [__m512; SUM_LANES / LANES];
    let add_run = |mut sums: Acc, run: &[f32; SUM_LANES]| {
        for (sum, v) in sums.iter_mut().zip(run.as_chunks::<LANES>().0) {
            *sum = _mm512_add_ps(*sum, load(v));
        }
        sums
    };
    let widen = |mut wide: [__m512d; SUM_LANES / 8], sums: Acc| {
        // Vector `i` holds lanes `16i..16i + 16`: its low half onto `wide[2i]`, its high onto
        // `wide[2i + 1]`.
        for (i, sum) in sums.into_iter().enumerate() {
            let low = _mm512_castps512_ps256(sum);
            let high = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(sum)));
            wide[2 * i] = _mm512_add_pd(wide[2 * i], _mm512_cvtps_pd(low));
            wide[2 * i + 1] = _mm512_add_pd(wide[2 * i + 1], _mm512_cvtps_pd(high));
        }
        wide
    };
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let wide = [_mm512_set1_pd(-0.0); SUM_LANES / 8];
    let zero = || [_mm512_set1_ps(-0.0); SUM_LANES / LANES];
    let shift = runs.as_ptr().addr() / size_of::<f32>() % LANES;
    let wide = if shift == 0 {
        lane_sums_of(runs, wide, zero, add_run, widen)
    } else {
        // Position `q` of the windows to accumulator `(q − shift) % 32`: result lane `i` of
        // vector `v` takes position `16v + i + shift` (index bit 4 picks the second vector).
        let lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let first = _mm512_and_si512(
            _mm512_add_epi32(lane, _mm512_set1_epi32(shift as i32)),
            _mm512_set1_epi32(31),
        );
        let second = _mm512_xor_si512(first, _mm512_set1_epi32(16));
        let rotate = |sums: Acc| {
            [
                _mm512_permutex2var_ps(sums[0], first, sums[1]),
                _mm512_permutex2var_ps(sums[0], second, sums[1]),
            ]
        };
        let add_part = |sums, part: &[f32], at| add_part(sums, part, at);
        realigned_lane_sums_of(runs, shift, wide, zero, add_run, add_part, rotate, widen)
    };
    let mut lanes = [0.0; SUM_LANES];
    for (chunk, sum) in lanes.as_chunks_mut::<8>().0.iter_mut().zip(wide) {
        // SAFETY: `chunk` is 8 writable `f64`; `storeu` has no alignment requirement.
        unsafe { _mm512_storeu_pd(chunk.as_mut_ptr(), sum) };
    }
    lanes
}

/// `sums` plus `part` at positions `at..at + part.len()` of the 32 (lane `i` of vector `v` is
/// position `16v + i`); other positions, and any past 32, unchanged.
#[inline]
#[target_feature(enable = "avx512f")]
fn add_part(
    mut sums: [__m512; SUM_LANES / LANES],
    part: &[f32],
    at: usize,
) -> [__m512; SUM_LANES / LANES] {
    let end = at.saturating_add(part.len()).min(SUM_LANES);
    let positions = ((1u64 << end) - (1u64 << at.min(end))) as u32;
    for (v, sum) in sums.iter_mut().enumerate() {
        let mask = (positions >> (LANES * v)) as u16;
        if mask != 0 {
            // Lane `i` is position `16v + i`, element `16v + i − at` of `part`.
            let lane_0 = part.as_ptr().wrapping_add(LANES * v).wrapping_sub(at);
            // SAFETY: only the lanes in `mask` are read (the others are neither accessed nor
            // faulted on), and those are positions `at ≤ 16v + i < end ≤ at + part.len()`: the
            // elements `0 ≤ 16v + i − at < part.len()` of `part`. The address of lane 0 is
            // formed with wrapping arithmetic, so it may lie outside `part` without UB.
            let values = unsafe { _mm512_maskz_loadu_ps(mask, lane_0) };
            *sum = _mm512_mask_add_ps(*sum, mask, *sum, values);
        }
    }
    sums
}

// One kernel per line, so that each registration's `file:line` in dumps is its own.
simd_kernels! {
    cpu = "avx512f", needs = "AVX-512F", narrow = avx2 past 4096;
    add_avx512 = add,
    sub_avx512 = sub,
    mul_avx512 = mul,
    div_avx512 = div,
    neg_avx512 = neg,
    relu_avx512 = relu,
    relu_backward_avx512 = relu_backward,
    exp_avx512 = exp,
    log_avx512 = log,
    tanh_avx512 = tanh,
    sigmoid_avx512 = sigmoid,
    sum_avx512 = sum,
    mean_avx512 = mean,
}

/// Our 14 × 32 register tiles (`sgemm_avx512.rs`) where the AVX2 variant takes its tiles (up to
/// 512³ multiply-adds, a row-major `x`), `matrixmultiply` for the rest: the same bits as
/// `matmul_avx2` everywhere.
#[kernel(op = switchyard::ops::matmul, key = CpuSimd, cpu = "avx512f", dtypes = "f32")]
pub fn matmul_avx512(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    super::matmul::gemm(x, y, super::matmul::Engine::Avx512Tiles)
}

#[cfg(test)]
mod tests {
    use super::lane_sums;
    use crate::cpu::simd::template::tests::check_lane_sums_at_every_offset;

    #[test]
    fn lane_sums_are_the_reference_bits_at_every_alignment() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            eprintln!("skipped: this CPU has no AVX-512F");
            return;
        }
        // SAFETY: the CPU has AVX-512F (checked above).
        check_lane_sums_at_every_offset(|runs| unsafe { lane_sums(runs) });
    }
}
