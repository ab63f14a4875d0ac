//! `matmul`'s kernels for a narrow `y` (at most [`NARROW`] columns, as a classifier's last
//! layer and its weight gradient): the register tiles compute 16 or 32 columns whatever `n` is,
//! so a 2-column product there costs what a 32-column one does.
//!
//! Two layouts of `x` are served, each with one order of additions that the AVX2 and AVX-512
//! variants both follow (the same bits):
//! - **rows of `x` contiguous** ([`Narrow::dot_rows`]): each element is a dot product along `k`
//!   in 16 lanes (lane `q` adds the products of steps `p ≡ q mod 16`, in order; AVX2 holds them
//!   in two vectors), the lanes then added in one fixed tree;
//! - **columns of `x` contiguous** (a transposed view, as a weight gradient `hᵀ·g` reads;
//!   [`Narrow::dot_columns`]): the vectors run down `x`'s rows (two vectors side by side), and
//!   each element is one chain of FMAs along `k`, in order.
//!
//! `matmul.rs` also runs them on the transposed product `(yᵀ·xᵀ)ᵀ` when `x` has at most
//! [`NARROW`] rows.

#![allow(unsafe_code)] // the intrinsics, on chunks whose length the types give

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::sgemm::{Microkernel, Strided};
use super::{avx2, avx512, sgemm_avx2::Avx2, sgemm_avx512::Avx512};

/// The widest `y` these kernels take.
pub(crate) const NARROW: usize = 4;

/// Lanes of a dot product's partial sums, on every ISA.
const LANES: usize = 16;

/// Rows whose dot products run side by side.
const GROUP: usize = 4;

/// The instruction set a narrow kernel runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Narrow {
    Avx2,
    Avx512,
}

impl Narrow {
    /// Whether the running CPU has the features (those of the register tiles of the same ISA).
    pub(crate) fn detected(self) -> bool {
        match self {
            Narrow::Avx2 => Avx2::detected(),
            Narrow::Avx512 => Avx512::detected(),
        }
    }

    /// `out[rows × n]` = `x[rows × k]` · `y[k × n]` for `x` with contiguous rows (`x` holds
    /// row `i` at `i·row_stride..i·row_stride + k`), `1 ≤ n ≤ NARROW`. `false` (nothing written)
    /// where the shapes do not fit the slices or the CPU lacks the features; `true` after
    /// writing every element of `out`.
    pub(crate) fn dot_rows(
        self,
        (rows, k, n): (usize, usize, usize),
        (x, row_stride): (&[f32], usize),
        (y, yr, yc): (&[f32], usize, usize),
        out: &mut [MaybeUninit<f32>],
    ) -> bool {
        let fits = (1..=NARROW).contains(&n)
            && rows.checked_mul(n) == Some(out.len())
            && covers(x, rows, k, row_stride, 1)
            && covers(y, k, n, yr, yc);
        if !fits || !self.detected() {
            return false;
        }
        if k == 0 {
            out.fill(MaybeUninit::new(0.0));
            return true;
        }
        // `y`'s columns as rows of whole chunks of `LANES`, zero past `k`.
        let chunks = k.div_ceil(LANES);
        let mut columns: Vec<[f32; LANES]> = Vec::new();
        if columns.try_reserve_exact(n * chunks).is_err() {
            return false;
        }
        columns.resize(n * chunks, [0.0; LANES]);
        for j in 0..n {
            for p in 0..k {
                columns[j * chunks + p / LANES][p % LANES] = y[p * yr + j * yc];
            }
        }
        // Rows four at a time: their chains are independent, so the FMAs' latency overlaps;
        // the last `rows % GROUP` one at a time.
        let grouped = rows / GROUP * GROUP;
        let (groups, rest) = out.split_at_mut(grouped * n);
        for (g, group) in groups.chunks_exact_mut(GROUP * n).enumerate() {
            self.dot_group::<GROUP>((x, row_stride), g * GROUP, k, &columns, group);
        }
        for (r, row) in rest.chunks_exact_mut(n).enumerate() {
            self.dot_group::<1>((x, row_stride), grouped + r, k, &columns, row);
        }
        true
    }

    /// Rows `i..i + R` of `x` (each `k` long from `i·row_stride`) times the columns packed in
    /// `columns` (`out.len() / R` of them, 1 to `NARROW`), into `out` (`R` rows of the result).
    fn dot_group<const R: usize>(
        self,
        (x, row_stride): (&[f32], usize),
        i: usize,
        k: usize,
        columns: &[[f32; LANES]],
        out: &mut [MaybeUninit<f32>],
    ) {
        let row = |r: usize| &x[(i + r) * row_stride..(i + r) * row_stride + k];
        let whole: [&[[f32; LANES]]; R] = std::array::from_fn(|r| row(r).as_chunks::<LANES>().0);
        // The rows' last partial chunks (empty when `k` is a multiple of `LANES`).
        let tails: [&[f32]; R] = std::array::from_fn(|r| row(r).as_chunks::<LANES>().1);
        let rows = Rows {
            whole,
            tails,
            columns,
        };
        let mut sums = [[0.0; NARROW]; R];
        // SAFETY: `dot_rows` checked `detected()` before calling this.
        unsafe {
            match (self, out.len() / R) {
                (Narrow::Avx2, 1) => dot_avx2::<R, 1>(rows, &mut sums),
                (Narrow::Avx2, 2) => dot_avx2::<R, 2>(rows, &mut sums),
                (Narrow::Avx2, 3) => dot_avx2::<R, 3>(rows, &mut sums),
                (Narrow::Avx2, _) => dot_avx2::<R, 4>(rows, &mut sums),
                (Narrow::Avx512, 1) => dot_avx512::<R, 1>(rows, &mut sums),
                (Narrow::Avx512, 2) => dot_avx512::<R, 2>(rows, &mut sums),
                (Narrow::Avx512, 3) => dot_avx512::<R, 3>(rows, &mut sums),
                (Narrow::Avx512, _) => dot_avx512::<R, 4>(rows, &mut sums),
            }
        }
        for (row, sums) in out.chunks_exact_mut(out.len() / R).zip(sums) {
            for (to, sum) in row.iter_mut().zip(sums) {
                *to = MaybeUninit::new(sum);
            }
        }
    }

    /// `out[rows × n]` = `x[rows × k]` · `y[k × n]` for `x` with contiguous columns (`x` holds
    /// column `p` at `p·col_stride..p·col_stride + rows`), `1 ≤ n ≤ NARROW`. `false` (nothing
    /// written) where the shapes do not fit the slices or the CPU lacks the features; `true` after
    /// writing every element of `out`.
    pub(crate) fn dot_columns(
        self,
        (rows, k, n): (usize, usize, usize),
        (x, col_stride): (&[f32], usize),
        (y, yr, yc): (&[f32], usize, usize),
        out: &mut [MaybeUninit<f32>],
    ) -> bool {
        let fits = (1..=NARROW).contains(&n)
            && rows.checked_mul(n) == Some(out.len())
            && covers(x, rows, k, 1, col_stride)
            && covers(y, k, n, yr, yc);
        if !fits || !self.detected() {
            return false;
        }
        // Two vectors of rows at a time: twice the independent chains (an FMA's latency is
        // four of its issue slots).
        let width = match self {
            Narrow::Avx2 => 16,
            Narrow::Avx512 => 32,
        };
        let mut first = 0;
        while first < rows {
            let count = width.min(rows - first);
            let mut block = [[0.0; 2 * LANES]; NARROW];
            // SAFETY: `detected()` held above; the block's rows `first..first + count` are rows
            // of `x` (`covers`, checked above), `count ≤ width`.
            unsafe {
                match self {
                    Narrow::Avx2 => columns_avx2(
                        (x, col_stride),
                        (first, count, k),
                        (y, yr, yc),
                        &mut block[..n],
                    ),
                    Narrow::Avx512 => columns_avx512(
                        (x, col_stride),
                        (first, count, k),
                        (y, yr, yc),
                        &mut block[..n],
                    ),
                }
            }
            for r in 0..count {
                for j in 0..n {
                    out[(first + r) * n + j] = MaybeUninit::new(block[j][r]);
                }
            }
            first += count;
        }
        true
    }
}

/// Whether every element `(i, j)`, `i < rows`, `j < cols` of `elements` with these strides is
/// inside it (checked arithmetic).
fn covers(
    elements: &[f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
) -> bool {
    let operand = Strided {
        elements,
        row_stride,
        col_stride,
    };
    operand.covers(rows, cols)
}

/// `R` rows of `x` (each its `whole` chunks, then its `tails`, shorter than a chunk and maybe
/// empty) and the columns of `y` they meet (`columns`: each column's chunks, zero past `k`, one
/// column after another).
#[derive(Clone, Copy)]
struct Rows<'a, const R: usize> {
    whole: [&'a [[f32; LANES]]; R],
    tails: [&'a [f32]; R],
    columns: &'a [[f32; LANES]],
}

/// The dot products of `rows` with `N` columns, into `sums[r][j]`: 16 lane sums each (lane `i`
/// adds the chunks' lane `i` in order), then lane `i` and lane `i + 8` added, then
/// [`add_eight`]'s tree.
///
/// # Safety
/// AVX2 and FMA are available; `rows.columns` holds `N` columns of equally many chunks.
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2<const R: usize, const N: usize>(
    rows: Rows<'_, R>,
    sums: &mut [[f32; NARROW]; R],
) {
    let load = |chunk: &[f32; LANES]| {
        // SAFETY: `chunk` is 16 readable `f32`: two loads of 8 (`loadu`: no alignment needed).
        unsafe {
            (
                _mm256_loadu_ps(chunk.as_ptr()),
                _mm256_loadu_ps(chunk.as_ptr().add(8)),
            )
        }
    };
    let chunks = rows.columns.len() / N;
    let mut acc = [[(_mm256_setzero_ps(), _mm256_setzero_ps()); N]; R];
    let mut step = |q: usize, x: [(__m256, __m256); R]| {
        for j in 0..N {
            let (c_lo, c_hi) = load(&rows.columns[j * chunks + q]);
            for (acc, (x_lo, x_hi)) in acc.iter_mut().zip(x) {
                let (lo, hi) = acc[j];
                acc[j] = (
                    _mm256_fmadd_ps(x_lo, c_lo, lo),
                    _mm256_fmadd_ps(x_hi, c_hi, hi),
                );
            }
        }
    };
    let whole = rows.whole[0].len();
    for q in 0..whole {
        step(q, rows.whole.map(|row| load(&row[q])));
    }
    if !rows.tails[0].is_empty() {
        step(
            whole,
            rows.tails.map(|tail| {
                // Lanes at or past the tail's length are zero, read nowhere.
                let lanes = |from: usize| avx2::first_lanes(tail.len().saturating_sub(from));
                let at = tail.as_ptr();
                // SAFETY: the lanes the masks select are elements of `tail` (fewer than its
                // length from `at` and from `at + 8`); `maskload` neither reads nor faults on the
                // others, and `wrapping_add` forms the second address without a claim that it
                // is inside `tail`.
                unsafe {
                    (
                        _mm256_maskload_ps(at, lanes(0)),
                        _mm256_maskload_ps(at.wrapping_add(8), lanes(8)),
                    )
                }
            }),
        );
    }
    for (sums, acc) in sums.iter_mut().zip(acc) {
        for (sum, (lo, hi)) in sums.iter_mut().zip(acc) {
            *sum = add_eight(_mm256_add_ps(lo, hi));
        }
    }
}

/// As [`dot_avx2`], the 16 lanes in one vector.
///
/// # Safety
/// AVX-512F is available; `rows.columns` holds `N` columns of equally many chunks.
#[target_feature(enable = "avx512f")]
unsafe fn dot_avx512<const R: usize, const N: usize>(
    rows: Rows<'_, R>,
    sums: &mut [[f32; NARROW]; R],
) {
    // SAFETY: `chunk` is 16 readable `f32` (`loadu`: no alignment needed).
    let load = |chunk: &[f32; LANES]| unsafe { _mm512_loadu_ps(chunk.as_ptr()) };
    let chunks = rows.columns.len() / N;
    let mut acc = [[_mm512_setzero_ps(); N]; R];
    let mut step = |q: usize, x: [__m512; R]| {
        for j in 0..N {
            let c = load(&rows.columns[j * chunks + q]);
            for (acc, x) in acc.iter_mut().zip(x) {
                acc[j] = _mm512_fmadd_ps(x, c, acc[j]);
            }
        }
    };
    let whole = rows.whole[0].len();
    for q in 0..whole {
        step(q, rows.whole.map(|row| load(&row[q])));
    }
    if !rows.tails[0].is_empty() {
        step(
            whole,
            rows.tails.map(|tail| {
                let lanes = avx512::first_lanes(tail.len());
                // SAFETY: the lanes the mask selects are the elements of `tail`; a masked load
                // neither reads nor faults on the others (they are zero).
                unsafe { _mm512_maskz_loadu_ps(lanes, tail.as_ptr()) }
            }),
        );
    }
    for (sums, acc) in sums.iter_mut().zip(acc) {
        for (sum, acc) in sums.iter_mut().zip(acc) {
            // Lane `i` plus lane `i + 8`, as AVX2's two vectors add.
            let low = _mm512_castps512_ps256(acc);
            let high = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(acc)));
            *sum = add_eight(_mm256_add_ps(low, high));
        }
    }
}

/// The sum of 8 lanes in one tree: lane `i` plus lane `i + 4`, then `i + 2`, then `i + 1`.
#[inline]
#[target_feature(enable = "avx")]
fn add_eight(v: __m256) -> f32 {
    let four = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let two = _mm_add_ps(four, _mm_movehl_ps(four, four));
    _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps::<1>(two, two)))
}

/// Rows `first..first + count` (`count ≤ 16`: two vectors of 8) of `x` (column `p` at
/// `p·col_stride`) times the `block.len()` columns of `y`: each element one chain of FMAs along
/// `k`; row `r`'s result for column `j` in `block[j][r]`.
///
/// # Safety
/// AVX2 and FMA are available; `x` holds `first + count` rows of `k` columns at that stride.
#[target_feature(enable = "avx2,fma")]
unsafe fn columns_avx2(
    (x, col_stride): (&[f32], usize),
    (first, count, k): (usize, usize, usize),
    y: (&[f32], usize, usize),
    block: &mut [[f32; 2 * LANES]],
) {
    let acc = if count == 16 {
        let load = |p: usize| {
            let column = &x[first + p * col_stride..][..16];
            // SAFETY: `column` is 16 readable `f32` (`loadu`: no alignment needed).
            unsafe { [0, 8].map(|at| _mm256_loadu_ps(column[at..].as_ptr())) }
        };
        chains_avx2(k, load, y, block.len())
    } else {
        // The lanes of the last block's rows in each vector; `count < 16`.
        let lanes = [0, 8].map(|from| avx2::first_lanes(count.saturating_sub(from)));
        let load = |p: usize| {
            let at = x[first + p * col_stride..][..count].as_ptr();
            // SAFETY: the lanes the masks select are the column's `count` elements (fewer than
            // `count` from `at` and from `at + 8`); `maskload` neither reads nor faults on the
            // others (they are zero), and `wrapping_add` forms the second address without a
            // claim that it is inside `x`.
            unsafe {
                [
                    _mm256_maskload_ps(at, lanes[0]),
                    _mm256_maskload_ps(at.wrapping_add(8), lanes[1]),
                ]
            }
        };
        chains_avx2(k, load, y, block.len())
    };
    for (column, acc) in block.iter_mut().zip(acc) {
        for (half, acc) in column.chunks_exact_mut(8).zip(acc) {
            // SAFETY: `half` holds 8 writable `f32`.
            unsafe { _mm256_storeu_ps(half.as_mut_ptr(), acc) };
        }
    }
}

/// As [`columns_avx2`], two vectors of 16 rows (`count ≤ 32`).
///
/// # Safety
/// AVX-512F is available; `x` holds `first + count` rows of `k` columns at that stride.
#[target_feature(enable = "avx512f")]
unsafe fn columns_avx512(
    (x, col_stride): (&[f32], usize),
    (first, count, k): (usize, usize, usize),
    y: (&[f32], usize, usize),
    block: &mut [[f32; 2 * LANES]],
) {
    let acc = if count == 32 {
        let load = |p: usize| {
            let column = &x[first + p * col_stride..][..32];
            // SAFETY: `column` is 32 readable `f32` (`loadu`: no alignment needed).
            unsafe { [0, 16].map(|at| _mm512_loadu_ps(column[at..].as_ptr())) }
        };
        chains_avx512(k, load, y, block.len())
    } else {
        // The lanes of the last block's rows in each vector; `count < 32`, each under 17.
        let lanes = [0, 16].map(|from| avx512::first_lanes(count.saturating_sub(from)));
        let load = |p: usize| {
            let at = x[first + p * col_stride..][..count].as_ptr();
            // SAFETY: the lanes the masks select are the column's `count` elements (fewer than
            // `count` from `at` and from `at + 16`); a masked load neither reads nor faults on
            // the others (they are zero), and `wrapping_add` forms the second address without a
            // claim that it is inside `x`.
            unsafe {
                [
                    _mm512_maskz_loadu_ps(lanes[0], at),
                    _mm512_maskz_loadu_ps(lanes[1], at.wrapping_add(16)),
                ]
            }
        };
        chains_avx512(k, load, y, block.len())
    };
    for (column, acc) in block.iter_mut().zip(acc) {
        for (half, acc) in column.chunks_exact_mut(16).zip(acc) {
            // SAFETY: `half` holds 16 writable `f32`.
            unsafe { _mm512_storeu_ps(half.as_mut_ptr(), acc) };
        }
    }
}

/// The FMA chains of [`columns_avx2`]: `acc[j][h] += x(p)[h] · y[p, j]` for `p` in order,
/// `j < n`, the block's two vectors of column `p` loaded by `load(p)`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn chains_avx2(
    k: usize,
    load: impl Fn(usize) -> [__m256; 2],
    (y, yr, yc): (&[f32], usize, usize),
    n: usize,
) -> [[__m256; 2]; NARROW] {
    let mut acc = [[_mm256_setzero_ps(); 2]; NARROW];
    for p in 0..k {
        let v = load(p);
        for (j, acc) in acc.iter_mut().enumerate().take(n) {
            let b = _mm256_set1_ps(y[p * yr + j * yc]);
            *acc = [
                _mm256_fmadd_ps(v[0], b, acc[0]),
                _mm256_fmadd_ps(v[1], b, acc[1]),
            ];
        }
    }
    acc
}

/// As [`chains_avx2`], 16 lanes a vector.
#[inline]
#[target_feature(enable = "avx512f")]
fn chains_avx512(
    k: usize,
    load: impl Fn(usize) -> [__m512; 2],
    (y, yr, yc): (&[f32], usize, usize),
    n: usize,
) -> [[__m512; 2]; NARROW] {
    let mut acc = [[_mm512_setzero_ps(); 2]; NARROW];
    for p in 0..k {
        let v = load(p);
        for (j, acc) in acc.iter_mut().enumerate().take(n) {
            let b = _mm512_set1_ps(y[p * yr + j * yc]);
            *acc = [
                _mm512_fmadd_ps(v[0], b, acc[0]),
                _mm512_fmadd_ps(v[1], b, acc[1]),
            ];
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(i: usize, j: usize, seed: usize) -> f32 {
        let h = (i * 7919 + j * 104_729 + seed * 31).wrapping_mul(2_654_435_761) % 2001;
        h as f32 / 1000.0 - 1.0
    }

    /// Both layouts of `x`, both ISAs (where the CPU has them), tails of rows and of `k`: the
    /// ISAs give the same bits, and each element is within `(k+1)·ε·Σ|terms|` of the product.
    #[test]
    fn narrow_kernels_give_the_product_with_the_same_bits_on_every_isa() {
        let shapes = [
            (1, 1, 1),
            (5, 3, 2),
            (17, 16, 4),
            (33, 17, 3),
            (40, 300, 2),
            (7, 0, 2),
        ];
        for (m, k, n) in shapes {
            // `x` row-major (`m × k`) and column-major (`k` columns of `m`); `y` column-major
            // (strides `(1, k)`), as a transposed weight is.
            let rows: Vec<f32> = (0..m * k)
                .map(|e| value(e / k.max(1), e % k.max(1), 1))
                .collect();
            let columns: Vec<f32> = (0..m * k).map(|e| value(e % m, e / m, 1)).collect();
            let y: Vec<f32> = (0..k * n)
                .map(|e| value(e % k.max(1), e / k.max(1), 2))
                .collect();
            let mut results: Vec<(String, Vec<u32>)> = Vec::new();
            for isa in [Narrow::Avx2, Narrow::Avx512] {
                if !isa.detected() {
                    continue;
                }
                for by_rows in [true, false] {
                    let mut out = vec![MaybeUninit::new(f32::NAN); m * n];
                    let written = match by_rows {
                        true => isa.dot_rows((m, k, n), (&rows, k), (&y, 1, k), &mut out),
                        false => isa.dot_columns((m, k, n), (&columns, m), (&y, 1, k), &mut out),
                    };
                    assert!(written, "{m}x{k}x{n} {isa:?} by rows {by_rows}: refused");
                    // SAFETY: every element was initialised (NaN) before the kernel ran.
                    let bits = out
                        .iter()
                        .map(|v| unsafe { v.assume_init() }.to_bits())
                        .collect();
                    results.push((format!("{isa:?}, by rows {by_rows}"), bits));
                }
            }
            // Two per ISA (by rows, by columns): each against the same layout on the other ISA.
            for (a, b) in results.iter().zip(results.iter().skip(2)) {
                assert!(a.1 == b.1, "{m}x{k}x{n}: {} and {} differ", a.0, b.0);
            }
            for (how, bits) in &results {
                for i in 0..m {
                    for j in 0..n {
                        let (mut exact, mut scale) = (0.0f64, 0.0f64);
                        for p in 0..k {
                            let term = f64::from(value(i, p, 1)) * f64::from(value(p, j, 2));
                            exact += term;
                            scale += term.abs();
                        }
                        let got = f64::from(f32::from_bits(bits[i * n + j]));
                        let bound = (k as f64 + 1.0) * f64::from(f32::EPSILON) * scale;
                        assert!(
                            (got - exact).abs() <= bound,
                            "{m}x{k}x{n} {how}: ({i}, {j}) is {got}, the product {exact}"
                        );
                    }
                }
            }
        }
    }

    /// With `k = 0` the product is zeros, whatever the strides say about an empty `x`.
    #[test]
    fn narrow_kernels_write_zeros_for_an_empty_k() {
        for isa in [Narrow::Avx2, Narrow::Avx512]
            .into_iter()
            .filter(|isa| isa.detected())
        {
            let mut out = vec![MaybeUninit::new(f32::NAN); 6];
            assert!(isa.dot_rows((3, 0, 2), (&[], 5), (&[], 1, 1), &mut out));
            // SAFETY: every element was initialised (NaN) above.
            assert!(out.iter().all(|v| unsafe { v.assume_init() } == 0.0));
            let mut out = vec![MaybeUninit::new(f32::NAN); 6];
            assert!(isa.dot_columns((3, 0, 2), (&[], 5), (&[], 1, 1), &mut out));
            // SAFETY: as above.
            assert!(out.iter().all(|v| unsafe { v.assume_init() } == 0.0));
        }
    }

    /// Operands too short for their shapes, or a `y` too wide, are refused, nothing written.
    #[test]
    fn narrow_kernels_refuse_what_does_not_fit() {
        let isa = [Narrow::Avx512, Narrow::Avx2]
            .into_iter()
            .find(|isa| isa.detected());
        let Some(isa) = isa else {
            return;
        };
        let (x, y) = (vec![1.0; 6], vec![1.0; 15]);
        let mut out = vec![MaybeUninit::new(f32::NAN); 10];
        assert!(!isa.dot_rows((2, 4, 5), (&x, 3), (&y, 5, 1), &mut out)); // x short, n > NARROW
        assert!(!isa.dot_rows((2, 3, 4), (&x, 3), (&y, 6, 1), &mut out[..8])); // y short
        assert!(!isa.dot_columns((3, 3, 2), (&x, 3), (&y, 2, 1), &mut out[..5])); // out wrong
        // SAFETY: every element was initialised (NaN) above.
        assert!(out.iter().all(|v| unsafe { v.assume_init() }.is_nan()));
    }
}
