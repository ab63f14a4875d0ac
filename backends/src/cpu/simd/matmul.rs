//! `matmul` through the `matrixmultiply` crate: packed panels, cache blocking and a register-tiled
//! microkernel per ISA. Measured here at 83 GFLOP/s (256²) and 88 GFLOP/s (1024²) on one core,
//! 5.6–7.9× the naive loop (README's table); a hand-written blocked kernel would have to match
//! that to earn its code, so none was written. The crate is small, pure Rust and well kept. It
//! takes any row and column strides, so transposed and sliced `f32` operands need no copy; other
//! dtypes take the naive kernel.

#![allow(unsafe_code)] // one call to `sgemm`, which takes raw pointers and strides

use switchyard::{DType, DispatchError, Result, Tensor, host_buffer, rules};

use crate::cpu::naive::matmul_naive;
use crate::cpu::threads::{self, Grain};

/// `x: [m, k]` times `y: [k, n]`.
pub(crate) fn gemm(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    const OP: &str = "matmul";
    if x.dtype() != DType::F32 || y.dtype() != DType::F32 {
        return matmul_naive(x, y);
    }
    // `len = m·n` is checked: it fits `usize`, and its bytes `isize`.
    let (m, k, n, len) = rules::matmul_dims(x, y, DType::F32)?;
    let (xv, yv) = (x.host::<f32>(OP)?, y.host::<f32>(OP)?);
    let (xs, ys) = (
        &xv.storage()[x.storage_offset()..],
        &yv.storage()[y.storage_offset()..],
    );
    let mut out = host_buffer::<f32>(OP, len)?;
    if len > 0 {
        // Each stride is at most a storage's element count, which fits `isize` (its bytes do).
        let stride = |s: usize| isize::try_from(s).unwrap_or(isize::MAX);
        let (xr, xc, yr, yc) = (
            x.strides()[0],
            x.strides()[1],
            y.strides()[0],
            y.strides()[1],
        );
        // Parts of whole rows of the result (and of `x`), each its own sgemm; `y` is shared.
        let all_written =
            threads::for_each_part(&mut out.spare()[..len], grain(m, k, n), |start, part| {
                let (row, rows) = (start / n, part.len() / n);
                let Some(lhs) = xs.get(row.saturating_mul(xr)..) else {
                    return false;
                };
                if start % n != 0 || part.len() % n != 0 {
                    return false;
                }
                // SAFETY: every index sgemm forms into `lhs` is `i·xr + p·xc` for `i < rows`,
                // `p < k`, that is the element `(row + i, p)` of the view `x` less `row·xr`; the
                // tensor invariant puts every element of a view inside its storage from the view's
                // offset on, so inside `xs`, and `row + i < m` (the part is rows `row..row + rows` of
                // the m·n result): inside `lhs`. Likewise every index into `ys` is an element of the
                // view `y`. `part` is `rows·n` writable values with row stride n (whole rows, checked
                // above), exclusively borrowed, so it overlaps neither input. With beta = 0 sgemm
                // never reads C and writes every one of its elements (with k = 0 it writes zeros).
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
            });
        if !all_written {
            return Err(DispatchError::kernel(
                OP,
                "a part of the CPU SIMD matmul was not whole rows of the result (a defect: please report it)",
            ));
        }
        // SAFETY: the parts cover the result's `len` elements, each in exactly one part, and
        // every part returned `true` after sgemm initialised all of it (above); `len` is the
        // buffer's capacity.
        unsafe { out.set_len(len) };
    }
    Tensor::from_host(out, &[m, n])
}

/// How a product splits across threads: below 2²¹ multiply-adds (a 128³ product) it runs on
/// the calling thread; above, in parts of whole 8-row bands (the AVX2 and NEON kernels' row
/// tile) of at least 2¹⁹ multiply-adds each, two per thread: each part packs all of `y` again,
/// so parts are few and large (at 1024², four parts packing `y` ran 1.35× one thread, two
/// ran …).
fn grain(m: usize, k: usize, n: usize) -> Grain {
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
        multiple: n.saturating_mul(8),
        min_part: MIN_PART.div_ceil(per_row).saturating_mul(n),
        parts_per_thread: 2,
    }
}
