//! The one template of the SIMD kernels, instantiated once per instruction set.
//!
//! An ISA file holds only what differs between instruction sets, its *lane helpers*: `load` and
//! `store` (an `[f32; LANES]` to a vector and back), `load_first` and `store_first` (a slice
//! shorter than a vector to its first lanes, zeros in the rest, and back: masked on x86,
//! [`padded`] and [`write_lanes`] elsewhere), one function per elementwise op over whole
//! vectors (`add(a, b)`, `sub`, `mul`, `div`, `neg(a)`, `relu`, `exp`, `log`, `tanh`,
//! `sigmoid`) and `lane_sums(runs)`, the [`SUM_LANES`] `f64` lane sums of a superblock (each
//! block's `f32` accumulators, in `f64`). [`simd_kernels!`] writes the kernels themselves: each
//! a `#[kernel(…, cpu = …)]` `#[target_feature]` function whose body is one of the drivers below
//! applied to the helpers. Every element, a tail's too, goes through the same vector arithmetic.
//!
//! The drivers are `#[inline(always)]` and have no target features of their own: a kernel hands
//! them its helpers inside closures, and a closure has the target features of the function it is
//! written in. The loops therefore live in closures written in the kernel (`|xs, out|
//! map_part(xs, out, …)`): the part drivers and the helpers inline into them, so each loop is
//! compiled with the kernel's features, as a hand-written one would be, and the closure is what
//! the worker threads run on their parts (`cpu::threads`).

use std::mem::MaybeUninit;

use switchyard::{DType, DispatchError, Result, Tensor};

use crate::cpu::threads::{self, Grain};

/// Partial sums of the reductions: the `f32` accumulator `j` of a block adds up the block's
/// elements whose index is `j` modulo `SUM_LANES`, in order, whatever the instruction set (an
/// AVX2 kernel holds them in 4 vectors, an AVX-512 one in 2, a NEON one in 8), so every ISA gives
/// the same bits.
pub(crate) const SUM_LANES: usize = 32;

/// Elements per block of the reductions: each `f32` accumulator adds at most
/// `SUM_BLOCK / SUM_LANES = 32` elements; then the block's 32 sums go to `f64`, each added to
/// its lane's `f64` sum.
pub(crate) const SUM_BLOCK: usize = 1024;

/// Elements per superblock: the 32 `f64` lane sums run over its blocks, then add up in a fixed
/// tree into the superblock's sum; superblocks' sums add up in order. Fixed by the input's
/// length alone (not by the thread count, which splits whole superblocks): results do not
/// depend on the threads.
pub(crate) const SUM_SUPERBLOCK: usize = 64 * SUM_BLOCK;

/// How elementwise kernels split across threads: from 64K elements (below, waking workers costs
/// more than it saves), in parts of whole 64-element runs (256 bytes: a part starts on a cache
/// line and on a vector of every ISA) of at least 16K elements.
pub(crate) const ELEMENTWISE: Grain = Grain {
    parallel_from: 1 << 16,
    multiple: 64,
    min_part: 1 << 14,
    parts_per_thread: 4,
};

/// How `exp`, `log`, `tanh` and `sigmoid` split: as [`ELEMENTWISE`], but from 16K elements, in
/// parts of at least 4K: an element costs them several times what it costs `add`, so waking the
/// workers pays off on shorter tensors (on 2 cores at 16K: `exp` 1.1×, `tanh` 1.4× one thread;
/// at 8K, no gain; benches/README.md).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))] // wasm32 has no such kernels
pub(crate) const TRANSCENDENTAL: Grain = Grain {
    parallel_from: 1 << 14,
    multiple: 64,
    min_part: 1 << 12,
    parts_per_thread: 4,
};

/// How reductions split, counted in superblocks of [`SUM_SUPERBLOCK`]: from 2 (128K elements),
/// one or more a part.
const REDUCTION: Grain = Grain {
    parallel_from: 2,
    multiple: 1,
    min_part: 1,
    parts_per_thread: 4,
};

/// A one-operand elementwise kernel: `part(xs, out)` writes `out` from `xs` (two slices of one
/// length, a part of the input and the matching part of the output) and returns whether it
/// wrote every element; the kernel's closure calls [`map_part`] with its lane helpers. A
/// non-contiguous operand takes `naive`, the op's naive kernel. (Other dtypes never arrive
/// through dispatch: the kernels declare `dtypes = "f32"`, so the op's table sends them to the
/// naive backend. The check stays, for direct calls.)
#[inline(always)]
pub(crate) fn map(
    op: &'static str,
    x: &Tensor,
    naive: fn(&Tensor) -> Result<Tensor>,
    grain: &'static Grain,
    part: impl Fn(&[f32], &mut [MaybeUninit<f32>]) -> bool + Sync,
) -> Result<Tensor> {
    let Some(view) = f32_view(op, x)? else {
        return naive(x);
    };
    let Some(xs) = view.contiguous() else {
        drop(view);
        return naive(x);
    };
    fill(op, x.shape(), grain, &|start, out| {
        part(&xs[start..start + out.len()], out)
    })
}

/// `f` of each `N` elements of `xs` into `out`; the last `len % N` elements are one more
/// vector, through the ISA's `load_first` and `store_first` (on x86 a masked load and store:
/// nothing is copied, no memory past the slices is touched). With `align`, a long `xs` also
/// takes its first elements before a vector boundary that way, so that no load after them
/// straddles two cache lines: for the transcendental ops, whose arithmetic outweighs their
/// loads (for the cheap ops the stores would straddle instead, which measured slower:
/// benches/README.md). Returns whether every element of `out` was written: `false` (nothing
/// written) when the lengths differ.
#[inline(always)]
pub(crate) fn map_part<const N: usize>(
    xs: &[f32],
    out: &mut [MaybeUninit<f32>],
    f: impl Fn(&[f32; N]) -> [f32; N],
    load_first: impl Fn(&[f32]) -> [f32; N],
    store_first: impl Fn(&mut [MaybeUninit<f32>], [f32; N]),
    align: bool,
) -> bool {
    if xs.len() != out.len() {
        return false;
    }
    let lead = if align { aligning_lead::<N>(xs) } else { 0 };
    let (head, xs) = xs.split_at(lead);
    let (head_out, out) = out.split_at_mut(lead);
    if !head.is_empty() {
        store_first(head_out, f(&load_first(head)));
    }
    let (chunks, tail) = xs.as_chunks::<N>();
    let (out_chunks, out_tail) = out.as_chunks_mut::<N>();
    for (slots, chunk) in out_chunks.iter_mut().zip(chunks) {
        write_lanes(slots, f(chunk));
    }
    if !tail.is_empty() {
        store_first(out_tail, f(&load_first(tail)));
    }
    true
}

/// How many leading elements of `xs` to take on their own so that the vectors after them start
/// on a vector boundary (a load that straddles two cache lines costs two accesses); 0 for an
/// aligned `xs` or one under [`ALIGNED_FROM`] elements.
#[inline(always)]
fn aligning_lead<const N: usize>(xs: &[f32]) -> usize {
    let bytes = N * size_of::<f32>();
    let misaligned = xs.as_ptr() as usize % bytes;
    if xs.len() < ALIGNED_FROM || misaligned == 0 {
        return 0;
    }
    (bytes - misaligned) / size_of::<f32>()
}

/// Elements from which [`aligning_lead`] peels.
const ALIGNED_FROM: usize = 4096;

/// The elements of an `f32` tensor, borrowed for reading, or `None` for another dtype (the
/// slow path's inputs, with those whose `contiguous()` is `None`). Contiguity is asked of the
/// view only: asked before the borrow too, it was read twice (the borrow's atomic increment
/// orders every load after it).
#[inline(always)]
pub(crate) fn f32_view<'t>(
    op: &'static str,
    x: &'t Tensor,
) -> Result<Option<switchyard::HostView<'t, f32>>> {
    if x.dtype() != DType::F32 {
        return Ok(None);
    }
    x.host::<f32>(op).map(Some)
}

/// A two-operand elementwise kernel: `part(xs, ys, out)` writes `out` from the matching parts of
/// `x` and `y` (the kernel's closure calls [`zip_part`]).
#[inline(always)]
pub(crate) fn zip(
    op: &'static str,
    x: &Tensor,
    y: &Tensor,
    naive: impl FnOnce(&Tensor, &Tensor) -> Result<Tensor>,
    part: impl Fn(&[f32], &[f32], &mut [MaybeUninit<f32>]) -> bool + Sync,
) -> Result<Tensor> {
    // The fast path: two contiguous `f32` operands of one shape, so of one length (a tensor
    // holds exactly its shape's element count): the chunks of `x` and `y` pair up to the last.
    // So do row broadcasts (`zip_rows`). Anything else (views, other broadcasts; other dtypes
    // on a direct call) takes `naive`, the op's naive kernel.
    let (xshape, yshape) = (x.shape(), y.shape());
    // Element by element: for a shape this short, cheaper than the `memcmp` call of `!=`.
    let same_shape = xshape.len() == yshape.len() && xshape.iter().zip(yshape).all(|(a, b)| a == b);
    // Of the broadcasts, a row broadcast (a bias over a batch) stays here too.
    let rows = if same_shape {
        None
    } else {
        let Some(rows) = broadcast_rows(xshape, yshape) else {
            return naive(x, y);
        };
        Some(rows)
    };
    let (Some(xv), Some(yv)) = (f32_view(op, x)?, f32_view(op, y)?) else {
        return naive(x, y);
    };
    let (Some(xs), Some(ys)) = (xv.contiguous(), yv.contiguous()) else {
        drop((xv, yv));
        return naive(x, y);
    };
    match rows {
        Some(rows) => zip_rows(op, xs, ys, rows, part),
        None => fill(op, xshape, &ELEMENTWISE, &|start, out| {
            let range = start..start + out.len();
            part(&xs[range.clone()], &ys[range], out)
        }),
    }
}

/// Which operand repeats along the other's rows, in a broadcast the row path serves.
#[derive(Clone, Copy, Debug)]
enum Repeats {
    X,
    Y,
}

/// The operand that repeats and its row length, when one operand's shape (leading 1s aside)
/// is the other's trailing dims, of at least one element: a bias added to a batch, `[N, C] +
/// [C]`, or a scalar (`[]`, `[1]`) with any tensor. Then the result has the larger operand's
/// shape, and element `i` pairs the larger operand's `i` with the smaller's `i % row`. `None`
/// for every other shape.
fn broadcast_rows<'s>(xshape: &'s [usize], yshape: &'s [usize]) -> Option<Rows<'s>> {
    let strip = |shape: &[usize]| -> usize { shape.iter().take_while(|&&d| d == 1).count() };
    let fits = |small: &[usize], large: &[usize]| {
        let small = &small[strip(small)..];
        small.len() <= large.len() && small == &large[large.len() - small.len()..]
    };
    let (repeats, small, shape) = if xshape.len() <= yshape.len() && fits(xshape, yshape) {
        (Repeats::X, xshape, yshape)
    } else if yshape.len() <= xshape.len() && fits(yshape, xshape) {
        (Repeats::Y, yshape, xshape)
    } else {
        return None;
    };
    // A row's length: no overflow, it is the element count of an existing tensor.
    let row: usize = small.iter().product();
    (row > 0).then_some(Rows {
        repeats,
        row,
        shape,
    })
}

/// A row broadcast: which operand repeats, every how many elements, and the result's shape
/// (the larger operand's).
struct Rows<'s> {
    repeats: Repeats,
    row: usize,
    shape: &'s [usize],
}

/// The shortest row the row path runs as it is: each row is one `zip_part` call, so a shorter
/// one (a scalar's is 1) is first repeated into a row of at least [`REPEATED_ROW`] elements
/// (and fewer than `REPEATED_ROW + MIN_ROW`).
const MIN_ROW: usize = 16;

/// The length a short row is repeated to: long enough that the calls per row cost little.
const REPEATED_ROW: usize = 256;

/// [`zip`] of a row broadcast ([`broadcast_rows`]) of `xs` and `ys`: the larger operand's
/// elements in parts, each cut where a row of the smaller one starts again; the same arithmetic
/// per element as the naive kernel.
#[inline(always)]
fn zip_rows(
    op: &'static str,
    xs: &[f32],
    ys: &[f32],
    Rows {
        repeats,
        row,
        shape,
    }: Rows<'_>,
    part: impl Fn(&[f32], &[f32], &mut [MaybeUninit<f32>]) -> bool + Sync,
) -> Result<Tensor> {
    let (large, small) = match repeats {
        Repeats::X => (ys, xs),
        Repeats::Y => (xs, ys),
    };
    // A short row (a scalar, a few channels' bias) repeated into one of at least
    // `REPEATED_ROW` elements, so that each part call is long: `long[i % len]` is
    // `small[i % row]`, as `len` is a multiple of `row`.
    let long: [f32; REPEATED_ROW + MIN_ROW];
    let (small, row) = if row < MIN_ROW {
        let len = REPEATED_ROW.div_ceil(row) * row;
        long = std::array::from_fn(|i| small[i % row]);
        (&long[..len], len)
    } else {
        (small, row)
    };
    fill(op, shape, &ELEMENTWISE, &|start, out| {
        let mut all_written = true;
        let mut done = 0;
        while done < out.len() {
            let at = start + done;
            let offset = at % row;
            let len = (row - offset).min(out.len() - done);
            let (large, small) = (&large[at..at + len], &small[offset..offset + len]);
            let out = &mut out[done..done + len];
            all_written &= match repeats {
                Repeats::X => part(small, large, out),
                Repeats::Y => part(large, small, out),
            };
            done += len;
        }
        all_written
    })
}

/// `f` of each `N` elements of `xs` and the same `N` of `ys` into `out`; the last `len % N`
/// elements are one more vector, through the ISA's `load_first` and `store_first` (see
/// [`map_part`]). Returns whether every element of `out` was written: `false` (nothing
/// written) when the three lengths differ.
#[inline(always)]
pub(crate) fn zip_part<const N: usize>(
    xs: &[f32],
    ys: &[f32],
    out: &mut [MaybeUninit<f32>],
    f: impl Fn(&[f32; N], &[f32; N]) -> [f32; N],
    load_first: impl Fn(&[f32]) -> [f32; N],
    store_first: impl Fn(&mut [MaybeUninit<f32>], [f32; N]),
) -> bool {
    // All three of one length, checked once, so that one count drives every loop below (the
    // zipped lengths' minimum cost more than the loops themselves at a few elements).
    if xs.len() != out.len() || ys.len() != out.len() {
        return false;
    }
    let ((xc, xt), (yc, yt)) = (xs.as_chunks::<N>(), ys.as_chunks::<N>());
    let (out_chunks, out_tail) = out.as_chunks_mut::<N>();
    for ((slots, a), b) in out_chunks.iter_mut().zip(xc).zip(yc) {
        write_lanes(slots, f(a, b));
    }
    if !xt.is_empty() {
        store_first(out_tail, f(&load_first(xt), &load_first(yt)));
    }
    true
}

/// A new tensor of `shape`, every element written by `part(start, out)` for the part
/// `out = elements[start..start + out.len()]`; the parts run on the worker threads when the
/// tensor is large (`grain`). Its memory is never zero-filled first.
///
/// The tensor is built first and written in place (`Tensor::uninit`): a small result's elements
/// go straight into its header. Out of line and without the kernel's target features, on
/// purpose: inlined into an AVX-512 kernel, the moves of a buffer on its way into the header
/// were copied in overlapping 64-byte pieces whose loads stalled on the narrower stores before
/// them, about a fifth of a 1-element `add` (benches/README.md).
#[allow(unsafe_code)] // `assume_init` of the output, every element written
#[inline(never)]
fn fill(
    op: &'static str,
    shape: &[usize],
    grain: &Grain,
    part: &(dyn Fn(usize, &mut [MaybeUninit<f32>]) -> bool + Sync),
) -> Result<Tensor> {
    let mut out = Tensor::uninit::<f32>(op, shape)?;
    if !threads::for_each_part(out.as_mut_slice(), *grain, part) {
        // A part's iterators ended early: a defect of this module, reported, never exposed
        // (the unwritten tensor is dropped unread).
        return Err(DispatchError::kernel(
            op,
            "a CPU SIMD kernel left part of its output unwritten (a defect: please report it)",
        ));
    }
    // SAFETY: `for_each_part` called `part` on parts that together cover the whole slice (each
    // element in exactly one), and each call returned `true`, which the part writers
    // (`zip_part`, `map_part`, and the row path's calls of `zip_part`) return only when the
    // lengths agree: then their loops write every whole vector of the part, and the ISA's
    // `store_first` the rest (its contract: every element of the slice it is given).
    Ok(unsafe { out.assume_init() })
}

/// `xs` (fewer than `N` elements) in a vector's first lanes, zeros in the rest: `load_first`
/// for an ISA without masked loads.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))] // x86 loads with a mask
#[inline(always)]
pub(crate) fn padded<const N: usize>(xs: &[f32]) -> [f32; N] {
    let mut lanes = [0.0; N];
    for (lane, &x) in lanes.iter_mut().zip(xs) {
        *lane = x;
    }
    lanes
}

/// The first `out.len().min(N)` lanes into `out`: a whole vector's store in the drivers, and
/// `store_first` for an ISA without masked stores.
#[inline(always)]
pub(crate) fn write_lanes<const N: usize>(out: &mut [MaybeUninit<f32>], lanes: [f32; N]) {
    for (slot, value) in out.iter_mut().zip(lanes) {
        slot.write(value);
    }
}

/// The sum of `xs`, from `superblock_sum` of each superblock of [`SUM_SUPERBLOCK`] elements
/// (the last may be shorter), added up in `f64` in order. Large inputs run their superblocks on
/// the worker threads and add their sums in the same order afterwards: the same bits either way.
#[inline(always)]
pub(crate) fn sum_blocks(xs: &[f32], superblock_sum: impl Fn(&[f32]) -> f64 + Sync) -> f64 {
    let superblocks = xs.len().div_ceil(SUM_SUPERBLOCK);
    let in_order = |sums: &mut dyn Iterator<Item = f64>| {
        // `-0.0` is the identity of `+` (`-0.0 + 0.0 = 0.0`): the sum of `[-0.0]` stays `-0.0`.
        sums.fold(-0.0, |total, sum| total + sum)
    };
    if superblocks < REDUCTION.parallel_from || threads::num_threads() == 1 {
        return in_order(&mut xs.chunks(SUM_SUPERBLOCK).map(&superblock_sum));
    }
    let mut sums = Vec::new();
    if sums.try_reserve_exact(superblocks).is_err() {
        // No room for the superblocks' sums: one thread, no list.
        return in_order(&mut xs.chunks(SUM_SUPERBLOCK).map(&superblock_sum));
    }
    sums.resize(superblocks, 0.0f64);
    threads::for_each_part(&mut sums, REDUCTION, |start, part| {
        let chunks = xs.chunks(SUM_SUPERBLOCK).skip(start);
        for (sum, superblock) in part.iter_mut().zip(chunks) {
            *sum = superblock_sum(superblock);
        }
        true
    });
    in_order(&mut sums.into_iter())
}

/// Runs of [`SUM_LANES`] per block of [`SUM_BLOCK`] elements.
const RUNS_PER_BLOCK: usize = SUM_BLOCK / SUM_LANES;

/// The `f64` lane sums of a superblock's runs, as every ISA computes them: within each block of
/// [`SUM_BLOCK`] elements, `f32` accumulator `j` adds element `j` of each run in order, from
/// `-0.0`; then the block's accumulators go to `f64`, onto the lane sums, block after block.
/// An ISA passes its accumulators' form `A` (the 32 `f32` in its vectors) and its lane sums'
/// `W`: `zero()` a block's fresh accumulators, `add_run(acc, run)` one run onto them,
/// `widen(wide, acc)` a finished block onto the lane sums.
///
/// Blocks are independent until `widen`, so two run side by side: each accumulator is a chain
/// of dependent additions (32 per block), and one block's chains alone (4 AVX2 vectors, 2
/// AVX-512 ones) leave the adders idle for most of each addition's latency; two blocks' chains
/// fill them. The arithmetic and its order per accumulator and per lane sum are unchanged, so
/// the bits are too.
#[inline(always)]
pub(crate) fn lane_sums_of<A: Copy, W>(
    runs: &[[f32; SUM_LANES]],
    mut wide: W,
    zero: impl Fn() -> A,
    add_run: impl Fn(A, &[f32; SUM_LANES]) -> A,
    widen: impl Fn(W, A) -> W,
) -> W {
    let (pairs, rest) = runs.as_chunks::<{ 2 * RUNS_PER_BLOCK }>();
    for pair in pairs {
        let (first, second) = pair.split_at(RUNS_PER_BLOCK);
        let (mut a, mut b) = (zero(), zero());
        for (x, y) in first.iter().zip(second) {
            a = add_run(a, x);
            b = add_run(b, y);
        }
        wide = widen(widen(wide, a), b);
    }
    // Fewer than two blocks are left (the last may be short): one at a time.
    for block in rest.chunks(RUNS_PER_BLOCK) {
        let a = block.iter().fold(zero(), &add_run);
        wide = widen(wide, a);
    }
    wide
}

/// [`lane_sums_of`] for runs whose first element lies `shift` elements past the boundary the
/// ISA's vectors are aligned to (an input made from a `Vec` that `malloc` placed 16 bytes into a
/// cache line): the same sums, bit for bit, read in aligned *windows* of [`SUM_LANES`] elements
/// instead, so that no vector load straddles two cache lines (such loads made the AVX-512 `sum`
/// of 64K elements 1.75× slower).
///
/// Window `w` of a block holds its elements `32w − shift .. 32w + 32 − shift`: position `q` of
/// the accumulators gets element `32w − shift + q`, whose index is `q − shift` modulo 32, and
/// each position adds its elements in order, so after the block, position `(j + shift) % 32`
/// holds accumulator `j` of [`lane_sums_of`], the same additions in the same order. The first
/// window holds the block's first `32 − shift` elements (at positions `shift..`), the last its
/// last `shift` (at positions `..shift`); the whole windows between are aligned runs.
/// `add_part(acc, part, at)` adds `part` at positions `at..at + part.len()` and leaves the others
/// unchanged; `rotate(acc)` moves position `(j + shift) % 32` to `j`, before `widen`. `shift`
/// below [`SUM_LANES`].
#[cfg(target_arch = "x86_64")] // the AVX2 and AVX-512 variants; NEON and wasm not measured misaligned
#[allow(clippy::too_many_arguments)] // the ISA's steps, each named by its caller
#[inline(always)]
pub(crate) fn realigned_lane_sums_of<A: Copy, W>(
    runs: &[[f32; SUM_LANES]],
    shift: usize,
    mut wide: W,
    zero: impl Fn() -> A,
    add_run: impl Fn(A, &[f32; SUM_LANES]) -> A,
    add_part: impl Fn(A, &[f32], usize) -> A,
    rotate: impl Fn(A) -> A,
    widen: impl Fn(W, A) -> W,
) -> W {
    let shift = shift % SUM_LANES;
    // A block (whole runs, at least one) as its first part, its whole windows, its last part.
    fn windows(block: &[f32], shift: usize) -> (&[f32], &[[f32; SUM_LANES]], &[f32]) {
        let (first, rest) = block.split_at(SUM_LANES - shift);
        let (whole, last) = rest.split_at(block.len() - SUM_LANES);
        (first, whole.as_chunks::<SUM_LANES>().0, last)
    }
    let xs = runs.as_flattened();
    let (pairs, rest) = xs.as_chunks::<{ 2 * SUM_BLOCK }>();
    for pair in pairs {
        // Two blocks side by side, as `lane_sums_of` runs them.
        let (a_block, b_block) = pair.split_at(SUM_BLOCK);
        let (a_first, a_whole, a_last) = windows(a_block, shift);
        let (b_first, b_whole, b_last) = windows(b_block, shift);
        let (mut a, mut b) = (
            add_part(zero(), a_first, shift),
            add_part(zero(), b_first, shift),
        );
        for (x, y) in a_whole.iter().zip(b_whole) {
            a = add_run(a, x);
            b = add_run(b, y);
        }
        let (a, b) = (add_part(a, a_last, 0), add_part(b, b_last, 0));
        wide = widen(widen(wide, rotate(a)), rotate(b));
    }
    for block in rest.chunks(SUM_BLOCK) {
        let (first, whole, last) = windows(block, shift);
        let a = whole.iter().fold(add_part(zero(), first, shift), &add_run);
        wide = widen(wide, rotate(add_part(a, last, 0)));
    }
    wide
}

/// The sum of one superblock (at most [`SUM_SUPERBLOCK`] elements): `lane_sums` gives the `f64`
/// sums of its whole runs of [`SUM_LANES`] per lane (each block's `f32` accumulators, added
/// block after block); they add up in a fixed tree, then the last `len % SUM_LANES` elements in
/// order.
#[inline(always)]
pub(crate) fn superblock_sum(
    xs: &[f32],
    lane_sums: impl FnOnce(&[[f32; SUM_LANES]]) -> [f64; SUM_LANES],
) -> f64 {
    let (runs, tail) = xs.as_chunks::<SUM_LANES>();
    let mut partials = lane_sums(runs);
    // Halve the width each step: lane `i` adds lane `i + width`. Straight-line, so the compiler
    // turns each step into a few vector additions of the kernel's ISA.
    let mut width = SUM_LANES / 2;
    while width > 0 {
        for i in 0..width {
            partials[i] += partials[i + width];
        }
        width /= 2;
    }
    let sum = tail.iter().fold(partials[0], |acc, &x| acc + f64::from(x));
    if sum.is_finite() {
        sum
    } else {
        // An infinity or NaN in the input, or an `f32` accumulator that overflowed where the
        // `f64` sum does not (`f32::MAX` twice in one lane, `-f32::MAX` twice in another): the
        // superblock again, in `f64` throughout. Rare, and the same bits on every path.
        xs.iter().fold(-0.0, |acc, &x| acc + f64::from(x))
    }
}

/// The kernels of one instruction set at `CpuSimd`, from the lane helpers in scope (see the
/// module docs): `simd_kernels!(cpu = "avx2,fma", needs = "AVX2 and FMA"; add_avx2 = add, …)`
/// registers `add_avx2` for `add` with `cpu = "avx2,fma"` and `#[target_feature(enable =
/// "avx2,fma")]` (on wasm32, where the whole module is built with `simd128`, no
/// `#[target_feature]`). Each op (`add` `sub` `mul` `div` `neg` `relu` `exp` `log` `tanh`
/// `sigmoid` `relu_backward` `sum` `mean`) has its line below: its doc and which driver it takes.
///
/// `narrow = avx2 past 4096` (after `needs`) runs the two-operand elementwise ops' parts longer
/// than 4096 elements on the lane helpers of the module `avx2` instead (a narrower vector whose
/// features the kernel's imply): on the AVX-512 CPU this was measured on, 512-bit loops over two
/// inputs and an output that no longer fit L1 (48 KB: 4096 elements each) ran 15–20 % slower
/// than 256-bit ones, while within L1 they ran faster (benches/README.md). The same IEEE
/// operations: the same bits.
macro_rules! simd_kernels {
    (cpu = $cpu:tt, needs = $needs:tt, narrow = $narrow:ident past $from:literal;
        $($name:ident = $op:ident),+ $(,)?) => {
        $crate::cpu::simd::template::simd_kernels!(@each $cpu $needs [$narrow $from]; $($name = $op),+);
    };
    (cpu = $cpu:tt, needs = $needs:tt; $($name:ident = $op:ident),+ $(,)?) => {
        $crate::cpu::simd::template::simd_kernels!(@each $cpu $needs []; $($name = $op),+);
    };
    (@each $cpu:tt $needs:tt $narrow:tt; $($name:ident = $op:ident),+) => {
        $($crate::cpu::simd::template::simd_kernels!(@$op $name $cpu $needs $narrow);)+
    };

    (@add $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@binary add add_naive $name $cpu $needs $narrow "`x + y`.");
    };
    (@sub $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@binary sub sub_naive $name $cpu $needs $narrow "`x - y`.");
    };
    (@mul $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@binary mul mul_naive $name $cpu $needs $narrow "`x * y`.");
    };
    (@div $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@binary div div_naive $name $cpu $needs $narrow "`x / y`.");
    };
    (@neg $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@unary neg neg_naive $name $cpu $needs
            "`-x`: the sign bit flipped, NaN included, as scalar negation does.";
            ELEMENTWISE; false);
    };
    (@relu $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@unary relu relu_naive $name $cpu $needs
            "`max(x, 0)`, NaN kept."; ELEMENTWISE; false);
    };
    // The transcendental ops, whose arithmetic outweighs their loads, align their loads
    // (`map_part`'s `align`).
    (@exp $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@unary exp exp_naive $name $cpu $needs
            "`e^x` in `f32`, within 1 ulp of the exact value (see `simd::math_f32`).";
            TRANSCENDENTAL; true);
    };
    (@log $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@unary log log_naive $name $cpu $needs
            "`ln x` in `f32`, within 1 ulp of the exact value (see `simd::math_f32`).";
            TRANSCENDENTAL; true);
    };
    (@tanh $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@unary tanh tanh_naive $name $cpu $needs
            "`tanh x` in `f32`, within 1 ulp of the exact value (see `simd::math_f32`).";
            TRANSCENDENTAL; true);
    };
    (@sigmoid $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@unary sigmoid sigmoid_naive $name $cpu $needs
            "`1 / (1 + e^−x)` in `f32`, within 1 ulp of the exact value (see `simd::math_f32`).";
            TRANSCENDENTAL; true);
    };
    (@relu_backward $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        // Anything but two contiguous `f32` tensors of one shape goes below `CpuSimd`: the op
        // has no naive kernel, so its body (the decomposition) serves it there.
        $crate::cpu::simd::template::simd_kernels!(@kernel relu_backward $cpu $needs
            "`grad · [out > 0]` in one pass: the same bits as the op's body.";
            pub fn $name(
                keys: ::switchyard::DispatchKeySet,
                grad: &::switchyard::Tensor,
                out: &::switchyard::Tensor,
            ) -> ::switchyard::Result<::switchyard::Tensor> {
                let below = |grad: &::switchyard::Tensor, out: &::switchyard::Tensor| {
                    ::switchyard::ops::relu_backward::redispatch(
                        keys.below(::switchyard::DispatchKey::CpuSimd), grad, out)
                };
                $crate::cpu::simd::template::zip("relu_backward", grad, out, below, |gs, os, res| {
                    $crate::cpu::simd::template::simd_kernels!(@zip_part $narrow relu_backward gs os res)
                })
            }
        );
    };
    (@sum $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@kernel sum $cpu $needs
            "The sum, as a 0-dimensional tensor.";
            pub fn $name(x: &::switchyard::Tensor) -> ::switchyard::Result<::switchyard::Tensor> {
                let Some(view) = $crate::cpu::simd::template::f32_view("sum", x)? else {
                    return $crate::cpu::naive::sum_naive(x);
                };
                let Some(xs) = view.contiguous() else {
                    drop(view);
                    return $crate::cpu::naive::sum_naive(x);
                };
                let total = $crate::cpu::simd::template::sum_blocks(xs, |superblock| {
                    $crate::cpu::simd::template::superblock_sum(superblock, |runs| lane_sums(runs))
                });
                ::switchyard::Tensor::from_scalar(total as f32)
            }
        );
    };
    (@mean $name:ident $cpu:tt $needs:tt $narrow:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@kernel mean $cpu $needs
            "The mean, as a 0-dimensional tensor (NaN when empty).";
            pub fn $name(x: &::switchyard::Tensor) -> ::switchyard::Result<::switchyard::Tensor> {
                let Some(view) = $crate::cpu::simd::template::f32_view("mean", x)? else {
                    return $crate::cpu::naive::mean_naive(x);
                };
                let Some(xs) = view.contiguous() else {
                    drop(view);
                    return $crate::cpu::naive::mean_naive(x);
                };
                let total = $crate::cpu::simd::template::sum_blocks(xs, |superblock| {
                    $crate::cpu::simd::template::superblock_sum(superblock, |runs| lane_sums(runs))
                });
                ::switchyard::Tensor::from_scalar((total / x.numel() as f64) as f32)
            }
        );
    };

    (@binary $op:ident $naive:ident $name:ident $cpu:tt $needs:tt $narrow:tt $doc:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@kernel $op $cpu $needs $doc;
            pub fn $name(
                x: &::switchyard::Tensor,
                y: &::switchyard::Tensor,
            ) -> ::switchyard::Result<::switchyard::Tensor> {
                let naive = $crate::cpu::naive::$naive;
                $crate::cpu::simd::template::zip(stringify!($op), x, y, naive, |xs, ys, out| {
                    $crate::cpu::simd::template::simd_kernels!(@zip_part $narrow $op xs ys out)
                })
            }
        );
    };
    (@unary $op:ident $naive:ident $name:ident $cpu:tt $needs:tt $doc:tt;
        $grain:ident; $align:literal) => {
        $crate::cpu::simd::template::simd_kernels!(@kernel $op $cpu $needs $doc;
            pub fn $name(x: &::switchyard::Tensor) -> ::switchyard::Result<::switchyard::Tensor> {
                let naive = $crate::cpu::naive::$naive;
                let grain = &$crate::cpu::simd::template::$grain;
                $crate::cpu::simd::template::map(stringify!($op), x, naive, grain, |xs, out| {
                    $crate::cpu::simd::template::map_part(xs, out, |a| store($op(load(a))),
                        |xs| load_first(xs), |out, lanes| store_first(out, lanes), $align)
                })
            }
        );
    };

    // A two-operand op's part on this ISA's lanes (`self`), or past `$from` elements on
    // `$narrow`'s.
    (@zip_part [] $op:ident $xs:ident $ys:ident $out:ident) => {
        $crate::cpu::simd::template::simd_kernels!(@zip_lanes self $op $xs $ys $out)
    };
    (@zip_part [$narrow:ident $from:literal] $op:ident $xs:ident $ys:ident $out:ident) => {
        if $out.len() <= $from {
            $crate::cpu::simd::template::simd_kernels!(@zip_lanes self $op $xs $ys $out)
        } else {
            $crate::cpu::simd::template::simd_kernels!(@zip_lanes $narrow $op $xs $ys $out)
        }
    };
    (@zip_lanes $lanes:ident $op:ident $xs:ident $ys:ident $out:ident) => {
        $crate::cpu::simd::template::zip_part($xs, $ys, $out,
            |a, b| $lanes::store($lanes::$op($lanes::load(a), $lanes::load(b))),
            |xs| $lanes::load_first(xs), |out, lanes| $lanes::store_first(out, lanes))
    };

    // The registration and the features, the same for every kernel of the instruction set.
    // On wasm32 the kernels are compiled only into a module built with `simd128` (there is no
    // runtime detection: an engine without it refuses the module), so they are plain functions;
    // `cpu = "simd128"` still lets `SWITCHYARD_CPU_CAPABILITY=default` leave them out.
    (@kernel $op:ident $cpu:tt $needs:tt $doc:tt; $($item:tt)*) => {
        #[doc = $doc]
        #[cfg_attr(not(target_arch = "wasm32"), doc = "")]
        #[cfg_attr(not(target_arch = "wasm32"), doc = "# Safety")]
        #[cfg_attr(not(target_arch = "wasm32"), doc = "")]
        #[cfg_attr(not(target_arch = "wasm32"), doc = concat!("The CPU must have ", $needs,
            ". Dispatch installs this kernel only on such a CPU (runtime detection)."))]
        #[::switchyard::kernel(op = ::switchyard::ops::$op, key = CpuSimd, cpu = $cpu, dtypes = "f32")]
        #[cfg_attr(not(target_arch = "wasm32"), target_feature(enable = $cpu))]
        $($item)*
    };
}

pub(crate) use simd_kernels;

#[cfg(test)]
pub(crate) mod tests {
    #[cfg(target_arch = "x86_64")]
    use super::realigned_lane_sums_of;
    use super::{ALIGNED_FROM, SUM_BLOCK, SUM_LANES, aligning_lead, lane_sums_of, superblock_sum};

    /// The lane sums as every ISA computes them: `f32` within a block, `f64` across blocks.
    fn lane_sums(runs: &[[f32; SUM_LANES]]) -> [f64; SUM_LANES] {
        let mut wide = [-0.0f64; SUM_LANES];
        for block in runs.chunks(SUM_BLOCK / SUM_LANES) {
            let mut sums = [-0.0f32; SUM_LANES];
            for run in block {
                for (sum, x) in sums.iter_mut().zip(run) {
                    *sum += x;
                }
            }
            for (w, s) in wide.iter_mut().zip(sums) {
                *w += f64::from(s);
            }
        }
        wide
    }

    /// An ISA's `lane_sums` gives the reference's bits, lane by lane, on runs that start at
    /// every offset from a 64-byte boundary (0 to 31 elements), for several block counts.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn check_lane_sums_at_every_offset(
        isa_lane_sums: impl Fn(&[[f32; SUM_LANES]]) -> [f64; SUM_LANES],
    ) {
        for n_runs in [1, 2, 31, 32, 33, 64, 65, 100] {
            let n = n_runs * SUM_LANES;
            // Magnitudes from 2⁻³⁰ to 2³⁰: the lane sums round in `f64`, so a value in the wrong
            // lane shows in the bits.
            let values: Vec<f32> = (0..n + 3 * SUM_LANES)
                .map(|i| {
                    let x = i as f32;
                    (x * 0.618_034).sin() * f32::powi(2.0, (i * 7 % 61) as i32 - 30)
                })
                .collect();
            let aligned = values.as_ptr().align_offset(64);
            for offset in 0..SUM_LANES {
                let xs = &values[aligned + offset..][..n];
                let runs = xs.as_chunks::<SUM_LANES>().0;
                let (got, want) = (isa_lane_sums(runs), lane_sums(runs));
                assert_eq!(
                    got.map(f64::to_bits),
                    want.map(f64::to_bits),
                    "{n_runs} runs at offset {offset}"
                );
            }
        }
    }

    #[test]
    #[allow(unsafe_code)] // reading back outputs that were initialised before the calls
    fn the_part_drivers_write_every_element_once_and_refuse_unequal_lengths() {
        use std::mem::MaybeUninit;
        // SAFETY (each `assume_init` below): every output element was initialised (NaN) when
        // its vector was made, and the drivers only ever write values over it.
        let read = |out: &[MaybeUninit<f32>]| -> Vec<f32> {
            out.iter().map(|v| unsafe { v.assume_init() }).collect()
        };
        // A tail's vector comes in 1 lower than whole vectors do, so which path wrote an
        // element shows.
        let load_first = |xs: &[f32]| super::padded::<4>(xs).map(|x| x - 1.0);
        let store_first = |out: &mut [MaybeUninit<f32>], lanes| super::write_lanes::<4>(out, lanes);
        let zip = |a: &[f32; 4], b: &[f32; 4]| std::array::from_fn(|i| a[i] + b[i] + 1.0);
        let map = |a: &[f32; 4]| a.map(|x| x + 1.0);
        let zip_into = |xs: &[f32], ys: &[f32], out: &mut [MaybeUninit<f32>]| {
            super::zip_part::<4>(xs, ys, out, zip, load_first, store_first)
        };
        let map_into = |xs: &[f32], out: &mut [MaybeUninit<f32>], align: bool| {
            super::map_part::<4>(xs, out, map, load_first, store_first, align)
        };
        for len in 0..=13 {
            let xs: Vec<f32> = (0..len).map(|i| 10.0 * i as f32).collect();
            let ys = vec![0.5; len];
            let whole = len / 4 * 4;
            let mut out = vec![MaybeUninit::new(f32::NAN); len];
            assert!(zip_into(&xs, &ys, &mut out));
            let want: Vec<f32> = (0..len)
                .map(|i| 10.0 * i as f32 + if i < whole { 1.5 } else { -0.5 })
                .collect();
            assert_eq!(read(&out), want, "zip_part, length {len}");
            for align in [false, true] {
                let mut out = vec![MaybeUninit::new(f32::NAN); len];
                assert!(map_into(&xs, &mut out, align));
                let want: Vec<f32> = (0..len)
                    .map(|i| 10.0 * i as f32 + if i < whole { 1.0 } else { 0.0 })
                    .collect();
                assert_eq!(read(&out), want, "map_part, length {len}");
            }
            // An operand longer or shorter than `out`: refused, nothing written.
            for (xl, yl) in [(len + 1, len), (len, len + 1)] {
                let (xs, ys) = (vec![1.0; xl], vec![1.0; yl]);
                let mut out = vec![MaybeUninit::new(f32::NAN); len];
                assert!(!zip_into(&xs, &ys, &mut out));
                assert!(read(&out).iter().all(|x| x.is_nan()));
            }
            let mut out = vec![MaybeUninit::new(f32::NAN); len + 1];
            assert!(!map_into(&xs, &mut out, false));
            assert!(read(&out).iter().all(|x| x.is_nan()));
        }
        // A long input off a vector boundary, aligned: its first elements go through the tail's
        // vector too, then whole vectors from the boundary, then the tail.
        let all: Vec<f32> = (0..ALIGNED_FROM + 16).map(|i| i as f32).collect();
        let at = (1..4)
            .find(|&at| aligning_lead::<4>(&all[at..]) != 0)
            .unwrap();
        let xs = &all[at..at + ALIGNED_FROM + 6];
        let lead = aligning_lead::<4>(xs);
        let whole = lead + (xs.len() - lead) / 4 * 4;
        let mut out = vec![MaybeUninit::new(f32::NAN); xs.len()];
        assert!(map_into(xs, &mut out, true));
        let want: Vec<f32> = (0..xs.len())
            .map(|i| xs[i] + if (lead..whole).contains(&i) { 1.0 } else { 0.0 })
            .collect();
        assert_eq!(read(&out), want, "aligned map_part");
    }

    #[test]
    fn superblock_sum_adds_every_lane_and_the_tail_once() {
        for n in [
            0,
            1,
            31,
            32,
            33,
            2 * SUM_LANES + 5,
            SUM_BLOCK + 7,
            3 * SUM_BLOCK,
        ] {
            let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let want = (n * n.saturating_sub(1) / 2) as f64;
            assert_eq!(superblock_sum(&xs, lane_sums), want, "{n}");
        }
    }

    /// `n_runs` runs of values of many magnitudes, so that any change of order shows in the
    /// bits.
    fn varied_runs(n_runs: usize) -> Vec<[f32; SUM_LANES]> {
        (0..n_runs)
            .map(|r| {
                std::array::from_fn(|j| {
                    let i = (r * SUM_LANES + j) as f32;
                    (i * 0.618_034).sin() * (1.0 + (i * 0.37).cos() * 1.0e4)
                })
            })
            .collect()
    }

    /// A run onto scalar accumulators, as every ISA adds it.
    fn add_run(mut acc: [f32; SUM_LANES], run: &[f32; SUM_LANES]) -> [f32; SUM_LANES] {
        for (a, x) in acc.iter_mut().zip(run) {
            *a += x;
        }
        acc
    }

    /// A block's scalar accumulators onto the `f64` lane sums.
    fn widen(mut wide: [f64; SUM_LANES], acc: [f32; SUM_LANES]) -> [f64; SUM_LANES] {
        for (w, a) in wide.iter_mut().zip(acc) {
            *w += f64::from(a);
        }
        wide
    }

    /// `lane_sums_of` (two blocks side by side) with scalar accumulators gives the bits of
    /// one block at a time, whatever the number of blocks and of runs in the last.
    #[test]
    fn lane_sums_of_two_blocks_at_once_are_the_bits_of_one_at_a_time() {
        let runs_per_block = SUM_BLOCK / SUM_LANES;
        for n_runs in [0, 1, 31, 32, 33, 63, 64, 65, 95, 96, 97, 2048] {
            let runs = varied_runs(n_runs);
            let got = lane_sums_of(
                &runs,
                [-0.0f64; SUM_LANES],
                || [-0.0f32; SUM_LANES],
                add_run,
                widen,
            );
            let want = lane_sums(&runs);
            assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{n_runs}");
            assert!(n_runs < 2 * runs_per_block || got != [-0.0; SUM_LANES]);
        }
    }

    /// `realigned_lane_sums_of` with scalar accumulators gives the bits of `lane_sums_of` at
    /// every shift, whatever the number of blocks and of runs in the last.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn realigned_lane_sums_are_the_bits_of_aligned_ones_at_every_shift() {
        for n_runs in [0, 1, 2, 31, 32, 33, 63, 64, 65, 97, 2048] {
            let runs = varied_runs(n_runs);
            let want = lane_sums(&runs);
            for shift in 0..SUM_LANES {
                let got = realigned_lane_sums_of(
                    &runs,
                    shift,
                    [-0.0f64; SUM_LANES],
                    || [-0.0f32; SUM_LANES],
                    add_run,
                    |mut acc, part, at| {
                        for (a, x) in acc[at..].iter_mut().zip(part) {
                            *a += x;
                        }
                        acc
                    },
                    |acc| std::array::from_fn(|j| acc[(j + shift) % SUM_LANES]),
                    widen,
                );
                let (got, want) = (got.map(f64::to_bits), want.map(f64::to_bits));
                assert_eq!(got, want, "{n_runs} runs, shift {shift}");
            }
        }
    }

    #[test]
    fn a_superblock_whose_f32_lanes_overflow_is_summed_in_f64() {
        // Lane 0 holds MAX twice, lane 1 -MAX twice: each overflows in `f32`, the sum is 0.
        let mut xs = vec![0.0f32; 2 * SUM_LANES];
        xs[0] = f32::MAX;
        xs[SUM_LANES] = f32::MAX;
        xs[1] = -f32::MAX;
        xs[SUM_LANES + 1] = -f32::MAX;
        assert_eq!(superblock_sum(&xs, lane_sums), 0.0);
    }
}
