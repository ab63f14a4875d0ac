//! `matmul`'s register-tiled `f32` kernels on x86-64: one driver (blocking, packing, edges) and
//! a microkernel per instruction set, which keeps an `MR × NR` tile of the result in registers:
//! 6 × 16 with AVX2+FMA (`sgemm_avx2.rs`, 12 accumulators), 14 × 32 with AVX-512F
//! (`sgemm_avx512.rs`, 28 accumulators of the 32 registers).
//!
//! Blocking: for each block of `NC` columns and `KC` rows of `y`, the block is packed into
//! panels `NR` columns wide (zero-padded at the right edge); then, block of rows by block, each
//! panel meets every strip of `MR` rows of `x` in the block. `x` is read one of two ways
//! ([`ReadX`]). In place, each element is broadcast from memory and a block is one strip, which
//! stays in L1 while it meets every panel of a 256-column block of `y` (in L2): no copy at all,
//! for products that fit the caches with contiguous rows. Packed, a block of `MC` rows by `KC`
//! steps is copied into strips once, stays in L2, and meets every panel of up to
//! [`NC_PACKED`] columns, each panel staying in L1 while the strips pass: for large products and
//! any layout of `x` (rows of a large `x` read in place lie 4 KB apart at 1024 columns, so a tall
//! tile's rows fight over one L1 set, and a transposed `x` has one element per cache line).
//!
//! Every element of the result is one chain of FMAs per `KC` block, in order along `k`, the
//! blocks added in order. Neither the tile's size, the rows a thread's part holds, nor how `x`
//! is read changes that order: both microkernels, read either way, give the same bits, at every
//! thread count.

// The microkernels' contract (an unsafe trait) and their calls, each justified where it stands.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;

/// Rows of `y` (and columns of `x`) per block: fixed for every microkernel, as the bits depend
/// on it.
const KC: usize = 256;
/// Columns of `y` per block when `x` is read in place (a multiple of every microkernel's `NR`):
/// the block (256 KB) stays in L2 while the strips of `x` pass.
const NC_IN_PLACE: usize = 256;
/// Columns of `y` per block when `x` is packed: each packed block of `x` meets all of them, so
/// the copy is paid once per 4096 columns (the panels come from L3; each stays in L1 while the
/// block's strips pass).
const NC_PACKED: usize = 4096;
/// Rows of `x` per packed block, before rounding up to the tile's `MR`: the block (64 × `KC`,
/// 64 KB) stays in L2 while the panels pass.
const MC: usize = 64;

/// How the driver reads `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadX {
    /// Each element broadcast from where it is: no copy; for row-major `x` in products that fit
    /// the caches.
    InPlace,
    /// Copied, `MC` rows by `KC` steps at a time, into strips the tile reads in order; any
    /// layout.
    Packed,
}

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
    /// The CPU lacks the microkernel's features.
    Cpu,
    /// The buffers for the packed operands (`bytes`) could not be allocated.
    OutOfMemory { bytes: usize },
}

/// One call of a microkernel: rows `0..M` of a tile of the result, columns `0..cols`, over `kc`
/// steps along `k`.
pub(crate) struct Tile {
    /// Element `(i, p)` of `x`'s strip (row `i` of the tile, step `p`) is at
    /// `a + i·a_row + p·a_step`.
    pub(crate) a: *const f32,
    pub(crate) a_row: usize,
    pub(crate) a_step: usize,
    pub(crate) kc: usize,
    /// `kc` rows of `NR` packed elements of `y`.
    pub(crate) panel: *const f32,
    /// The tile's first element of the result; row `i` starts at `c + i·ldc`.
    pub(crate) c: *mut f32,
    pub(crate) ldc: usize,
    /// Columns of the tile inside the result (1 to `NR`).
    pub(crate) cols: usize,
    /// Whether this is the first `KC` block: the tile is written, not added to.
    pub(crate) first: bool,
}

/// A register-tiled microkernel.
///
/// # Safety
/// `detected()` is true only on a CPU with every feature `run` needs; `run` reads and writes
/// only what `Tile` names for its `rows` and `cols`, and when `first` is set writes every element
/// of the tile before anything reads it.
pub(crate) unsafe trait Microkernel {
    /// Rows of the register tile.
    const MR: usize;
    /// Columns of the register tile and of a packed panel (dividing `NC_IN_PLACE` and
    /// `NC_PACKED`).
    const NR: usize;
    /// Whether the running CPU has the features `run` needs.
    fn detected() -> bool;
    /// Computes the tile's `rows` (1 to `MR`) rows.
    ///
    /// # Safety
    /// `detected()` is true; every element `Tile` names for `rows` rows, `kc` steps and `cols`
    /// columns is inside its allocation (the panel's `kc × NR` elements too), the result's
    /// elements are writable and not otherwise borrowed, and unless `first` they are
    /// initialised.
    unsafe fn run(tile: &Tile, rows: usize);
}

/// `out[rows × n]` (row-major, every element written) = `x[rows × k]` · `y[k × n]`, on the
/// microkernel `K`, reading `x` as `read_x` says.
pub(crate) fn sgemm<K: Microkernel>(
    rows: usize,
    k: usize,
    n: usize,
    x: Strided<'_>,
    y: Strided<'_>,
    out: &mut [MaybeUninit<f32>],
    read_x: ReadX,
) -> Result<(), Refused> {
    if !x.covers(rows, k) || !y.covers(k, n) || rows.checked_mul(n) != Some(out.len()) {
        return Err(Refused::Layout);
    }
    if !K::detected() {
        return Err(Refused::Cpu);
    }
    if out.is_empty() {
        return Ok(());
    }
    if k == 0 {
        out.fill(MaybeUninit::new(0.0));
        return Ok(());
    }
    let (nc_max, mc_max) = match read_x {
        // In place, a block is one strip, which stays in L1 while it meets every panel.
        ReadX::InPlace => (NC_IN_PLACE, K::MR),
        ReadX::Packed => (NC_PACKED, MC.div_ceil(K::MR) * K::MR),
    };
    // The largest blocks: `kc` rows of `y` by `nc` columns rounded up to `NR`, and (packed) `kc`
    // steps of `mc` rows of `x` rounded up to `MR`.
    let panels_len = KC.min(k) * nc_max.min(n).div_ceil(K::NR) * K::NR;
    let strips_len = match read_x {
        ReadX::InPlace => 0,
        ReadX::Packed => KC.min(k) * mc_max.min(rows).div_ceil(K::MR) * K::MR,
    };
    let buffer = |len: usize| {
        let mut buffer: Vec<f32> = Vec::new();
        buffer
            .try_reserve_exact(len)
            .map_err(|_| Refused::OutOfMemory {
                bytes: (panels_len + strips_len) * size_of::<f32>(),
            })?;
        Ok(buffer)
    };
    // The panels start on a 64-byte boundary, `panels_at` elements into their buffer, so that no
    // load of a panel's row (one or two cache lines) straddles two lines.
    let (mut panels, mut strips) = (buffer(panels_len + LINE)?, buffer(strips_len)?);
    let panels_at = match panels.as_ptr().align_offset(LINE * size_of::<f32>()) {
        at if at < LINE => at,
        _ => 0, // `align_offset` may decline to say; unaligned loads are only slower
    };
    let c = out.as_mut_ptr().cast::<f32>();
    let mut jc = 0;
    while jc < n {
        let nc = nc_max.min(n - jc);
        let mut pc = 0;
        while pc < k {
            let kc = KC.min(k - pc);
            pack_panels::<K>(&mut panels, y, pc, kc, jc, nc, panels_at);
            let mut ic = 0;
            while ic < rows {
                let mc = mc_max.min(rows - ic);
                if read_x == ReadX::Packed {
                    pack_strips::<K>(&mut strips, x, ic, mc, pc, kc);
                }
                for (q, panel) in panels[panels_at..].chunks_exact(kc * K::NR).enumerate() {
                    let col = jc + q * K::NR;
                    for s in 0..mc.div_ceil(K::MR) {
                        let ir = ic + s * K::MR;
                        // Element `(i, p)` of the strip (`x`'s `(ir + i, pc + p)`) is at
                        // `a + i·a_row + p·a_step`.
                        let (a, a_row, a_step) = match read_x {
                            ReadX::InPlace => (
                                x.elements[ir * x.row_stride + pc * x.col_stride..].as_ptr(),
                                x.row_stride,
                                x.col_stride,
                            ),
                            ReadX::Packed => (
                                strips[s * kc * K::MR..(s + 1) * kc * K::MR].as_ptr(),
                                1,
                                K::MR,
                            ),
                        };
                        let tile = Tile {
                            a,
                            a_row,
                            a_step,
                            kc,
                            panel: panel.as_ptr(),
                            c: c.wrapping_add(ir * n + col),
                            ldc: n,
                            cols: K::NR.min(nc - q * K::NR),
                            first: pc == 0,
                        };
                        // SAFETY: `K::detected()` held above. The tile is inside the product:
                        // `ir` plus its rows (`MR.min(rows - ir)`) is at most `rows`,
                        // `col + cols <= n`, `pc + kc <= k`.
                        // In place, element `(i, p)` of the strip is `x`'s `(ir + i, pc + p)`,
                        // after `a` and inside `x.elements` by `x.covers(rows, k)` (checked
                        // above); packed, it is element `i + p·MR` of the strip's slice of
                        // `kc × MR` (`i < MR`, `p < kc`). The panel has `kc × NR` elements
                        // (`chunks_exact`). The result's rows `ir..ir + mr`, columns
                        // `col..col + cols` are inside `out` (`rows × n` elements, checked),
                        // which this function borrows exclusively; the ones read back
                        // (`pc > 0`) were written by this tile's first block (`pc == 0`), which
                        // writes all of them (`Microkernel`'s contract).
                        unsafe { K::run(&tile, K::MR.min(rows - ir)) };
                    }
                }
                ic += mc;
            }
            pc += kc;
        }
        jc += nc;
    }
    Ok(())
}

/// Packs rows `ic..ic + mc` and columns `pc..pc + kc` of `x` into `pack`: strip after strip of
/// `K::MR` rows, each `kc` steps of `K::MR` elements (the rows beyond `mc` zero). At most
/// `KC.min(k)` × `mc` rounded up to `K::MR` elements: within the capacity `sgemm` reserved
/// fallibly, so these `extend`s never allocate (and never abort). Generic over `K` so that the
/// copies have constant lengths (a few vector moves, not a `memcpy` call each).
fn pack_strips<K: Microkernel>(
    pack: &mut Vec<f32>,
    x: Strided<'_>,
    ic: usize,
    mc: usize,
    pc: usize,
    kc: usize,
) {
    const { assert!(K::MR <= MAX_MR, "a tile with more rows than `MAX_MR`") };
    pack.clear();
    for first in (ic..ic + mc).step_by(K::MR) {
        let rows = K::MR.min(ic + mc - first);
        let mut step = [0.0f32; MAX_MR];
        if x.col_stride == 1 {
            // Row-major: each row's `kc` elements are one slice; a step takes one of each.
            let mut sources: [&[f32]; MAX_MR] = [&[]; MAX_MR];
            for (i, source) in sources.iter_mut().enumerate().take(rows) {
                let start = (first + i) * x.row_stride + pc;
                *source = &x.elements[start..start + kc];
            }
            for p in 0..kc {
                for (value, source) in step.iter_mut().zip(&sources[..rows]) {
                    *value = source[p];
                }
                pack.extend_from_slice(&step[..K::MR]);
            }
        } else {
            for p in pc..pc + kc {
                for (i, value) in step.iter_mut().enumerate().take(rows) {
                    *value = x.elements[(first + i) * x.row_stride + p * x.col_stride];
                }
                pack.extend_from_slice(&step[..K::MR]);
            }
        }
    }
}

/// `f32`s in a cache line.
const LINE: usize = 16;

/// The most rows a microkernel's tile has (`pack_strips`' scratch).
const MAX_MR: usize = 16;

/// Packs rows `pc..pc + kc` and columns `jc..jc + nc` of `y` into `pack`, after `at` zeros:
/// panel after panel of `kc` rows × `K::NR` columns, the columns beyond `nc` zero. At most
/// `at` (< `LINE`) + `KC.min(k)` × `nc` rounded up to `K::NR` elements: within the capacity
/// `sgemm` reserved fallibly, so these `extend`s never allocate (and never abort). Generic over
/// `K` so that a full panel's rows are copies of constant length.
fn pack_panels<K: Microkernel>(
    pack: &mut Vec<f32>,
    y: Strided<'_>,
    pc: usize,
    kc: usize,
    jc: usize,
    nc: usize,
    at: usize,
) {
    pack.clear();
    pack.extend(std::iter::repeat_n(0.0, at));
    for q in 0..nc.div_ceil(K::NR) {
        let cols = K::NR.min(nc - q * K::NR);
        for p in pc..pc + kc {
            let start = p * y.row_stride + (jc + q * K::NR) * y.col_stride;
            if y.col_stride == 1 && cols == K::NR {
                // A full row of a panel: a copy of constant length.
                pack.extend_from_slice(&y.elements[start..start + K::NR]);
            } else if y.col_stride == 1 {
                pack.extend_from_slice(&y.elements[start..start + cols]);
            } else {
                pack.extend((0..cols).map(|j| y.elements[start + j * y.col_stride]));
            }
            pack.extend(std::iter::repeat_n(0.0, K::NR - cols));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{sgemm_avx2::Avx2, sgemm_avx512::Avx512};
    use super::*;

    /// `x` (`m × k`) stored row-major, column-major, or row-major with padded rows.
    #[derive(Clone, Copy, Debug)]
    enum Layout {
        RowMajor,
        Transposed,
        PaddedRows,
    }

    fn operand(rows: usize, cols: usize, layout: Layout, seed: usize) -> (Vec<f32>, usize, usize) {
        let value = |i: usize, j: usize| {
            let h = (i * 7919 + j * 104_729 + seed * 31).wrapping_mul(2_654_435_761) % 2001;
            h as f32 / 1000.0 - 1.0
        };
        let (row_stride, col_stride, len) = match layout {
            Layout::RowMajor => (cols, 1, rows * cols),
            Layout::Transposed => (1, rows, rows * cols),
            Layout::PaddedRows => (cols + 3, 1, rows * (cols + 3)),
        };
        let mut elements = vec![f32::NAN; len]; // padding that leaks into a result shows
        for i in 0..rows {
            for j in 0..cols {
                elements[i * row_stride + j * col_stride] = value(i, j);
            }
        }
        (elements, row_stride, col_stride)
    }

    fn product<K: Microkernel>(
        (m, k, n): (usize, usize, usize),
        x: Strided<'_>,
        y: Strided<'_>,
        read_x: ReadX,
    ) -> Vec<u32> {
        let mut out = vec![MaybeUninit::new(f32::NAN); m * n];
        sgemm::<K>(m, k, n, x, y, &mut out, read_x).expect("the tiles serve it");
        out.iter().map(|v| written_bits(*v)).collect()
    }

    /// The bits of an element of a result buffer that started as NaN (an element `sgemm` left
    /// unwritten reads as NaN, which no finite product is).
    fn written_bits(v: MaybeUninit<f32>) -> u32 {
        // SAFETY: every element was initialised (to NaN) before `sgemm` ran, and `sgemm` writes
        // only initialised values.
        unsafe { v.assume_init() }.to_bits()
    }

    /// Reading `x` packed gives the bits of reading it in place, for both tiles, at the edges
    /// of every block (`MC` rows, `KC` steps, `NC_PACKED` columns, partial tiles), for every
    /// layout of `x`; and both tiles give the same bits; and the values are the product's
    /// (within the rounding of `k` additions).
    #[test]
    fn packed_x_gives_the_bits_of_x_in_place_on_every_tile() {
        let shapes = [
            (1, 1, 1),
            (7, 3, 5),
            (15, 40, 1),
            (29, 260, 81),
            (71, 513, 33),
            (150, 37, 129),
            (2, 3, NC_PACKED + 37),
        ];
        for (m, k, n) in shapes {
            for layout in [Layout::RowMajor, Layout::Transposed, Layout::PaddedRows] {
                let (xe, xr, xc) = operand(m, k, layout, 1);
                let (ye, yr, yc) = operand(k, n, Layout::RowMajor, 2);
                let x = Strided {
                    elements: &xe,
                    row_stride: xr,
                    col_stride: xc,
                };
                let y = Strided {
                    elements: &ye,
                    row_stride: yr,
                    col_stride: yc,
                };
                let case = format!("{m}x{k}x{n}, x {layout:?}");
                let mut results: Vec<(String, Vec<u32>)> = Vec::new();
                for read_x in [ReadX::InPlace, ReadX::Packed] {
                    if Avx2::detected() {
                        let bits = product::<Avx2>((m, k, n), x, y, read_x);
                        results.push((format!("avx2, x {read_x:?}"), bits));
                    }
                    if Avx512::detected() {
                        let bits = product::<Avx512>((m, k, n), x, y, read_x);
                        results.push((format!("avx512, x {read_x:?}"), bits));
                    }
                }
                let Some((first, bits)) = results.first() else {
                    return; // neither tile runs on this CPU
                };
                for (other, other_bits) in &results[1..] {
                    assert!(bits == other_bits, "{case}: {first} and {other} differ");
                }
                for i in 0..m {
                    for j in 0..n {
                        let (mut exact, mut scale) = (0.0f64, 0.0f64);
                        for p in 0..k {
                            let term =
                                f64::from(xe[i * xr + p * xc]) * f64::from(ye[p * yr + j * yc]);
                            exact += term;
                            scale += term.abs();
                        }
                        let got = f64::from(f32::from_bits(bits[i * n + j]));
                        let bound = (k as f64 + 1.0)
                            * f64::from(f32::EPSILON)
                            * scale.max(f64::MIN_POSITIVE);
                        assert!(
                            (got - exact).abs() <= bound,
                            "{case}: ({i}, {j}) is {got}, the product {exact} (bound {bound})"
                        );
                    }
                }
            }
        }
    }
}
