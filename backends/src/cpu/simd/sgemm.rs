//! `matmul`'s register-tiled `f32` kernels on x86-64: one driver (blocking, packing, edges) and
//! a microkernel per instruction set, which keeps an `MR × NR` tile of the result in registers:
//! 6 × 16 with AVX2+FMA (`sgemm_avx2.rs`, 12 accumulators), 14 × 32 with AVX-512F
//! (`sgemm_avx512.rs`, 28 accumulators of the 32 registers).
//!
//! Blocking: for each block of `NC` columns and `KC` rows of `y`, the block is packed into
//! panels `NR` columns wide (zero-padded at the right edge; a block fits the core's L2), and
//! every strip of `MR` rows of `x` meets every panel; the strip's `MR × KC` elements stay in L1
//! across the panels. `x` is read in place, each element broadcast from memory: the tiles serve
//! products whose `x` has contiguous rows and that fit the caches (`matmul.rs` sends the rest
//! to `matrixmultiply`, which packs `x` too). Packing strips of `x` here, tried with the AVX2
//! tile on a Zen 3 core, ran 1024² products and transposed operands slower than
//! `matrixmultiply` (the copies were as dear as a panel's arithmetic where `n` is small).
//!
//! Every element of the result is one chain of FMAs per `KC` block, in order along `k`, the
//! blocks added in order. Neither the tile's size nor the rows a thread's part holds change
//! that order: both microkernels give the same bits, at every thread count.

#![allow(unsafe_code)] // the microkernels' contract (an unsafe trait) and their calls, justified at each

use std::mem::MaybeUninit;

/// Rows of `y` (and columns of `x`) per block: fixed for every microkernel, as the bits depend
/// on it.
const KC: usize = 256;
/// Columns of `y` per block (a multiple of every microkernel's `NR`).
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
    /// Columns of the register tile and of a packed panel (at most `NC`, dividing it).
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
/// microkernel `K`.
pub(crate) fn sgemm<K: Microkernel>(
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
    // The largest block of packed panels: `kc` rows of `y` by `nc` columns rounded up to `NR`.
    let panels_len = KC.min(k) * NC.min(n).div_ceil(K::NR) * K::NR;
    let mut panels: Vec<f32> = Vec::new();
    panels
        .try_reserve_exact(panels_len)
        .map_err(|_| Refused::OutOfMemory {
            bytes: panels_len * size_of::<f32>(),
        })?;
    let c = out.as_mut_ptr().cast::<f32>();
    let mut jc = 0;
    while jc < n {
        let nc = NC.min(n - jc);
        let panel_count = nc.div_ceil(K::NR);
        let mut pc = 0;
        while pc < k {
            let kc = KC.min(k - pc);
            pack_panels(&mut panels, y, pc, kc, jc, nc, K::NR);
            let mut ir = 0;
            while ir < rows {
                let mr = K::MR.min(rows - ir);
                // The strip's first element, `(ir, pc)`: inside `x` (`covers`, checked above).
                let a = x.elements[ir * x.row_stride + pc * x.col_stride..].as_ptr();
                for q in 0..panel_count {
                    let col = jc + q * K::NR;
                    let tile = Tile {
                        a,
                        a_row: x.row_stride,
                        a_step: x.col_stride,
                        kc,
                        panel: panels[q * kc * K::NR..(q + 1) * kc * K::NR].as_ptr(),
                        c: c.wrapping_add(ir * n + col),
                        ldc: n,
                        cols: K::NR.min(nc - q * K::NR),
                        first: pc == 0,
                    };
                    // SAFETY: `K::detected()` held above. The tile is inside the product:
                    // `ir + mr <= rows`, `col + cols <= n`, `pc + kc <= k`. Element `(i, p)` of
                    // the strip is `x`'s `(ir + i, pc + p)`, after `a` and inside `x.elements`
                    // by `x.covers(rows, k)` (checked above). The panel slice has `kc × NR`
                    // elements. The result's rows `ir..ir + mr`, columns `col..col + cols` are
                    // inside `out` (`rows × n` elements, checked), which this function borrows
                    // exclusively; the ones read back (`pc > 0`) were written by this tile's
                    // first block (`pc == 0`), which writes all of them (`Microkernel`'s
                    // contract).
                    unsafe { K::run(&tile, mr) };
                }
                ir += K::MR;
            }
            pc += kc;
        }
        jc += nc;
    }
    Ok(())
}

/// Packs rows `pc..pc + kc` and columns `jc..jc + nc` of `y` into `pack`: panel after panel of
/// `kc` rows × `nr` columns, the columns beyond `nc` zero. At most `KC.min(k)` × `NC.min(n)`
/// rounded up to `nr` elements: within the capacity `sgemm` reserved fallibly, so these
/// `extend`s never allocate (and never abort).
fn pack_panels(
    pack: &mut Vec<f32>,
    y: Strided<'_>,
    pc: usize,
    kc: usize,
    jc: usize,
    nc: usize,
    nr: usize,
) {
    pack.clear();
    for q in 0..nc.div_ceil(nr) {
        let cols = nr.min(nc - q * nr);
        for p in pc..pc + kc {
            let start = p * y.row_stride + (jc + q * nr) * y.col_stride;
            if y.col_stride == 1 {
                pack.extend_from_slice(&y.elements[start..start + cols]);
            } else {
                pack.extend((0..cols).map(|j| y.elements[start + j * y.col_stride]));
            }
            pack.extend(std::iter::repeat_n(0.0, nr - cols));
        }
    }
}
