//! `matmul`'s AVX2+FMA kernel: a 6 × 16 register tile (12 accumulators) over panels of `y`
//! packed 16 columns wide, `x` read in place (each element broadcast from memory).
//!
//! Why not `matrixmultiply` (which serves larger products, and NEON): measured side by side on
//! one core, these tiles ran 64² and 256² products about 1.1× faster; the difference is the
//! small products' fixed costs (`matrixmultiply` packs both operands; here only `y` is packed,
//! once per block of 256 rows of `k` × 256 columns). From about 1024², and for an `x` whose rows
//! are not contiguous (a transposed view), `matrixmultiply` is faster (it packs `x` too):
//! `matmul.rs` picks by the product's size and `x`'s layout.
//!
//! Blocking: for each block of `NC` columns and `KC` rows of `y` (its panels, 16 columns each,
//! zero-padded at the right edge, fit the core's L2), every 6-row strip of `x` meets every
//! panel; the strip's 6 × `KC` elements stay in L1 across the panels. Each element of the
//! result is one chain of FMAs per `KC` block, the blocks added in order: the same arithmetic
//! whichever rows a thread's part holds (results do not depend on the thread count).

#![allow(unsafe_code)] // the intrinsics and the raw element accesses, each justified below

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Rows of the register tile.
pub(crate) const MR: usize = 6;
/// Columns of the register tile (two vectors) and of a packed panel.
const NR: usize = 16;
/// Rows of `y` (and columns of `x`) per block.
const KC: usize = 256;
/// Columns of `y` per block.
const NC: usize = 256;

/// One operand: its elements and the strides of its rows and columns.
#[derive(Clone, Copy)]
pub(crate) struct Strided<'a> {
    pub(crate) elements: &'a [f32],
    pub(crate) row_stride: usize,
    pub(crate) col_stride: usize,
}

impl Strided<'_> {
    /// Whether every element `(i, j)`, `i < rows`, `j < cols` is in `elements` (with checked
    /// arithmetic: a stride that overflows is out of range).
    fn covers(&self, rows: usize, cols: usize) -> bool {
        if rows == 0 || cols == 0 {
            return true;
        }
        let last = (rows - 1).checked_mul(self.row_stride).and_then(|r| {
            (cols - 1)
                .checked_mul(self.col_stride)
                .and_then(|c| r.checked_add(c))
        });
        last.is_some_and(|last| last < self.elements.len())
    }
}

/// Why the kernel wrote nothing.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// An operand does not hold the elements its shape and strides name, or `out` is not
    /// `rows × n`: a defect of the caller.
    Layout,
    /// The buffer for `y`'s packed panels (`bytes`) could not be allocated.
    OutOfMemory { bytes: usize },
}

/// `out[rows × n]` (row-major, every element written) = `x[rows × k]` · `y[k × n]`.
///
/// # Safety
/// The CPU supports AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn sgemm(
    rows: usize,
    k: usize,
    n: usize,
    x: Strided<'_>,
    y: Strided<'_>,
    out: &mut [MaybeUninit<f32>],
) -> Result<(), Refused> {
    if !x.covers(rows, k) || !y.covers(k, n) || rows.checked_mul(n) != Some(out.len()) {
        return Err(Refused::Layout);
    }
    if out.is_empty() {
        return Ok(());
    }
    if k == 0 {
        out.fill(MaybeUninit::new(0.0));
        return Ok(());
    }
    let mut pack: Vec<f32> = Vec::new();
    // The largest block of packed panels: `kc` rows of `y` by `nc` columns rounded up to 16.
    let most = KC.min(k) * NC.min(n).div_ceil(NR) * NR;
    pack.try_reserve_exact(most)
        .map_err(|_| Refused::OutOfMemory {
            bytes: most * size_of::<f32>(),
        })?;
    let c = out.as_mut_ptr().cast::<f32>();
    let mut jc = 0;
    while jc < n {
        let nc = NC.min(n - jc);
        let panels = nc.div_ceil(NR);
        let mut pc = 0;
        while pc < k {
            let kc = KC.min(k - pc);
            pack_panels(&mut pack, y, pc, kc, jc, nc);
            let first = pc == 0;
            let mut ir = 0;
            while ir < rows {
                let mr = MR.min(rows - ir);
                for q in 0..panels {
                    let tile = Tile {
                        x,
                        row: ir,
                        depth: pc,
                        kc,
                        panel: &pack[q * kc * NR..(q + 1) * kc * NR],
                        c,
                        ldc: n,
                        col: jc + q * NR,
                        cols: NR.min(nc - q * NR),
                        first,
                    };
                    // SAFETY: AVX2 and FMA are available (this function's contract). The tile
                    // is inside the product: `ir + mr <= rows`, `col + cols <= n`, `depth + kc
                    // <= k`, so with `x.covers(rows, k)` (checked above) every element of `x`
                    // it reads is in `x.elements`, and every element of the result it touches
                    // is in `out` (`rows × n` elements, checked), which this function borrows
                    // exclusively; the elements it reads back were written by the tile of the
                    // same rows and columns for the first `KC` block (`first`).
                    unsafe {
                        match mr {
                            1 => tile.run::<1>(),
                            2 => tile.run::<2>(),
                            3 => tile.run::<3>(),
                            4 => tile.run::<4>(),
                            5 => tile.run::<5>(),
                            _ => tile.run::<MR>(),
                        }
                    }
                }
                ir += MR;
            }
            pc += kc;
        }
        jc += nc;
    }
    Ok(())
}

/// Packs rows `pc..pc + kc` and columns `jc..jc + nc` of `y` into `pack`: panel after panel of
/// `kc` rows × 16 columns, the columns beyond `nc` zero. At most `KC.min(k)` × `NC.min(n)`
/// rounded up to 16 elements: within the capacity `sgemm` reserved fallibly, so these
/// `extend`s never allocate (and never abort).
fn pack_panels(pack: &mut Vec<f32>, y: Strided<'_>, pc: usize, kc: usize, jc: usize, nc: usize) {
    pack.clear();
    for q in 0..nc.div_ceil(NR) {
        let cols = NR.min(nc - q * NR);
        for p in pc..pc + kc {
            let start = p * y.row_stride + (jc + q * NR) * y.col_stride;
            if y.col_stride == 1 {
                pack.extend_from_slice(&y.elements[start..start + cols]);
            } else {
                pack.extend((0..cols).map(|j| y.elements[start + j * y.col_stride]));
            }
            pack.extend(std::iter::repeat_n(0.0, NR - cols));
        }
    }
}

/// One register tile's work: rows `row..row + M` of the result, columns `col..col + cols`,
/// over the `kc` columns of `x` from `depth`.
struct Tile<'a> {
    x: Strided<'a>,
    row: usize,
    depth: usize,
    kc: usize,
    /// `kc` rows of 16 packed elements of `y`.
    panel: &'a [f32],
    c: *mut f32,
    ldc: usize,
    col: usize,
    /// Columns of the tile inside the result (at most 16).
    cols: usize,
    /// Whether this is the first `KC` block: the tile is written, not added to.
    first: bool,
}

impl Tile<'_> {
    /// # Safety
    /// AVX2 and FMA are available; rows `row..row + M` and columns `depth..depth + kc` of `x` are
    /// in `x.elements`; the result's rows `row..row + M`, columns `col..col + cols` are inside
    /// the `ldc`-wide buffer at `c`, writable, and (unless `first`) initialised.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run<const M: usize>(&self) {
        let mut lo = [_mm256_setzero_ps(); M];
        let mut hi = [_mm256_setzero_ps(); M];
        let xs = self.x.elements.as_ptr();
        let (xr, xc) = (self.x.row_stride, self.x.col_stride);
        let first_elem: [usize; M] = std::array::from_fn(|i| (self.row + i) * xr + self.depth * xc);
        let panel = self.panel.as_ptr();
        for p in 0..self.kc {
            // SAFETY: `panel` holds `kc` rows of 16: row `p < kc` is in it.
            let (b0, b1) = unsafe {
                (
                    _mm256_loadu_ps(panel.add(p * NR)),
                    _mm256_loadu_ps(panel.add(p * NR + 8)),
                )
            };
            for i in 0..M {
                // SAFETY: element `(row + i, depth + p)` of `x`, inside `x.elements` (the
                // function's contract).
                let a = unsafe { _mm256_broadcast_ss(&*xs.add(first_elem[i] + p * xc)) };
                lo[i] = _mm256_fmadd_ps(a, b0, lo[i]);
                hi[i] = _mm256_fmadd_ps(a, b1, hi[i]);
            }
        }
        for i in 0..M {
            // SAFETY: row `row + i` of the result from column `col`: `cols` elements inside the
            // buffer (the contract); a full tile writes 16, a partial one only `cols`.
            unsafe {
                let out = self.c.add((self.row + i) * self.ldc + self.col);
                if self.cols == NR {
                    if self.first {
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
                    for (j, &lane) in lanes.iter().enumerate().take(self.cols) {
                        let slot = out.add(j);
                        *slot = if self.first { lane } else { *slot + lane };
                    }
                }
            }
        }
    }
}
