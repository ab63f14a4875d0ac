//! `matmul` of `f32` on the CPU SIMD backend: the product cut into bands of whole rows (threads),
//! each band computed by one engine. On x86-64 our register-tiled kernels (`sgemm.rs`: 6 × 16
//! tiles with AVX2+FMA, 14 × 32 with AVX-512F, the same bits) serve products up to 512³
//! multiply-adds with a row-major `x` (`TILES_UP_TO`), reading `x` in place; larger products
//! go to the AVX-512 tiles with `x` packed, or, in the AVX2 variant, to the `matrixmultiply`
//! crate (packed panels, cache blocking and a microkernel per ISA; pure Rust, well kept). An `x`
//! with other strides (a transposed view) the tiles pack at every size. A `y` of at most four
//! columns (a classifier's last layer) goes to `sgemm_narrow.rs` instead, whose kernels do not
//! pad it to a tile's width (both variants, the same bits), where `x` has contiguous rows or
//! columns; and an `x` of at most four rows (a vector times a matrix) too, as the transposed
//! product `(yᵀ·xᵀ)ᵀ`, which spares the packed copy of `y`. On aarch64 `matrixmultiply` serves
//! all. The engines take any row and column strides, so transposed and sliced `f32` operands
//! need no copy; other dtypes take the naive kernel.

#![allow(unsafe_code)] // one call into each engine: raw pointers and strides, or target features

use switchyard::{DType, DispatchError, Result, Tensor, rules};

#[cfg(target_arch = "x86_64")]
use super::sgemm::{Microkernel, ReadX, Refused, Strided, sgemm};
#[cfg(target_arch = "x86_64")]
use super::sgemm_narrow::{NARROW, Narrow};
#[cfg(target_arch = "x86_64")]
use super::{sgemm_avx2::Avx2, sgemm_avx512::Avx512};
use crate::cpu::naive::matmul_naive;
use crate::cpu::threads::{self, Grain};

const OP: &str = "matmul";

/// What computes each band of the product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// `matrixmultiply::sgemm`, whose own detection picks its kernel (built without AVX-512, it
    /// never goes above what the AVX2 variant declares).
    MatrixMultiply,
    /// `sgemm::sgemm` with the 6 × 16 AVX2+FMA tile, on a CPU with AVX2 and FMA (checked
    /// before each use: where they are missing, `matrixmultiply` serves instead).
    #[cfg(target_arch = "x86_64")]
    Avx2Tiles,
    /// `sgemm::sgemm` with the 14 × 32 AVX-512F tile, likewise checked.
    #[cfg(target_arch = "x86_64")]
    Avx512Tiles,
    /// `sgemm_narrow`'s kernels, for a `y` of at most `NARROW` columns and an `x` with
    /// contiguous rows or columns (chosen in `gemm`, where the tiles would serve).
    #[cfg(target_arch = "x86_64")]
    Narrow(Narrow),
    /// The same kernels for an `x` of at most `NARROW` rows (a vector or a few times a matrix),
    /// on the transposed product `(yᵀ·xᵀ)ᵀ`, where `y` has contiguous rows or columns: no
    /// packed copy of `y`, which costs as much as such a product.
    #[cfg(target_arch = "x86_64")]
    NarrowRows(Narrow),
}

impl Engine {
    /// Rows of the engine's register tile: bands of the product are multiples of it.
    fn tile_rows(self) -> usize {
        match self {
            Engine::MatrixMultiply => 8,
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2Tiles => Avx2::MR,
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512Tiles => Avx512::MR,
            #[cfg(target_arch = "x86_64")]
            Engine::Narrow(_) | Engine::NarrowRows(_) => 16,
        }
    }
}

/// The largest product (multiply-adds, `m·k·n`) the tiles serve reading `x` in place (AVX2 and
/// AVX-512 alike: the bound was measured with the AVX2 tile). Larger ones pack `x` on the AVX-512
/// tiles (the AVX2 tiles packing `x` ran no faster than `matrixmultiply` at one thread and
/// slower at two, so the AVX2 variant leaves them to `matrixmultiply`). Measured side by side
/// (`benches/peers`, one thread, an AVX2 EPYC without AVX-512): the tiles ran 64² in 7.1 µs
/// against 7.5 and 256² in 372 µs against 407, but 1024² in 26.7 ms against 25.3
/// (`matrixmultiply` packs `x` too, which pays off once `x` outgrows the caches; a strip of `x`
/// read in place there crosses rows 4 KB apart). The bound sits between the measured sizes, at
/// 512³.
///
/// An `x` whose elements along a row are not adjacent (a transposed view, as a weight
/// gradient's `xᵀ·g` reads) the tiles pack at every size: read in place it costs a cache line per
/// element of `k`. Measured on an AVX-512 Xeon (one thread / two), against `matrixmultiply`,
/// which served these before: `hᵀ·g` 64 × 4096 × 64 458 / 231 µs against 443 / 398, 256³
/// 200 / 123 µs against 333 / 210; the AVX2 tiles there 435 / 290 and 320 / 182 µs against 447 /
/// 314 and 340 / 194.
#[cfg(target_arch = "x86_64")]
const TILES_UP_TO: usize = 1 << 27;

/// `x: [m, k]` times `y: [k, n]`.
pub(crate) fn gemm(x: &Tensor, y: &Tensor, engine: Engine) -> Result<Tensor> {
    if x.dim() != 2 || y.dim() != 2 {
        // Other ranks: one matrix product of this engine per matrix of the batch.
        return rules::matmul_batched(x, y, |x, y| gemm(x, y, engine));
    }
    if x.dtype() != DType::F32 || y.dtype() != DType::F32 {
        return matmul_naive(x, y);
    }
    // `len = m·n` is checked: it fits `usize`, and its bytes `isize`.
    let (m, k, n, len) = rules::matmul_dims(x, y, DType::F32)?;
    // Chosen for the whole product, never per band: the bits do not depend on the thread count.
    #[cfg(target_arch = "x86_64")]
    let large = len.saturating_mul(k) > TILES_UP_TO;
    #[cfg(target_arch = "x86_64")]
    let narrow = k > 0 && n <= NARROW && (x.strides()[1] == 1 || x.strides()[0] == 1);
    #[cfg(target_arch = "x86_64")]
    let narrow_rows = k > 0 && m <= NARROW && (y.strides()[1] == 1 || y.strides()[0] == 1);
    #[cfg(target_arch = "x86_64")]
    let engine = match engine {
        Engine::Avx2Tiles if narrow && Narrow::Avx2.detected() => Engine::Narrow(Narrow::Avx2),
        Engine::Avx512Tiles if narrow && Narrow::Avx512.detected() => {
            Engine::Narrow(Narrow::Avx512)
        }
        Engine::Avx2Tiles if narrow_rows && Narrow::Avx2.detected() => {
            Engine::NarrowRows(Narrow::Avx2)
        }
        Engine::Avx512Tiles if narrow_rows && Narrow::Avx512.detected() => {
            Engine::NarrowRows(Narrow::Avx512)
        }
        Engine::Avx2Tiles if !Avx2::detected() => Engine::MatrixMultiply,
        Engine::Avx512Tiles if !Avx512::detected() => Engine::MatrixMultiply,
        Engine::Avx2Tiles if large => Engine::MatrixMultiply,
        engine => engine,
    };
    // Large products (only the AVX-512 tiles take them) and an `x` whose rows are not contiguous
    // pack `x`; the others read it in place.
    #[cfg(target_arch = "x86_64")]
    let read_x = match large || (x.strides()[1] != 1 && k > 1) {
        true => ReadX::Packed,
        false => ReadX::InPlace,
    };
    let (xv, yv) = (x.host::<f32>(OP)?, y.host::<f32>(OP)?);
    let (xs, ys) = (
        &xv.storage()[x.storage_offset()..],
        &yv.storage()[y.storage_offset()..],
    );
    let mut out = Tensor::uninit::<f32>(OP, &[m, n])?;
    if len > 0 {
        let (xr, xc, yr, yc) = (
            x.strides()[0],
            x.strides()[1],
            y.strides()[0],
            y.strides()[1],
        );
        // Parts of whole rows of the result (and of `x`), each its own product; `y` is shared.
        let grain = grain(m, k, n, engine.tile_rows());
        let all_written = match engine {
            Engine::MatrixMultiply => {
                threads::for_each_part(out.as_mut_slice(), grain, |start, part| {
                    let Some((row, rows)) = whole_rows(start, part.len(), n) else {
                        return false;
                    };
                    xs.get(row.saturating_mul(xr)..).is_some_and(|lhs| {
                        matrixmultiply_band(rows, k, n, lhs, (xr, xc), ys, (yr, yc), part)
                    })
                })
            }
            #[cfg(target_arch = "x86_64")]
            Engine::Narrow(isa) => {
                threads::for_each_part(out.as_mut_slice(), grain, |start, part| {
                    let Some((row, rows)) = whole_rows(start, part.len(), n) else {
                        return false;
                    };
                    let y = (ys, yr, yc);
                    match xc == 1 {
                        true => xs
                            .get(row.saturating_mul(xr)..)
                            .is_some_and(|lhs| isa.dot_rows((rows, k, n), (lhs, xr), y, part)),
                        false => xs
                            .get(row..)
                            .is_some_and(|lhs| isa.dot_columns((rows, k, n), (lhs, xc), y, part)),
                    }
                })
            }
            #[cfg(target_arch = "x86_64")]
            Engine::NarrowRows(isa) => narrow_rows_product(
                isa,
                (m, k, n),
                (xs, xr, xc),
                (ys, yr, yc),
                out.as_mut_slice(),
            )?,
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2Tiles => {
                let (x, y) = ((xs, xr, xc), (ys, yr, yc));
                tiles::<Avx2>((m, k, n), x, y, out.as_mut_slice(), read_x, grain)?
            }
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512Tiles => {
                let (x, y) = ((xs, xr, xc), (ys, yr, yc));
                tiles::<Avx512>((m, k, n), x, y, out.as_mut_slice(), read_x, grain)?
            }
        };
        if !all_written {
            return Err(DispatchError::kernel(
                OP,
                "a part of the CPU SIMD matmul was not written: not whole rows of the result, or operands its engine found too short for their shapes (a defect: please report it)",
            ));
        }
        // Every element is now written. `matrixmultiply` and the narrow kernels on `x`'s rows:
        // the parts cover the result's `len` elements, each in exactly one part, and every part
        // returned `true` after initialising all of it (each engine's promise, below and in
        // `sgemm_narrow.rs`); the narrow kernels on the transposed product: `true` after
        // writing every element of `out[..len]` (`narrow_rows_product`); the tiles: `sgemm`
        // returned `Ok`, which it does only after writing every element of `out[..len]` (its
        // promise, in `sgemm.rs`). `len` is `m·n`, the result's element count.
    }
    // SAFETY: with `len > 0`, every element was written (above); with `len == 0` there is none.
    Ok(unsafe { out.assume_init() })
}

/// The first row and the rows of a part of the `n`-column result that starts at element `start`
/// and is `len` long, if it is whole rows.
fn whole_rows(start: usize, len: usize, n: usize) -> Option<(usize, usize)> {
    (start.is_multiple_of(n) && len.is_multiple_of(n)).then(|| (start / n, len / n))
}

/// The product through the register tiles of `K` (`sgemm.rs`), in bands of rows cut by
/// `grain`: whether every element of `out[..m·n]` was written, or the error of a packing buffer
/// that could not be allocated.
#[cfg(target_arch = "x86_64")]
fn tiles<K: Microkernel>(
    (m, k, n): (usize, usize, usize),
    (xs, xr, xc): (&[f32], usize, usize),
    (ys, yr, yc): (&[f32], usize, usize),
    out: &mut [std::mem::MaybeUninit<f32>],
    read_x: ReadX,
    grain: Grain,
) -> Result<bool> {
    let strided = |elements, row_stride, col_stride| Strided {
        elements,
        row_stride,
        col_stride,
    };
    let (x, y) = (strided(xs, xr, xc), strided(ys, yr, yc));
    let Some(out) = out.get_mut(..m * n) else {
        return Ok(false);
    };
    match sgemm::<K>((m, k, n), x, y, out, read_x, grain) {
        Ok(()) => Ok(true),
        Err(Refused::OutOfMemory { bytes }) => Err(DispatchError::out_of_memory(OP, bytes)),
        Err(Refused::Layout | Refused::Cpu) => Ok(false),
    }
}

/// `out[..m·n]` = `x · y` for `m ≤ NARROW` as `(yᵀ·xᵀ)ᵀ` on `isa`'s narrow kernels: `yᵀ` has
/// contiguous columns where `y` has contiguous rows (and the reverse), `xᵀ` is `m` columns wide.
/// Whether every element was written, or the error of a buffer that could not be allocated.
#[cfg(target_arch = "x86_64")]
fn narrow_rows_product(
    isa: Narrow,
    (m, k, n): (usize, usize, usize),
    (xs, xr, xc): (&[f32], usize, usize),
    (ys, yr, yc): (&[f32], usize, usize),
    out: &mut [std::mem::MaybeUninit<f32>],
) -> Result<bool> {
    let Some(out) = out.get_mut(..m * n) else {
        return Ok(false);
    };
    // `(yᵀ·xᵀ)` is `n × m`, row-major; `m ≤ NARROW`, so it is at most 4 times `n` elements
    // (`m·n` is the result's length, checked). The kernel writes every one.
    let mut transposed = Vec::new();
    if transposed.try_reserve_exact(n * m).is_err() {
        return Err(DispatchError::out_of_memory(OP, n * m * size_of::<f32>()));
    }
    transposed.resize(n * m, std::mem::MaybeUninit::uninit());
    let x_t = (xs, xc, xr);
    let written = match yc == 1 {
        // Column `p` of `yᵀ` is row `p` of `y`: contiguous.
        true => isa.dot_columns((n, k, m), (ys, yr), x_t, &mut transposed),
        false => isa.dot_rows((n, k, m), (ys, yc), x_t, &mut transposed),
    };
    if !written {
        return Ok(false);
    }
    for (j, column) in transposed.chunks_exact(m).enumerate() {
        for (i, &value) in column.iter().enumerate() {
            out[i * n + j] = value;
        }
    }
    Ok(true)
}

/// One band through `matrixmultiply::sgemm`: `rows` rows of the result from `lhs` (the band's
/// first row of `x` on), every element written. `false` never: the signature matches the other
/// engine's.
#[allow(clippy::too_many_arguments)]
fn matrixmultiply_band(
    rows: usize,
    k: usize,
    n: usize,
    lhs: &[f32],
    (xr, xc): (usize, usize),
    ys: &[f32],
    (yr, yc): (usize, usize),
    part: &mut [std::mem::MaybeUninit<f32>],
) -> bool {
    // Each stride is at most a storage's element count, which fits `isize` (its bytes do).
    let stride = |s: usize| isize::try_from(s).unwrap_or(isize::MAX);
    // SAFETY: every index sgemm forms into `lhs` is `i·xr + p·xc` for `i < rows`, `p < k`, that
    // is the element `(row + i, p)` of the view `x` less `row·xr` (the caller sliced `lhs` from
    // the band's first row); the tensor invariant puts every element of a view inside its
    // storage from the view's offset on, and the band's rows are rows of the `m`-row result:
    // inside `lhs`. Likewise every index into `ys` is an element of the view `y`. `part` is
    // `rows·n` writable values with row stride n (whole rows, checked by the caller),
    // exclusively borrowed, so it overlaps neither input. With beta = 0 sgemm never reads C and
    // writes every one of its elements (with k = 0 it writes zeros).
    unsafe {
        matrixmultiply::sgemm(
            rows,
            k,
            n,
            1.0,
            lhs.as_ptr(),
            stride(xr),
            stride(xc),
            ys.as_ptr(),
            stride(yr),
            stride(yc),
            0.0,
            part.as_mut_ptr().cast::<f32>(),
            stride(n),
            1,
        );
    }
    true
}

/// How a product splits across threads: below 2²¹ multiply-adds (a 128³ product) it runs on
/// the calling thread; above, in parts of whole bands of `tile_rows` rows (the engine's register
/// tile) of at least 2¹⁹ multiply-adds each, one per thread: every part packs all of `y` for
/// itself (the tiles and `matrixmultiply` alike), so more parts copy more. Measured at two
/// threads on an AVX-512 Xeon, the tiles: one part per thread ran 1024³ in 7.17–7.27 ms against
/// 7.32–7.53 with two and 8.29–8.33 with four, 512³ in 0.91–0.92 ms against 0.97–1.02 and
/// 1.01–1.05.
fn grain(m: usize, k: usize, n: usize, tile_rows: usize) -> Grain {
    const PARALLEL_FROM: usize = 1 << 21;
    const MIN_PART: usize = 1 << 19;
    let per_row = k.saturating_mul(n).max(1);
    if m.saturating_mul(per_row) < PARALLEL_FROM {
        return Grain {
            parallel_from: usize::MAX,
            multiple: 1,
            min_part: 1,
            parts_per_thread: 1,
        };
    }
    Grain {
        parallel_from: 0,
        multiple: n.saturating_mul(tile_rows),
        min_part: MIN_PART.div_ceil(per_row).saturating_mul(n),
        parts_per_thread: 1,
    }
}
