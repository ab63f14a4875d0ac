//! `matmul`'s AVX-512F microkernel: a 14 × 32 register tile (28 accumulators, two vectors a
//! row, of the 32 registers; two more hold the panel's row and one the broadcast element of
//! `x`), partial columns through masked loads and stores (`sgemm.rs` drives it). Each element of
//! the result is the same chain of FMAs as in the AVX2 tile: the same bits.

#![allow(unsafe_code)] // the intrinsics and the raw element accesses, each justified below

use std::arch::x86_64::*;

use super::avx512::first_lanes;
use super::sgemm::{Microkernel, Tile};

/// The 14 × 32 AVX-512F tile.
pub(crate) struct Avx512;

// SAFETY: `run` touches only the tile's `rows × cols` elements of the result (masked accesses
// beyond `cols` neither read nor write, nor fault) and its `kc` steps of `x` and of the panel,
// and writes every element of the tile when `first` is set.
unsafe impl Microkernel for Avx512 {
    const MR: usize = 14;
    const NR: usize = 32;

    fn detected() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
    }

    unsafe fn run(tile: &Tile, rows: usize) {
        // A full tile of packed `x` (the strides the packing gives), the bulk of a large
        // product, with those strides as constants: each element's address is then a constant
        // offset from one pointer, and the loop has no integer work left to take the FMA ports.
        let packed = tile.a_row == 1 && tile.a_step == Self::MR;
        // SAFETY: the caller upholds `run`'s contract, which `run_rows` restates for `M = rows`
        // (and, packed, for the strides checked just above).
        unsafe {
            match rows {
                14.. if packed => run_rows::<14, true>(tile),
                1 => run_rows::<1, false>(tile),
                2 => run_rows::<2, false>(tile),
                3 => run_rows::<3, false>(tile),
                4 => run_rows::<4, false>(tile),
                5 => run_rows::<5, false>(tile),
                6 => run_rows::<6, false>(tile),
                7 => run_rows::<7, false>(tile),
                8 => run_rows::<8, false>(tile),
                9 => run_rows::<9, false>(tile),
                10 => run_rows::<10, false>(tile),
                11 => run_rows::<11, false>(tile),
                12 => run_rows::<12, false>(tile),
                13 => run_rows::<13, false>(tile),
                _ => run_rows::<14, false>(tile),
            }
        }
    }
}

/// The lanes of a 16-lane vector that hold columns `from..cols` of the tile (none, some, all).
fn column_mask(cols: usize, from: usize) -> __mmask16 {
    first_lanes(cols.saturating_sub(from))
}

/// # Safety
/// As `Microkernel::run` with `rows = M` (AVX-512F available); with `PACKED`, the strip's strides
/// are `a_row = 1` and `a_step = MR`.
#[target_feature(enable = "avx512f")]
unsafe fn run_rows<const M: usize, const PACKED: bool>(t: &Tile) {
    const NR: usize = Avx512::NR;
    let (a_row, a_step) = if PACKED {
        (1, Avx512::MR)
    } else {
        (t.a_row, t.a_step)
    };
    let mut lo = [_mm512_setzero_ps(); M];
    let mut hi = [_mm512_setzero_ps(); M];
    for p in 0..t.kc {
        // SAFETY: the panel holds `kc` rows of 32: row `p < kc` is in it.
        let (b0, b1) = unsafe {
            (
                _mm512_loadu_ps(t.panel.add(p * NR)),
                _mm512_loadu_ps(t.panel.add(p * NR + 16)),
            )
        };
        for i in 0..M {
            // SAFETY: element `(i, p)` of the strip, `i < rows`, `p < kc` (the contract).
            let a = _mm512_set1_ps(unsafe { *t.a.add(i * a_row + p * a_step) });
            lo[i] = _mm512_fmadd_ps(a, b0, lo[i]);
            hi[i] = _mm512_fmadd_ps(a, b1, hi[i]);
        }
    }
    let (lo_mask, hi_mask) = (column_mask(t.cols, 0), column_mask(t.cols, 16));
    for i in 0..M {
        // Row `i` of the tile starts at `c + i·ldc`; its columns 16.. (if any) 16 further on.
        // `wrapping_add`: no pointer is formed out of bounds where the tile has ≤ 16 columns.
        let out_lo = t.c.wrapping_add(i * t.ldc);
        let out_hi = out_lo.wrapping_add(16);
        // SAFETY: the masked lanes are the tile's columns `< cols` of row `i < rows`: inside the
        // result, writable and (unless `first`) initialised (the contract). Lanes outside the
        // mask are neither read nor written, and raise no fault. A zero mask skips the access.
        unsafe {
            if t.first {
                _mm512_mask_storeu_ps(out_lo, lo_mask, lo[i]);
                if hi_mask != 0 {
                    _mm512_mask_storeu_ps(out_hi, hi_mask, hi[i]);
                }
            } else {
                let old = _mm512_maskz_loadu_ps(lo_mask, out_lo);
                _mm512_mask_storeu_ps(out_lo, lo_mask, _mm512_add_ps(old, lo[i]));
                if hi_mask != 0 {
                    let old = _mm512_maskz_loadu_ps(hi_mask, out_hi);
                    _mm512_mask_storeu_ps(out_hi, hi_mask, _mm512_add_ps(old, hi[i]));
                }
            }
        }
    }
}
