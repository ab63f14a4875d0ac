//! `matmul`'s AVX2+FMA microkernel: a 6 × 16 register tile (12 accumulators, two vectors a
//! row), each element of `x` broadcast from memory (`sgemm.rs` drives it).

#![allow(unsafe_code)] // the intrinsics and the raw element accesses, each justified below

use std::arch::x86_64::*;

use super::sgemm::{Microkernel, Tile};

/// The 6 × 16 AVX2+FMA tile.
pub(crate) struct Avx2;

// SAFETY: `run` touches only the tile's `rows × cols` elements of the result and its `kc`
// steps of `x` and of the panel, and writes every element of the tile when `first` is set
// (full or partial columns alike).
unsafe impl Microkernel for Avx2 {
    const MR: usize = 6;
    const NR: usize = 16;

    fn detected() -> bool {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
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
                _ => run_rows::<6>(tile),
            }
        }
    }
}

/// # Safety
/// As `Microkernel::run` with `rows = M` (AVX2 and FMA available).
#[target_feature(enable = "avx2,fma")]
unsafe fn run_rows<const M: usize>(t: &Tile) {
    const NR: usize = Avx2::NR;
    let mut lo = [_mm256_setzero_ps(); M];
    let mut hi = [_mm256_setzero_ps(); M];
    for p in 0..t.kc {
        // SAFETY: the panel holds `kc` rows of 16: row `p < kc` is in it.
        let (b0, b1) = unsafe {
            (
                _mm256_loadu_ps(t.panel.add(p * NR)),
                _mm256_loadu_ps(t.panel.add(p * NR + 8)),
            )
        };
        for i in 0..M {
            // SAFETY: element `(i, p)` of the strip, `i < rows`, `p < kc` (the contract).
            let a = unsafe { _mm256_broadcast_ss(&*t.a.add(i * t.a_row + p * t.a_step)) };
            lo[i] = _mm256_fmadd_ps(a, b0, lo[i]);
            hi[i] = _mm256_fmadd_ps(a, b1, hi[i]);
        }
    }
    for i in 0..M {
        // SAFETY: row `i` of the tile: `cols` elements from `c + i·ldc`, writable and (unless
        // `first`) initialised (the contract); a full tile touches 16, a partial one `cols`.
        unsafe {
            let out = t.c.add(i * t.ldc);
            if t.cols == NR {
                if t.first {
                    _mm256_storeu_ps(out, lo[i]);
                    _mm256_storeu_ps(out.add(8), hi[i]);
                } else {
                    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_loadu_ps(out), lo[i]));
                    let out_hi = out.add(8);
                    _mm256_storeu_ps(out_hi, _mm256_add_ps(_mm256_loadu_ps(out_hi), hi[i]));
                }
            } else {
                let mut lanes = [0.0f32; NR];
                _mm256_storeu_ps(lanes.as_mut_ptr(), lo[i]);
                _mm256_storeu_ps(lanes.as_mut_ptr().add(8), hi[i]);
                for (j, &lane) in lanes.iter().enumerate().take(t.cols) {
                    let slot = out.add(j);
                    *slot = if t.first { lane } else { *slot + lane };
                }
            }
        }
    }
}
