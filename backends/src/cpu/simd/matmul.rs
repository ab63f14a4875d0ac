//! `matmul` through the `matrixmultiply` crate: packed panels, cache blocking and a register-tiled
//! microkernel per ISA. Measured here at 83 GFLOP/s (256²) and 88 GFLOP/s (1024²) on one core,
//! 5.6–7.9× the naive loop (README's table); a hand-written blocked kernel would have to match
//! that to earn its code, so none was written. The crate is small, pure Rust and well kept.

#![allow(unsafe_code)] // one call to `sgemm`, which takes raw pointers and strides

use switchyard::{DispatchError, Result, Tensor};

use crate::cpu::naive::{host, matmul_dims};

/// `x: [m, k]` times `y: [k, n]`, row-major.
pub(crate) fn gemm(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    // `len = m·n` is checked: it fits `usize`, and its bytes `isize`.
    let (m, k, n, len) = matmul_dims(x, y)?;
    let (xs, ys) = (host("matmul", x)?, host("matmul", y)?);
    // A tensor holds exactly the product of its shape; checked here rather than trusted, since
    // the call below indexes raw pointers with these sizes.
    if Some(xs.len()) != m.checked_mul(k) || Some(ys.len()) != k.checked_mul(n) {
        return Err(DispatchError::kernel(
            "matmul",
            format!(
                "operands hold {} and {} values for shapes [{m}, {k}] and [{k}, {n}]",
                xs.len(),
                ys.len()
            ),
        ));
    }
    let mut out = switchyard::cpu_buffer("matmul", len)?;
    if len > 0 {
        // Each stride is at most a tensor's element count, which fits `isize` (its bytes do).
        let stride = |s: usize| isize::try_from(s).expect("a tensor's element count fits isize");
        // SAFETY: `xs` holds m·k values with row stride k, `ys` k·n with row stride n (both
        // checked above), and `out` has capacity for m·n = len values with row stride n (len is
        // m·n, computed with checked arithmetic), so every index sgemm forms is in bounds; `out`
        // is exclusively borrowed and overlaps neither input. With beta = 0 sgemm never reads C
        // and writes every one of its m·n elements (with k = 0 it writes zeros), so the
        // uninitialized capacity it receives ends up fully initialized.
        unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                xs.as_ptr(),
                stride(k),
                1,
                ys.as_ptr(),
                stride(n),
                1,
                0.0,
                out.as_mut_ptr(),
                stride(n),
                1,
            );
        }
        // SAFETY: sgemm initialized all `len` elements (above), which are within the capacity.
        unsafe { out.set_len(len) };
    }
    Tensor::from_vec(out, &[m, n])
}
