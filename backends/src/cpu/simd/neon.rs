//! aarch64 NEON kernels: 4 `f32` lanes (2 `f64` lanes inside `exp` and the reductions).
//!
//! Registered with `cpu = "neon"`; `SWITCHYARD_CPU_CAPABILITY=default` leaves them unreachable.
//! `unsafe` is used only for the load and store intrinsics (in `load`, `store`, `store_new`) and
//! to set the length of an output `Vec` whose every element a kernel wrote.

#![allow(unsafe_code)] // the load/store intrinsics below, and the macro's target-feature entries

use std::arch::aarch64::*;
use std::mem::MaybeUninit;

use switchyard::ops::{add, div, exp, matmul, mean, mul, neg, relu, sub, sum};
use switchyard::{Result, Tensor, kernel};

use super::exp_f64::{HI, LN2_HI, LN2_LO, LO, LOG2E, TAYLOR};
use crate::cpu::naive::{host, same_shape};

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
fn store(chunk: &mut [f32; LANES], value: float32x4_t) {
    // SAFETY: `chunk` is 4 writable `f32`; `vst1q` has no alignment requirement beyond `f32`'s.
    unsafe { vst1q_f32(chunk.as_mut_ptr(), value) }
}

#[inline]
#[target_feature(enable = "neon")]
fn store_new(chunk: &mut [MaybeUninit<f32>; LANES], value: float32x4_t) {
    // SAFETY: `chunk` is 4 writable `f32` slots (writing uninitialized ones is fine); the
    // store has no alignment requirement.
    unsafe { vst1q_f32(chunk.as_mut_ptr().cast(), value) }
}

/// The last `len % LANES` elements, zero-padded to one vector.
#[inline]
fn padded(tail: &[f32]) -> [f32; LANES] {
    let mut lanes = [0.0; LANES];
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
        /// The CPU must have NEON. Dispatch installs this kernel only on such a CPU (runtime detection).
        #[kernel(op = $op, key = CpuSimd, cpu = "neon")]
        #[target_feature(enable = "neon")]
        pub fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            same_shape($op, x, y)?;
            let (xs, ys) = (host($op, x)?, host($op, y)?);
            let ((xc, xt), (yc, yt)) = (xs.as_chunks::<LANES>(), ys.as_chunks::<LANES>());
            let mut out = switchyard::cpu_buffer($op, xs.len())?;
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
            // all have `len / LANES`: `ys.len() == xs.len()`, as `x` and `y` have one shape and a
            // tensor holds exactly its shape's element count) and then the tail (`ot`); the
            // capacity is at least `xs.len()` (`cpu_buffer`'s promise, and `[..xs.len()]` above).
            unsafe { out.set_len(xs.len()) };
            Tensor::from_vec(out, x.shape())
        }
    };
}

/// A one-operand elementwise kernel, like [`binary!`].
macro_rules! unary {
    ($(#[$doc:meta])* $name:ident, $op:literal, $vector:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// The CPU must have NEON. Dispatch installs this kernel only on such a CPU (runtime detection).
        #[kernel(op = $op, key = CpuSimd, cpu = "neon")]
        #[target_feature(enable = "neon")]
        pub fn $name(x: &Tensor) -> Result<Tensor> {
            let xs = host($op, x)?;
            let (xc, xt) = xs.as_chunks::<LANES>();
            let mut out = switchyard::cpu_buffer($op, xs.len())?;
            let (oc, ot) = out.spare_capacity_mut()[..xs.len()].as_chunks_mut::<LANES>();
            for (o, a) in oc.iter_mut().zip(xc) {
                store_new(o, $vector(load(a)));
            }
            let mut last = [0.0; LANES];
            store(&mut last, $vector(load(&padded(xt))));
            for (o, value) in ot.iter_mut().zip(last) {
                o.write(value);
            }
            // SAFETY: all `xs.len()` elements were written: the full chunks (`oc` and `xc` both
            // have `len / LANES`) and then the tail (`ot`), within the capacity (`[..xs.len()]`).
            unsafe { out.set_len(xs.len()) };
            Tensor::from_vec(out, x.shape())
        }
    };
}

binary!(
    /// `x + y`.
    add_neon, "add", vaddq_f32
);
binary!(
    /// `x - y`.
    sub_neon, "sub", vsubq_f32
);
binary!(
    /// `x * y`.
    mul_neon, "mul", vmulq_f32
);
binary!(
    /// `x / y`.
    div_neon, "div", vdivq_f32
);

/// `0` where `a < 0`, else `a`: NaN and `-0.0` pass through, as in the naive kernel.
#[inline]
#[target_feature(enable = "neon")]
fn rectify(a: float32x4_t) -> float32x4_t {
    let zero = vdupq_n_f32(0.0);
    vbslq_f32(vcltq_f32(a, zero), zero, a)
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
fn exp4(x: float32x4_t) -> float32x4_t {
    vcombine_f32(exp2(vget_low_f32(x)), exp2(vget_high_f32(x)))
}

unary!(
    /// `-x` (flips the sign bit, NaN included, as scalar negation does).
    neg_neon, "neg", vnegq_f32
);
unary!(
    /// `max(x, 0)`, NaN kept.
    relu_neon, "relu", rectify
);
unary!(
    /// `e^x`, within 1 ulp of the naive kernel.
    exp_neon, "exp", exp4
);

/// The sum of `xs` in `f64`: 8 vectors of 2 `f64` partial sums each, so that additions overlap.
#[target_feature(enable = "neon")]
fn total(xs: &[f32]) -> f64 {
    // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
    let mut acc = [vdupq_n_f64(-0.0); 8];
    let (blocks, tail) = xs.as_chunks::<{ 4 * LANES }>();
    for block in blocks {
        let (quarters, _) = block.as_chunks::<LANES>();
        for (i, v) in quarters.iter().enumerate() {
            let v = load(v);
            acc[2 * i] = vaddq_f64(acc[2 * i], vcvt_f64_f32(vget_low_f32(v)));
            acc[2 * i + 1] = vaddq_f64(acc[2 * i + 1], vcvt_high_f64_f32(v));
        }
    }
    let mut partials = [-0.0f64; 16];
    for (lanes, v) in partials.as_chunks_mut::<2>().0.iter_mut().zip(acc) {
        *lanes = [vgetq_lane_f64::<0>(v), vgetq_lane_f64::<1>(v)];
    }
    super::finish_sum(&mut partials, tail)
}

/// The sum, as a 0-dimensional tensor.
///
/// # Safety
///
/// The CPU must have NEON. Dispatch installs this kernel only on such a CPU (runtime detection).
#[kernel(op = "sum", key = CpuSimd, cpu = "neon")]
#[target_feature(enable = "neon")]
pub fn sum_neon(x: &Tensor) -> Result<Tensor> {
    Ok(Tensor::scalar(total(host("sum", x)?) as f32))
}

/// The mean, as a 0-dimensional tensor (NaN when empty).
///
/// # Safety
///
/// The CPU must have NEON. Dispatch installs this kernel only on such a CPU (runtime detection).
#[kernel(op = "mean", key = CpuSimd, cpu = "neon")]
#[target_feature(enable = "neon")]
pub fn mean_neon(x: &Tensor) -> Result<Tensor> {
    let n = x.numel() as f64;
    Ok(Tensor::scalar((total(host("mean", x)?) / n) as f32))
}

/// `matrixmultiply`'s sgemm, whose own detection picks its NEON kernel.
#[kernel(op = "matmul", key = CpuSimd, cpu = "neon")]
pub fn matmul_neon(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    super::matmul::gemm(x, y)
}
