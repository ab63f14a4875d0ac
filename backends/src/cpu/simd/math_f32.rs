//! The constants of the `f32` transcendental kernels (`exp`, `log`, `tanh`, `sigmoid`), shared by
//! every instruction set, and the algorithms they serve. Each ISA file writes the same steps with
//! its own intrinsics, in the same order with the same roundings, so every variant gives the same
//! bits (`tests/tests/ulp_exhaustive.rs` checks each variant the CPU has over all 2³² inputs).
//!
//! The polynomials are near-minimax fits of the *relative* error of the final result, made for
//! this crate (iteratively reweighted least squares on Chebyshev nodes, 50-digit arithmetic), with
//! each coefficient rounded to `f32` in turn and the rest refitted; the worst relative error of
//! each polynomial with its `f32` coefficients, evaluated exactly, is noted beside it.
//!
//! # `exp(z)`: `2^k · (1 + r₁ + t)`
//!
//! `k = round(z · log₂e)` (the shifter trick: the addition of `1.5·2²³` rounds to an integer),
//! `r₁ = z − k·LN2_HI` (exact: `LN2_HI` has 15 significant bits, `|k| ≤ 150` 8, and the difference
//! is exact by Sterbenz's lemma), `c = k·LN2_LO`, `r = r₁ − c` in `[−0.35, 0.35]`, and
//! `t = r²·Q(r) − c`, so that `e^r = 1 + r + r²·Q(r)` and `e^z = 2^k · (1 + r₁ + t)`. The pair
//! `(r₁, t)` carries `e^r − 1` to about 2⁻³⁰, more than one `f32` holds, which `sigmoid` and
//! `tanh` use. `exp` itself rounds `s = r₁ + t` (an error of at most 2⁻²⁶, ¼ ulp of the result
//! where `e^r < 0.75`), then `1 + s` (½ ulp), then scales by `2^k` exactly in two factors (each
//! at least 2⁻⁷⁵, so neither leaves the normal range; the second rounds a subnormal result).
//! Where every lane of a vector has `|z| < 86` the result is normal, so the scaling is exact in
//! any form: the AVX2 variant then adds `k` to the exponent field of `1 + s` and skips the
//! clamps and the NaN fix-up (the same bits, about 1.3–1.5× faster).
//!
//! # `sigmoid(x) = 1 / (1 + e^−x)`
//!
//! With `e^−x = 2^k · (1 + r₁ + t)` and `j = max(k, 0)`: `sigmoid(x) = 2^−j / D`,
//! `D = 2^−j + 2^(k−j) · (1 + r₁ + t)`, where one of `2^−j`, `2^(k−j)` is 1 and the other at most
//! 1 (so `D` is in `[0.7, 2.5]` and never overflows). `D` is summed as a pair `Dh + Dl` (`r₁ + t`
//! by 2Sum, since `t` may be the larger, then Fast2Sum steps; every product by a power of two is
//! exact), then `1/D` is `q₀ = 1/Dh` (one division) corrected by `ρ = 1 − q₀·D`, whose first
//! part `1 − q₀·Dh` FMA computes exactly: `q = q₀ + q₀·ρ`, one rounding, so ½ ulp plus the
//! polynomial's and `t`'s errors (0.62 ulp measured where the result is normal). The scaling by
//! `2^−j` is exact but for subnormal results, which it rounds a second time (up to 0.78 ulp
//! there, as `exp`'s).
//!
//! # `tanh(x)`
//!
//! For `|x| < 0.5625`, `x + x³·T(x²)`: the correction is at most a tenth of the result, so its
//! own rounding errors stay under 0.15 ulp. Above, `tanh|x| = 2·sigmoid(2|x|) − 1 = 2q − 1`
//! with `q` as above (`≥ 0.75` here, so `2q₀ − 1` is exact), `fma(2q₀, ρ, 2q₀ − 1)`: one rounding.
//! `|x| ≥ 10` gives `±1` (`tanh` rounds to 1 from 9.01 on), as the clamp of `2|x|` to 20 does.
//!
//! # `log(x)`
//!
//! `x = 2^e · m` with `m` in `[2/3, 4/3)` (subtracting the bits of 2/3 from the input's moves the
//! exponent's boundary there; subnormal inputs are scaled by 2²³ first), `f = m − 1` (exact), and
//! `log(x) = e·ln 2 + f − f²/2 + f³·P(f)`. The large terms are added as pairs (`e·LN2_HI + f`,
//! then `− f²/2` with `f²` split exactly by FMA); the small ones (`e·LN2_LO`, the pairs' errors,
//! `f³·P(f)`, at most 0.013) go into one low part added last: one rounding of the large sum, and
//! the low part's errors are a few hundredths of an ulp.

/// `exp` inputs below this give `+0.0` (`e^−104 < 2⁻¹⁵⁰`, half the smallest subnormal).
pub const EXP_LO: f32 = -104.0;
/// `exp` inputs above this give `inf` (`e^89 > f32::MAX`).
pub const EXP_HI: f32 = 89.0;
/// `|x|` below this: `e^x` is normal (`e^−86 > 2⁻¹²⁶`) and finite, `k` lies in `[−124, 124]`,
/// and the clamps of `exp` change nothing (the fast path of the x86 variants).
#[cfg(target_arch = "x86_64")]
pub const EXP_PLAIN: f32 = 86.0;
/// `log₂ e`, rounded to `f32`: only `k`'s choice depends on it (any nearby `k` works).
pub const LOG2E: f32 = std::f32::consts::LOG2_E;
/// `ln 2` to 15 significant bits: `k · LN2_HI` is exact for `|k| < 2⁹`.
pub const LN2_HI: f32 = f32::from_bits(0x3F31_7200);
/// `ln 2 − LN2_HI`, rounded to `f32`.
pub const LN2_LO: f32 = f32::from_bits(0x35BF_BE8E);
/// `1.5 · 2²³`: `y + SHIFTER` rounds `y` to an integer held in the low mantissa bits, for
/// `|y| < 2²²`.
pub const SHIFTER: f32 = 12_582_912.0;

/// `Q(r)` of `e^r = 1 + r + r²·Q(r)` on `[−0.35, 0.35]`, Horner's order (highest degree first):
/// relative error of `e^r` at most 3.4·10⁻⁹ (0.06 ulp).
pub const EXP_Q: [f32; 5] = [
    f32::from_bits(0x3AB5_2BDD),
    f32::from_bits(0x3C09_1F15),
    f32::from_bits(0x3D2A_AC57),
    f32::from_bits(0x3E2A_AA46),
    f32::from_bits(0x3EFF_FFFE),
];

/// `sigmoid` clamps `x` to `[EXP_LO, SIGMOID_HI]`: above 30 it is 1 (`1 − e^−30` rounds to 1),
/// below −104 `+0.0`, and `e^−x` stays within `[2⁻⁴⁴, 2¹⁵⁰]`.
pub const SIGMOID_HI: f32 = 30.0;

/// Below this `|x|`, `tanh` takes its odd polynomial; from it on, `2q − 1` (`tanh ≥ 0.51`).
pub const TANH_SMALL: f32 = 0.5625;
/// `2|x|` is clamped here: `tanh(10)` rounds to 1, and `e^−20` keeps `k ≥ −29`.
pub const TANH_2X_HI: f32 = 20.0;
/// `T(w)` of `tanh(x) = x + x³·T(x²)` for `|x| < 0.5625`, Horner's order: relative error of
/// `tanh` at most 1.4·10⁻⁹ (0.02 ulp).
pub const TANH_T: [f32; 5] = [
    f32::from_bits(0xBBCA_534B),
    f32::from_bits(0x3CAC_0F12),
    f32::from_bits(0xBD5C_8372),
    f32::from_bits(0x3E08_8631),
    f32::from_bits(0xBEAA_AAA4),
];

/// The bits of `2/3` rounded up: `bits(x) − LOG_SPLIT` has `e` in its exponent field and, added
/// back to the mantissa bits, gives `m` in `[2/3, 4/3)`.
pub const LOG_SPLIT: i32 = 0x3F2A_AAAB;
/// `2²³`, which makes a subnormal input normal (its logarithm then loses `23·ln 2`).
pub const LOG_SUBNORMAL_SCALE: f32 = 8_388_608.0;
/// `P(f)` of `ln(1 + f) = f − f²/2 + f³·P(f)` on `[−1/3, 1/3]`, Horner's order: relative error of
/// `ln(1 + f)` at most 8.8·10⁻¹⁰ (0.015 ulp).
pub const LOG_P: [f32; 9] = [
    f32::from_bits(0x3DF4_DAA5),
    f32::from_bits(0xBE03_6A4B),
    f32::from_bits(0x3DDC_9318),
    f32::from_bits(0xBDF9_D3CA),
    f32::from_bits(0x3E12_7591),
    f32::from_bits(0xBE2A_CBF0),
    f32::from_bits(0x3E4C_CBF8),
    f32::from_bits(0xBE7F_FF8B),
    f32::from_bits(0x3EAA_AAAB),
];
