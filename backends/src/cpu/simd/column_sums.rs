//! `sum_dim` and `mean_dim` of a contiguous `f32` tensor over its *leading* dimensions (a bias
//! gradient: the sum over the batch of a `[batch, features]` gradient), with AVX2 or AVX-512 on
//! x86_64 and NEON on aarch64: each result element is its column's sum, added in `f64` from
//! `+0` row after row, as the naive kernel adds it, so the same bits. The naive loop keeps its
//! sums in memory and widens two lanes at a time; here a strip of columns keeps its sums in
//! registers (8 vectors: enough independent chains of additions to fill the adders) over all
//! rows. One thread: a thread's share would be a strip of columns, and the rows it reads were
//! mostly written by the other core.
//!
//! Every other call (other dimensions reduced, a view, fewer than 8 columns, another dtype on a
//! direct call) goes to the naive kernel.

#![allow(unsafe_code)] // the load and store intrinsics, and calls of target-feature functions

#[cfg(target_arch = "aarch64")]
use std::arch::aarch64::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use switchyard::ops::{mean_dim, sum_dim};
use switchyard::rules::{self, Reduction};
use switchyard::{DType, Result, Tensor, host_buffer, kernel};

use crate::cpu::naive_nn::{mean_dim_naive, sum_dim_naive};

/// The narrowest strip worth the registers: a narrower result stays with the naive kernel.
const MIN_COLUMNS: usize = 8;

/// The columns of `x` when `r` reduces a leading block of its dimensions and keeps the rest
/// (at least [`MIN_COLUMNS`] elements), `x` being contiguous `f32`; else `None`.
fn leading_columns(x: &Tensor, r: &Reduction) -> Option<usize> {
    let leading = r.reduced.iter().take_while(|&&reduced| reduced).count();
    let kept_after = r.reduced[leading..].iter().all(|&reduced| !reduced);
    let fits = x.dtype() == DType::F32 && x.is_contiguous() && leading > 0 && kept_after;
    (fits && r.outer >= MIN_COLUMNS && r.inner > 0).then_some(r.outer)
}

/// `f64` lanes of an AVX-512 vector, of an AVX2 one, of a NEON one.
#[cfg(target_arch = "x86_64")]
const AVX512_LANES: usize = 8;
#[cfg(target_arch = "x86_64")]
const AVX2_LANES: usize = 4;
#[cfg(target_arch = "aarch64")]
const NEON_LANES: usize = 2;

/// `sums[v][i]` = the `f64` sum of column `first + 8v + i` of the rows of `xs` (each `columns`
/// long, `first + 8V ≤ columns`), from `+0`, row after row; `V` vectors of sums in registers.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn strip_avx512<const V: usize>(
    xs: &[f32],
    columns: usize,
    first: usize,
    sums: &mut [[f64; AVX512_LANES]; V],
) {
    let mut acc = [_mm512_setzero_pd(); V];
    for row in xs.chunks_exact(columns) {
        let values = row[first..][..V * AVX512_LANES]
            .as_chunks::<AVX512_LANES>()
            .0;
        for (a, v) in acc.iter_mut().zip(values) {
            // SAFETY: `v` is 8 readable `f32`; `loadu` has no alignment requirement.
            let v = unsafe { _mm256_loadu_ps(v.as_ptr()) };
            *a = _mm512_add_pd(*a, _mm512_cvtps_pd(v));
        }
    }
    for (sum, a) in sums.iter_mut().zip(acc) {
        // SAFETY: `sum` is 8 writable `f64`; `storeu` has no alignment requirement.
        unsafe { _mm512_storeu_pd(sum.as_mut_ptr(), a) };
    }
}

/// [`strip_avx512`] in AVX2 vectors of 4 `f64`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn strip_avx2<const V: usize>(
    xs: &[f32],
    columns: usize,
    first: usize,
    sums: &mut [[f64; AVX2_LANES]; V],
) {
    let mut acc = [_mm256_setzero_pd(); V];
    for row in xs.chunks_exact(columns) {
        let values = row[first..][..V * AVX2_LANES].as_chunks::<AVX2_LANES>().0;
        for (a, v) in acc.iter_mut().zip(values) {
            // SAFETY: `v` is 4 readable `f32`; `loadu` has no alignment requirement.
            let v = unsafe { _mm_loadu_ps(v.as_ptr()) };
            *a = _mm256_add_pd(*a, _mm256_cvtps_pd(v));
        }
    }
    for (sum, a) in sums.iter_mut().zip(acc) {
        // SAFETY: `sum` is 4 writable `f64`; `storeu` has no alignment requirement.
        unsafe { _mm256_storeu_pd(sum.as_mut_ptr(), a) };
    }
}

/// [`strip_avx512`] in NEON vectors of 2 `f64`.
#[cfg(target_arch = "aarch64")]
#[inline]
#[target_feature(enable = "neon")]
fn strip_neon<const V: usize>(
    xs: &[f32],
    columns: usize,
    first: usize,
    sums: &mut [[f64; NEON_LANES]; V],
) {
    let mut acc = [vdupq_n_f64(0.0); V];
    for row in xs.chunks_exact(columns) {
        let values = row[first..][..V * NEON_LANES].as_chunks::<NEON_LANES>().0;
        for (a, v) in acc.iter_mut().zip(values) {
            // SAFETY: `v` is 2 readable `f32`; `vld1` has no alignment requirement beyond `f32`'s.
            let v = unsafe { vld1_f32(v.as_ptr()) };
            *a = vaddq_f64(*a, vcvt_f64_f32(v));
        }
    }
    for (sum, a) in sums.iter_mut().zip(acc) {
        // SAFETY: `sum` is 2 writable `f64`.
        unsafe { vst1q_f64(sum.as_mut_ptr(), a) };
    }
}

/// Every column's sum into `sums` (one per column): strips of `WIDE` vectors of `LANES`
/// (`wide(first, strip)`), then of one vector (`one`), then the last columns one at a time as
/// the naive kernel adds them.
#[inline(always)]
fn column_sums<const LANES: usize, const WIDE: usize>(
    xs: &[f32],
    columns: usize,
    sums: &mut [f64],
    wide: impl Fn(usize, &mut [[f64; LANES]; WIDE]),
    one: impl Fn(usize, &mut [[f64; LANES]; 1]),
) {
    let (vectors, rest) = sums.as_chunks_mut::<LANES>();
    let (strips, last) = vectors.as_chunks_mut::<WIDE>();
    for (i, strip) in strips.iter_mut().enumerate() {
        wide(i * WIDE * LANES, strip);
    }
    let mut first = strips.len() * WIDE * LANES;
    for vector in last {
        one(first, std::array::from_mut(vector));
        first += LANES;
    }
    for (j, sum) in rest.iter_mut().enumerate() {
        *sum = xs
            .chunks_exact(columns)
            .fold(0.0, |acc, row| acc + f64::from(row[first + j]));
    }
}

/// The instruction set a kernel runs.
#[derive(Clone, Copy)]
enum Isa {
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
    #[cfg(target_arch = "aarch64")]
    Neon,
}

/// `sum_dim` (`mean == false`) or `mean_dim` of `x` through strips of columns in `isa`'s
/// vectors, or `None` where the naive kernel serves.
#[inline(always)]
fn reduce(
    isa: Isa,
    op: &'static str,
    x: &Tensor,
    dims: &[isize],
    keepdim: bool,
    mean: bool,
) -> Result<Option<Tensor>> {
    let r = rules::reduction(op, x.shape(), dims, keepdim)?;
    let Some(columns) = leading_columns(x, &r) else {
        return Ok(None);
    };
    let view = x.host::<f32>(op)?;
    let Some(xs) = view.contiguous() else {
        return Ok(None);
    };
    let mut sums = Vec::new();
    if sums.try_reserve_exact(columns).is_err() {
        return Err(switchyard::DispatchError::out_of_memory(
            op,
            columns.saturating_mul(size_of::<f64>()),
        ));
    }
    sums.resize(columns, 0.0f64);
    match isa {
        // SAFETY (each): the kernels that pass an ISA are compiled with its features and
        // installed only on CPUs that have them.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => column_sums(
            xs,
            columns,
            &mut sums,
            |first, strip: &mut [_; 8]| unsafe { strip_avx512(xs, columns, first, strip) },
            |first, strip| unsafe { strip_avx512(xs, columns, first, strip) },
        ),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => column_sums(
            xs,
            columns,
            &mut sums,
            |first, strip: &mut [_; 8]| unsafe { strip_avx2(xs, columns, first, strip) },
            |first, strip| unsafe { strip_avx2(xs, columns, first, strip) },
        ),
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => column_sums(
            xs,
            columns,
            &mut sums,
            |first, strip: &mut [_; 8]| unsafe { strip_neon(xs, columns, first, strip) },
            |first, strip| unsafe { strip_neon(xs, columns, first, strip) },
        ),
    }
    let mut out = host_buffer::<f32>(op, columns)?;
    // 0 / 0 is NaN, as the naive kernel's (not reached: `inner > 0`).
    let count = r.inner as f64;
    out.extend(
        sums.iter()
            .map(|&s| if mean { (s / count) as f32 } else { s as f32 }),
    );
    Tensor::from_host(out, &r.shape).map(Some)
}

/// A kernel of `sum_dim` or `mean_dim` (`$mean`) over leading dimensions on one instruction
/// set; every other call goes to the op's naive kernel (`$naive`).
macro_rules! column_kernel {
    ($name:ident = $op:ident, $naive:ident, $mean:literal; $cpu:tt, $needs:literal, $isa:ident) => {
        #[doc = concat!("`", stringify!($op), "` over leading dimensions (`column_sums`).")]
        ///
        /// # Safety
        ///
        #[doc = concat!("The CPU must have ", $needs, ". Dispatch installs this kernel only on ")]
        /// such a CPU (runtime detection).
        #[kernel(op = $op, key = CpuSimd, cpu = $cpu, dtypes = "f32")]
        #[target_feature(enable = $cpu)]
        pub fn $name(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
            match reduce(Isa::$isa, stringify!($op), x, dims, keepdim, $mean)? {
                Some(result) => Ok(result),
                None => $naive(x, dims, keepdim),
            }
        }
    };
}

// One kernel per line, so that each registration's `file:line` in dumps is its own.
#[cfg(target_arch = "x86_64")]
column_kernel!(sum_dim_avx512 = sum_dim, sum_dim_naive, false; "avx512f", "AVX-512F", Avx512);
#[cfg(target_arch = "x86_64")]
column_kernel!(mean_dim_avx512 = mean_dim, mean_dim_naive, true; "avx512f", "AVX-512F", Avx512);
#[cfg(target_arch = "x86_64")]
column_kernel!(sum_dim_avx2 = sum_dim, sum_dim_naive, false; "avx2", "AVX2", Avx2);
#[cfg(target_arch = "x86_64")]
column_kernel!(mean_dim_avx2 = mean_dim, mean_dim_naive, true; "avx2", "AVX2", Avx2);
#[cfg(target_arch = "aarch64")]
column_kernel!(sum_dim_neon = sum_dim, sum_dim_naive, false; "neon", "NEON", Neon);
#[cfg(target_arch = "aarch64")]
column_kernel!(mean_dim_neon = mean_dim, mean_dim_naive, true; "neon", "NEON", Neon);

#[cfg(test)]
mod tests {
    use super::*;

    type Kernel = fn(&Tensor, &[isize], bool) -> Result<Tensor>;

    /// The kernels this CPU runs, with the naive kernel each must equal.
    fn kernels() -> Vec<(&'static str, Kernel, Kernel)> {
        let mut found: Vec<(&'static str, Kernel, Kernel)> = Vec::new();
        #[cfg(target_arch = "aarch64")]
        if std::arch::is_aarch64_feature_detected!("neon") {
            // SAFETY (both): the CPU has NEON (checked above).
            found.push((
                "sum_dim_neon",
                |x, d, k| unsafe { sum_dim_neon(x, d, k) },
                sum_dim_naive,
            ));
            found.push((
                "mean_dim_neon",
                |x, d, k| unsafe { mean_dim_neon(x, d, k) },
                mean_dim_naive,
            ));
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY (both): the CPU has AVX2 (checked above).
            found.push((
                "sum_dim_avx2",
                |x, d, k| unsafe { sum_dim_avx2(x, d, k) },
                sum_dim_naive,
            ));
            found.push((
                "mean_dim_avx2",
                |x, d, k| unsafe { mean_dim_avx2(x, d, k) },
                mean_dim_naive,
            ));
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY (both): the CPU has AVX-512F (checked above).
            found.push((
                "sum_dim_avx512",
                |x, d, k| unsafe { sum_dim_avx512(x, d, k) },
                sum_dim_naive,
            ));
            found.push((
                "mean_dim_avx512",
                |x, d, k| unsafe { mean_dim_avx512(x, d, k) },
                mean_dim_naive,
            ));
        }
        found
    }

    /// Values over 60 binades, so that any other order of additions shows in the bits.
    fn tensor(shape: &[usize]) -> Tensor {
        Tensor::from_fn(shape, |i| {
            let x = i as f32;
            (x * 0.618_034).sin() * f32::powi(2.0, (i * 7 % 61) as i32 - 30)
        })
    }

    /// Leading reductions of every strip layout (wide strips, single vectors, single columns),
    /// and the calls that go to the naive kernel (other dims, views, narrow results, empty
    /// extents): the naive kernel's bits and shape.
    #[test]
    fn column_sums_are_the_naive_bits() {
        let cases: &[(&[usize], &[isize], bool)] = &[
            (&[4096, 64], &[0], false),
            (&[3, 8], &[0], false),
            (&[5, 9], &[0], true),
            (&[7, 63], &[0], false),
            (&[33, 65], &[-2], false),
            (&[2, 3, 100], &[0, 1], true),
            (&[17, 129], &[0], false),
            (&[300, 200], &[0], false),
            (&[4096, 2], &[0], false),
            (&[4096, 2], &[1], true),
            (&[6, 40, 12], &[0, 2], false),
            (&[0, 16], &[0], false),
            (&[16, 0], &[0], false),
            (&[8, 16], &[], false),
        ];
        for (name, kernel, naive) in kernels() {
            for &(shape, dims, keepdim) in cases {
                let x = tensor(shape);
                let (got, want) = (
                    kernel(&x, dims, keepdim).unwrap(),
                    naive(&x, dims, keepdim).unwrap(),
                );
                assert_eq!(got.shape(), want.shape(), "{name} {shape:?} {dims:?}");
                let bits = |t: &Tensor| {
                    t.to_vec::<f32>()
                        .into_iter()
                        .map(f32::to_bits)
                        .collect::<Vec<_>>()
                };
                assert_eq!(bits(&got), bits(&want), "{name} {shape:?} {dims:?}");
            }
            // A transposed view goes to the naive kernel.
            let x = switchyard::ops::transpose(&tensor(&[24, 40]), 0, 1);
            let (got, want) = (
                kernel(&x, &[0], false).unwrap(),
                naive(&x, &[0], false).unwrap(),
            );
            assert_eq!(
                got.to_vec::<f32>(),
                want.to_vec::<f32>(),
                "{name} transposed"
            );
            // Bad dims: the naive kernel's error.
            let err = kernel(&x, &[2], false).unwrap_err().to_string();
            assert!(err.contains("sum_dim") || err.contains("mean_dim"), "{err}");
        }
    }
}
