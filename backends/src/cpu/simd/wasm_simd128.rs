//! wasm32 SIMD kernels (`simd128`): 4 `f32` lanes, compiled only into a module built with
//! `-C target-feature=+simd128` (WebAssembly has no runtime detection: an engine without SIMD
//! refuses such a module as a whole, so every kernel here is a plain function).
//!
//! This file holds the lane helpers; `template::simd_kernels!` at the end makes them kernels,
//! registered with `cpu = "simd128"` (`SWITCHYARD_CPU_CAPABILITY=default` leaves them
//! unreachable). `unsafe` is used only for the load and store intrinsics (in `load` and `store`).
//!
//! `exp`, `log`, `tanh` and `sigmoid` have no kernel here: the naive ones serve them. Their SIMD
//! algorithms (`math_f32`) use fused multiply-adds, which wasm SIMD lacks (relaxed SIMD's `madd`
//! may or may not fuse), and the promise that every ISA gives the same bits needs each one
//! exact. Computed exactly in `f64` lanes (rounded to odd, then to `f32`: about fifty
//! instructions each) they did give the AVX2 kernels' bits, but ran 1.7 to 6.6 times slower than
//! the naive kernels under Node 20 (release build, 64K elements): commit 7e2cbdd has that
//! version.

#![allow(unsafe_code)] // the load/store intrinsics below

use core::arch::wasm32::*;

use switchyard::{Result, Tensor, kernel};

use super::template::{SUM_LANES, lane_sums_of, simd_kernels};
// A tail's first lanes: copied in and out (no masked loads and stores here).
use super::template::{padded as load_first, write_lanes as store_first};

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

/// The `f64` lane sums of a superblock's runs ([`lane_sums_of`]): `f32` accumulator `j` is lane
/// `j % 4` of vector `j / 4`, and a finished block's vector `i` goes to `f64` onto lane sums
/// `4i..4i + 4` (its low half onto `wide[2i]`, its high onto `wide[2i + 1]`).
#[inline]
fn lane_sums(runs: &[[f32; SUM_LANES]]) -> [f64; SUM_LANES] {
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let wide = lane_sums_of(
        runs,
        [f64x2_splat(-0.0); SUM_LANES / 2],
        || [splat(-0.0); SUM_LANES / LANES],
        |mut sums, run| {
            for (sum, v) in sums.iter_mut().zip(run.as_chunks::<LANES>().0) {
                *sum = f32x4_add(*sum, load(v));
            }
            sums
        },
        |mut wide, sums| {
            for (i, sum) in sums.into_iter().enumerate() {
                let high = i32x4_shuffle::<2, 3, 2, 3>(sum, sum);
                wide[2 * i] = f64x2_add(wide[2 * i], f64x2_promote_low_f32x4(sum));
                wide[2 * i + 1] = f64x2_add(wide[2 * i + 1], f64x2_promote_low_f32x4(high));
            }
            wide
        },
    );
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
    sum_simd128 = sum,
    mean_simd128 = mean,
}

/// `matrixmultiply`'s sgemm, which picks its own `simd128` kernel (8 × 8 tiles) in a module built
/// with the feature.
#[kernel(op = switchyard::ops::matmul, key = CpuSimd, cpu = "simd128", dtypes = "f32")]
pub fn matmul_simd128(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    super::matmul::gemm(x, y, super::matmul::Engine::MatrixMultiply)
}
