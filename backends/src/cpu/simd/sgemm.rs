//! `matmul`'s register-tiled `f32` kernels on x86-64: one driver (blocking, packing, edges) and
//! a microkernel per instruction set, which keeps an `MR × NR` tile of the result in registers:
//! 6 × 16 with AVX2+FMA (`sgemm_avx2.rs`, 12 accumulators), 14 × 32 with AVX-512F
//! (`sgemm_avx512.rs`, 28 accumulators of the 32 registers).
//!
//! Blocking: the rows of the result are cut into bands, one a thread, and each band runs the
//! whole product in one parallel section: for each block of `KC` rows and up to `NC` columns of
//! `y`, the band packs the block into panels `NR` columns wide (zero-padded at the right edge)
//! for itself, then meets it block of rows by block, each panel meeting every strip of `MR` rows
//! of `x` in the block. Packing a block once for all threads saved copies but cost more: two
//! waits for every thread per block, and each core then read the half of the panels the other
//! had written, out of the other's cache. `x` is read one of two ways
//! ([`ReadX`]). In place, each element is broadcast from memory and a block is one strip, which
//! stays in L1 while it meets every panel of a 256-column sub-block of `y` (in L2): no copy at
//! all, for products that fit the caches with contiguous rows. Packed, a block of `MC` rows by
//! `KC` steps is copied into strips once, stays in L2, and meets every panel of the block, each
//! panel staying in L1 while the strips pass: for large products and any layout of `x` (rows of
//! a large `x` read in place lie 4 KB apart at 1024 columns, so a tall tile's rows fight over
//! one L1 set, and a transposed `x` has one element per cache line). Both copies read their
//! source in order (a row of `y`, a cache line of each row of `x`).
//!
//! Every element of the result is one chain of FMAs per `KC` block, in order along `k`, the
//! blocks added in order. Neither the tile's size, the rows a thread's part holds, nor how `x`
//! is read changes that order: both microkernels, read either way, give the same bits, at every
//! thread count.

// The microkernels' contract (an unsafe trait) and their calls, each justified where it stands.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cpu::threads::{self, Grain};

/// Rows of `y` (and columns of `x`) per block: fixed for every microkernel, as the bits depend
/// on it.
const KC: usize = 256;
/// Columns of `y` a strip of `x` read in place meets before the next strip (a multiple of every
/// microkernel's `NR`): the sub-block (256 KB) stays in L2 while the strips pass.
const NC_IN_PLACE: usize = 256;
/// Columns of `y` per block: `KC` rows by this many columns are packed by a band and met by it.
/// Packed, each block of `x` meets all of them, so its copy is paid once per 4096 columns (the
/// panels come from L2 or L3; each stays in L1 while the block's strips pass); in place, a strip
/// meets them `NC_IN_PLACE` columns at a time.
const NC: usize = 4096;
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
    pub(crate) fn covers(&self, rows: usize, cols: usize) -> bool {
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
    /// `NC`).
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

/// `out[m × n]` (row-major, every element written on `Ok`) = `x[m × k]` · `y[k × n]`, on the
/// microkernel `K`, reading `x` as `read_x` says; the rows cut into bands by `bands` (one thread
/// each, `threads::for_each_part`; a multiple of `K::MR` rows).
///
/// Each band packs every block of `y` for itself ([`band_times_y`]), so the threads meet once
/// per product, at its end.
pub(crate) fn sgemm<K: Microkernel>(
    (m, k, n): (usize, usize, usize),
    x: Strided<'_>,
    y: Strided<'_>,
    out: &mut [MaybeUninit<f32>],
    read_x: ReadX,
    bands: Grain,
) -> Result<(), Refused> {
    if !x.covers(m, k) || !y.covers(k, n) || m.checked_mul(n) != Some(out.len()) {
        return Err(Refused::Layout);
    }
    if !K::detected() {
        return Err(Refused::Cpu);
    }
    if out.is_empty() {
        return Ok(());
    }
    // A band's buffer it could not allocate (0: none).
    let refused_bytes = AtomicUsize::new(0);
    let written = threads::for_each_part(out, bands, |start, band| {
        // SAFETY: `K::detected()` held above.
        match unsafe { band_times_y::<K>(x, y, (k, n), start, band, read_x) } {
            Ok(()) => true,
            Err(refused) => {
                if let Refused::OutOfMemory { bytes } = refused {
                    refused_bytes.store(bytes, Ordering::Relaxed);
                }
                false
            }
        }
    });
    match (written, refused_bytes.load(Ordering::Relaxed)) {
        (true, _) => Ok(()),
        (false, 0) => Err(Refused::Layout),
        (false, bytes) => Err(Refused::OutOfMemory { bytes }),
    }
}

/// A block of `y`: rows `pc..pc + kc`, columns `jc..jc + nc`.
#[derive(Clone, Copy)]
struct Block {
    pc: usize,
    kc: usize,
    jc: usize,
    nc: usize,
}

/// Writes the band of the `n`-column result that starts at element `start` (whole rows): `x`'s
/// rows times `y` (`k` rows), block of `y` after block (`KC` rows by `NC` columns), each packed
/// by this band for itself, in order along `k` within a block's columns (zeros where `k` is 0).
/// `Ok` only after every element of `band` is written.
///
/// # Safety
/// `K::detected()` is true.
unsafe fn band_times_y<K: Microkernel>(
    x: Strided<'_>,
    y: Strided<'_>,
    (k, n): (usize, usize),
    start: usize,
    band: &mut [MaybeUninit<f32>],
    read_x: ReadX,
) -> Result<(), Refused> {
    if n == 0 || !start.is_multiple_of(n) || !band.len().is_multiple_of(n) {
        return Err(Refused::Layout);
    }
    if k == 0 {
        band.fill(MaybeUninit::new(0.0));
        return Ok(());
    }
    let (first_row, rows) = (start / n, band.len() / n);
    with_scratch(|scratch| {
        for jc in (0..n).step_by(NC) {
            let nc = NC.min(n - jc);
            for pc in (0..k).step_by(KC) {
                let block = Block {
                    pc,
                    kc: KC.min(k - pc),
                    jc,
                    nc,
                };
                let panels = pack_block::<K>(&mut scratch.panels, y, block)?;
                // SAFETY: `K::detected()` (this function's contract). `band` is whole rows of
                // the result (checked), and unless `pc == 0` every element of its columns `jc..jc
                // + nc` is written: the block `(jc, pc - KC)` ran just before, over this band, and
                // `band_times_block` returns `Ok` only after writing all of them.
                unsafe {
                    band_times_block::<K>(
                        x,
                        (first_row, rows),
                        n,
                        block,
                        panels,
                        band,
                        read_x,
                        &mut scratch.strips,
                    )?;
                }
            }
        }
        Ok(())
    })
}

/// Packs `block` of `y` into `buffer` (its earlier contents discarded, its allocation reused)
/// for the microkernel `K`; returns the panels: panel `q` (columns `jc + q·NR..`) is `kc` rows of
/// `NR` elements at `q·kc·NR`, zero past column `jc + nc`. They start on a 64-byte line, so that
/// no load of a panel's row (one or two cache lines) straddles two lines.
fn pack_block<'b, K: Microkernel>(
    buffer: &'b mut Vec<f32>,
    y: Strided<'_>,
    block: Block,
) -> Result<&'b [f32], Refused> {
    let Block { kc, nc, .. } = block;
    let len = panels_len::<K>(kc, nc);
    buffer.clear();
    buffer
        .try_reserve_exact(len + LINE)
        .map_err(|_| Refused::OutOfMemory {
            bytes: (len + LINE) * size_of::<f32>(),
        })?;
    let at = match buffer.as_ptr().align_offset(LINE * size_of::<f32>()) {
        at if at < LINE => at,
        _ => 0, // `align_offset` may decline to say; unaligned loads are only slower
    };
    let spare = &mut buffer.spare_capacity_mut()[..at + len];
    let (before, panels) = spare.split_at_mut(at);
    before.fill(MaybeUninit::new(0.0));
    if !pack_panels::<K>(y, block, panels) {
        return Err(Refused::Layout);
    }
    // SAFETY: the first `at` elements were written above, the next `len` by `pack_panels`, which
    // returned true, as it does only after writing every element of `panels`. The capacity is
    // at least `len + LINE >= at + len`.
    unsafe { buffer.set_len(at + len) };
    Ok(&buffer[at..])
}

/// A thread's buffers for a band: the panels of a block of `y` it packs for itself, and the
/// strips of `x` it packs. Kept between blocks and calls (a product allocated and freed them
/// once per block of `KC` rows, and `malloc` returned each freed 64–70 KB to the system, so
/// the next one faulted its pages in again: 64 × 4096 × 64 spent 8 % there), each up to
/// [`SCRATCH_KEPT`] elements; freed when the thread ends.
#[derive(Default)]
struct Scratch {
    panels: Vec<f32>,
    strips: Vec<f32>,
}

/// The largest buffer a thread keeps between products (1 MB): the panels of a block of `KC` rows
/// by 1024 columns of `y`, beside strips of `x` of 70 KB; a wider block's are allocated anew by
/// each product.
const SCRATCH_KEPT: usize = KC * 1024 + LINE;

thread_local! {
    static SCRATCH: Cell<Scratch> = const {
        Cell::new(Scratch { panels: Vec::new(), strips: Vec::new() })
    };
}

/// `f` with this thread's [`Scratch`] (taken out and put back, so a nested call, or one during
/// the thread's teardown, gets fresh buffers); buffers that grew past [`SCRATCH_KEPT`] are freed
/// afterwards.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut scratch = SCRATCH.try_with(Cell::take).unwrap_or_default();
    let result = f(&mut scratch);
    for buffer in [&mut scratch.panels, &mut scratch.strips] {
        if buffer.capacity() > SCRATCH_KEPT {
            *buffer = Vec::new();
        }
    }
    // Where the thread-local is gone (teardown), the buffers are freed here instead.
    let _ = SCRATCH.try_with(|kept| kept.set(scratch));
    result
}

/// The elements of the panels of `kc` rows by `nc` columns of `y`.
fn panels_len<K: Microkernel>(kc: usize, nc: usize) -> usize {
    kc * nc.div_ceil(K::NR) * K::NR
}

/// Adds `x`'s rows `first_row..first_row + rows` times `block` of `y` (packed: `panels`) to
/// `band` (those rows of the `n`-column result), or writes it there when the block is the first
/// along `k` (`pc == 0`). `Ok` only after every element of the band's columns `jc..jc + nc` is
/// written.
///
/// # Safety
/// `K::detected()` is true, and unless `block.pc == 0`, every element of `band` in columns
/// `jc..jc + nc` is initialised.
#[allow(clippy::too_many_arguments)] // operands, block, band and its buffer, named by the caller
unsafe fn band_times_block<K: Microkernel>(
    x: Strided<'_>,
    (first_row, rows): (usize, usize),
    n: usize,
    block: Block,
    panels: &[f32],
    band: &mut [MaybeUninit<f32>],
    read_x: ReadX,
    strips: &mut Vec<f32>,
) -> Result<(), Refused> {
    let Block { pc, kc, jc, nc } = block;
    let inside = first_row
        .checked_add(rows)
        .is_some_and(|end| x.covers(end, pc + kc))
        && rows.checked_mul(n) == Some(band.len())
        && jc + nc <= n
        && panels.len() >= panels_len::<K>(kc, nc);
    if !inside {
        return Err(Refused::Layout);
    }
    let (nc_sub, mc_max) = match read_x {
        // In place, a block is one strip, which stays in L1 while it meets every panel of
        // `NC_IN_PLACE` columns.
        ReadX::InPlace => (NC_IN_PLACE, K::MR),
        ReadX::Packed => (nc, MC.div_ceil(K::MR) * K::MR),
    };
    if read_x == ReadX::Packed {
        // Grown when short (zeros: initialised, then overwritten by `pack_strips` before the
        // tiles read them); what a previous block left is overwritten likewise.
        let len = kc * mc_max.min(rows).div_ceil(K::MR) * K::MR;
        if strips.len() < len {
            strips
                .try_reserve_exact(len - strips.len())
                .map_err(|_| Refused::OutOfMemory {
                    bytes: len * size_of::<f32>(),
                })?;
            // No allocation: reserved above.
            strips.resize(len, 0.0);
        }
    }
    let c = band.as_mut_ptr().cast::<f32>();
    // `while`, not `step_by`: a small product's call is mostly this loop's overhead.
    let mut sub = 0;
    while sub < nc {
        let sub_panels = sub / K::NR..(sub + nc_sub.min(nc - sub)).div_ceil(K::NR);
        sub += nc_sub;
        let mut ic = 0;
        while ic < rows {
            let mc = mc_max.min(rows - ic);
            if read_x == ReadX::Packed {
                pack_strips::<K>(strips, x, first_row + ic, mc, pc, kc);
            }
            for q in sub_panels.clone() {
                let panel = &panels[q * kc * K::NR..(q + 1) * kc * K::NR];
                let col = jc + q * K::NR;
                for s in 0..mc.div_ceil(K::MR) {
                    let ir = ic + s * K::MR;
                    // Element `(i, p)` of the strip (`x`'s `(first_row + ir + i, pc + p)`) is
                    // at `a + i·a_row + p·a_step`.
                    let (a, a_row, a_step) = match read_x {
                        ReadX::InPlace => (
                            x.elements[(first_row + ir) * x.row_stride + pc * x.col_stride..]
                                .as_ptr(),
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
                        cols: K::NR.min(jc + nc - col),
                        first: pc == 0,
                    };
                    // SAFETY: `K::detected()` held in `sgemm`. The tile is inside the product:
                    // `ir` plus its rows (`MR.min(rows - ir)`) is at most `rows`, `col + cols`
                    // at most `jc + nc <= n`, `pc + kc` at most `k`. In place, element `(i, p)`
                    // of the strip is `x`'s `(first_row + ir + i, pc + p)`, after `a` and inside
                    // `x.elements` (`x.covers(first_row + rows, pc + kc)`, checked above);
                    // packed, it is element `i + p·MR` of the strip's slice of `kc × MR`
                    // (`i < MR`, `p < kc`). The panel has `kc × NR` elements (sliced). The
                    // band's rows `ir..`, columns `col..col + cols` are inside `band` (`rows ×
                    // n` elements, checked), which this function borrows exclusively; the ones
                    // read back (`pc > 0`) are initialised (this function's contract).
                    unsafe { K::run(&tile, K::MR.min(rows - ir)) };
                }
            }
            ic += mc;
        }
    }
    Ok(())
}

/// Packs rows `ic..ic + mc` and columns `pc..pc + kc` of `x` into the start of `pack`: strip
/// after strip of `K::MR` rows, each `kc` steps of `K::MR` elements (the rows beyond `mc` zero).
/// `pack` holds `mc` rounded up to `K::MR`, times `kc` elements or more. The source is read in
/// order: a row-major `x` a cache line of each row at a time (the writes stay inside a few
/// lines of the strip), a transposed one a step's `K::MR` adjacent elements at a time.
fn pack_strips<K: Microkernel>(
    pack: &mut [f32],
    x: Strided<'_>,
    ic: usize,
    mc: usize,
    pc: usize,
    kc: usize,
) {
    let strips = pack[..mc.div_ceil(K::MR) * K::MR * kc].chunks_exact_mut(K::MR * kc);
    for (first, strip) in (ic..ic + mc).step_by(K::MR).zip(strips) {
        let rows = K::MR.min(ic + mc - first);
        if x.col_stride == 1 {
            for (chunk, steps) in strip.chunks_mut(LINE * K::MR).enumerate() {
                let p = pc + chunk * LINE;
                let len = steps.len() / K::MR;
                for i in 0..K::MR {
                    let steps = steps.chunks_exact_mut(K::MR);
                    if i < rows {
                        let start = (first + i) * x.row_stride + p;
                        for (step, &value) in steps.zip(&x.elements[start..start + len]) {
                            step[i] = value;
                        }
                    } else {
                        steps.for_each(|step| step[i] = 0.0);
                    }
                }
            }
        } else {
            for (p, step) in (pc..pc + kc).zip(strip.chunks_exact_mut(K::MR)) {
                let start = first * x.row_stride + p * x.col_stride;
                if x.row_stride == 1 && rows == K::MR {
                    step.copy_from_slice(&x.elements[start..start + K::MR]);
                } else {
                    for (i, value) in step.iter_mut().enumerate() {
                        *value = if i < rows {
                            x.elements[start + i * x.row_stride]
                        } else {
                            0.0
                        };
                    }
                }
            }
        }
    }
}

/// `f32`s in a cache line.
const LINE: usize = 16;

/// Packs the block of `y` (rows `pc..pc + kc`, columns `jc..jc + nc`) into `panels`, whole
/// panels of `kc` rows × `K::NR` columns, the columns beyond `jc + nc` zero; each row of `y` is
/// read in order, its columns going to one panel after another. `true` after writing every
/// element of `panels`; `false` (having written nothing) where `panels` is not the block's
/// [`panels_len`] or `y` lacks the block. Generic over `K` so that a full panel's rows are copies
/// of constant length.
fn pack_panels<K: Microkernel>(
    y: Strided<'_>,
    Block { pc, kc, jc, nc }: Block,
    panels: &mut [MaybeUninit<f32>],
) -> bool {
    if panels.len() != panels_len::<K>(kc, nc) || !y.covers(pc + kc, jc + nc) {
        return false;
    }
    let panel_len = kc * K::NR;
    if y.col_stride == 1 && nc.is_multiple_of(K::NR) {
        // Row-major, every panel full: each row's panel rows are one slice of `y`.
        for p in 0..kc {
            let start = (pc + p) * y.row_stride + jc;
            let row = &y.elements[start..start + nc];
            for (c, source) in row.chunks_exact(K::NR).enumerate() {
                panels[c * panel_len + p * K::NR..][..K::NR].write_copy_of_slice(source);
            }
        }
        return true;
    }
    for (p, row) in (pc..pc + kc).enumerate() {
        let start = row * y.row_stride + jc * y.col_stride;
        for (q, panel) in panels.chunks_exact_mut(panel_len).enumerate() {
            let cols = K::NR.min(nc - q * K::NR);
            let panel_row = &mut panel[p * K::NR..(p + 1) * K::NR];
            let from = start + q * K::NR * y.col_stride;
            if y.col_stride == 1 && cols == K::NR {
                // A full row of a panel: a copy of constant length.
                panel_row.write_copy_of_slice(&y.elements[from..from + K::NR]);
            } else {
                let (inside, beyond) = panel_row.split_at_mut(cols);
                if y.col_stride == 1 {
                    inside.write_copy_of_slice(&y.elements[from..from + cols]);
                } else {
                    for (j, to) in inside.iter_mut().enumerate() {
                        *to = MaybeUninit::new(y.elements[from + j * y.col_stride]);
                    }
                }
                beyond.fill(MaybeUninit::new(0.0));
            }
        }
    }
    true
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

    /// The product's bits, on one thread or in bands of one tile's rows on every thread (the
    /// shared panels then packed in parts too, where a block is large enough).
    fn product<K: Microkernel>(
        (m, k, n): (usize, usize, usize),
        x: Strided<'_>,
        y: Strided<'_>,
        read_x: ReadX,
        threaded: bool,
    ) -> Vec<u32> {
        let mut out = vec![MaybeUninit::new(f32::NAN); m * n];
        let bands = Grain {
            parallel_from: if threaded { 0 } else { usize::MAX },
            multiple: n * K::MR,
            min_part: 1,
            parts_per_thread: 2,
        };
        sgemm::<K>((m, k, n), x, y, &mut out, read_x, bands).expect("the tiles serve it");
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
    /// of every block (`MC` rows, `KC` steps, `NC` columns, partial tiles), for every
    /// layout of `x`; and both tiles give the same bits; and the values are the product's
    /// (within the rounding of `k` additions).
    #[test]
    fn packed_x_gives_the_bits_of_x_in_place_on_every_tile() {
        let shapes = [
            (1, 1, 1),
            (15, 0, 40),
            (7, 3, 5),
            (15, 40, 1),
            (29, 260, 81),
            (71, 513, 33),
            (150, 37, 129),
            (2, 3, NC + 37),
            (3, 260, 1100),
            (3, 260, 1088),
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
                for (read_x, threaded) in [ReadX::InPlace, ReadX::Packed]
                    .into_iter()
                    .flat_map(|read_x| [(read_x, false), (read_x, true)])
                {
                    let how = format!("x {read_x:?}, threaded {threaded}");
                    if Avx2::detected() {
                        let bits = product::<Avx2>((m, k, n), x, y, read_x, threaded);
                        results.push((format!("avx2, {how}"), bits));
                    }
                    if Avx512::detected() {
                        let bits = product::<Avx512>((m, k, n), x, y, read_x, threaded);
                        results.push((format!("avx512, {how}"), bits));
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
