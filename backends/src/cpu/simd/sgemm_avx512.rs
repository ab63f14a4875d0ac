//! `matmul`'s AVX-512F microkernel: a 14 × 32 register tile (28 accumulators, two vectors a
//! row, of the 32 registers; two more hold the panel's row and one the broadcast element of
//! `x`), partial columns through masked loads and stores (`sgemm.rs` drives it). Each element of
//! the result is the same chain of FMAs as in the AVX2 tile: the same bits.

#![allow(unsafe_code)] // the intrinsics and the raw element accesses, each justified below

use std::arch::x86_64::*;

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
        // SAFETY: the caller upholds `run`'s contract, which `run_rows` restates for `M = rows`.
        unsafe {
            match rows {
                1 => run_rows::<1>(tile),
                2 => run_rows::<2>(tile),
                3 => run_rows::<3>(tile),
                4 => run_rows::<4>(tile),
                5 => run_rows::<5>(tile),
                6 => run_rows::<6>(tile),
                7 => run_rows::<7>(tile),
                8 => run_rows::<8>(tile),
                9 => run_rows::<9>(tile),
                10 => run_rows::<10>(tile),
                11 => run_rows::<11>(tile),
                12 => run_rows::<12>(tile),
                13 => run_rows::<13>(tile),
                _ => run_rows::<14>(tile),
            }
        }
    }
}

/// The lanes of a 16-lane vector that hold columns `from..cols` of the tile (none, some, all).
fn column_mask(cols: usize, from: usize) -> __mmask16 {
    let lanes = cols.saturating_sub(from).min(16);
    // `lanes ≤ 16`: the shift stays below 32 bits, and the value fits 16.
    ((1u32 << lanes) - 1) as __mmask16
}

/// # Safety
/// As `Microkernel::run` with `rows = M` (AVX-512F available).
#[target_feature(enable = "avx512f")]
unsafe fn run_rows<const M: usize>(t: &Tile) {
    const NR: usize = Avx512::NR;
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
            let a = _mm512_set1_ps(unsafe { *t.a.add(i * t.a_row + p * t.a_step) });
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
