//! The CPU SIMD backend: vectorised kernels at `CpuSimd`, one file per instruction set holding
//! only its lane helpers, and one template (`template.rs`) that makes them kernels. Each
//! kernel names the CPU features it needs (`#[kernel(…, cpu = "avx2,fma")]`); when an op's table
//! is built, the best variant the running CPU supports is installed, and an op (or a CPU) without
//! one falls through to the naive backend, each kernel's scalar twin. On wasm32 the `simd128`
//! kernels are compiled only into a module built with `-C target-feature=+simd128` (WebAssembly
//! has no runtime detection); a module built without it has no SIMD kernels, and the naive
//! backend serves (`switchyard::dump()`'s first line says so).
//!
//! Every kernel here serves `f32` only and says so (`dtypes = "f32"`): a call whose promoted
//! dtype is another (an `f64` add, an `i32` sum, `f32` mixed with `f64`) falls through to the
//! naive backend in the op's table, with no code here. An `f32` call on views or broadcast
//! operands reaches the kernel, which hands it to its naive twin, except a *row broadcast* of
//! two contiguous operands, one operand's shape (leading 1s aside) being the other's trailing
//! dims (a bias over a batch, `[N, C] + [C]`; a scalar, `[]` or `[1]`, with any tensor): the
//! binary kernels run it row by row with their vectors (`template::zip_rows`; a row shorter
//! than 16 elements repeated into one of at least 256 first), the same arithmetic per element.
//!
//! | op | x86_64 AVX2+FMA | x86_64 AVX-512F | aarch64 NEON | wasm32 `simd128` |
//! |---|---|---|---|---|
//! | `add` `sub` `mul` `div` `neg` `relu` `relu_backward` | 8 lanes | 16 lanes | 4 lanes | 4 lanes |
//! | `exp` `log` `tanh` `sigmoid` | 8 lanes | 16 lanes | 4 lanes | — (naive: see `wasm_simd128.rs`) |
//! | `sum` `mean` | 32 `f32` accumulators (4 vectors), read in 32-byte-aligned windows | 32 (2 vectors), 64-byte-aligned windows | 32 (8 vectors) | 32 (8 vectors) |
//! | `sum_dim` `mean_dim` over leading dims (`column_sums.rs`) | 32 columns' `f64` sums in 8 vectors | 64 in 8 vectors | 16 in 8 vectors | — |
//! | `matmul` | 6 × 16 FMA tiles (`sgemm_avx2.rs`) to 512³ (a transposed `x` packed), else `matrixmultiply`; `y` of ≤ 4 columns or `x` of ≤ 4 rows: `sgemm_narrow.rs` | 14 × 32 FMA tiles (`sgemm_avx512.rs`), the same bits to 512³; larger products too, `x` packed; `y` of ≤ 4 columns or `x` of ≤ 4 rows: `sgemm_narrow.rs`, the same bits | `matrixmultiply` (NEON) | `matrixmultiply` (`simd128`) |
//! | `full` | — | — | — | — |
//!
//! The `bf16` and `f16` `matmul` (`matmul_half.rs`: the `f32` product of the widened operands,
//! through the op's own `f32` variant) is compiled for x86_64 and aarch64 only: on wasm32 the
//! naive kernel serves it.
//!
//! Large calls run on the CPU backends' worker threads ([`crate::cpu::threads`]; wasm32 has
//! none, the calling thread runs everything): elementwise ops from 64K elements (`exp`, `log`,
//! `tanh`, `sigmoid` from 16K), `sum`/`mean` from 128K, `matmul` from 2²¹ multiply-adds (a 128³
//! product). The results are the same bits at every thread count.
//!
//! What the variants promise, relative to the naive backend (tested in `tests/tests/simd_*.rs`,
//! `tests/tests/cpu_threads.rs`):
//! - **Elementwise** `add` `sub` `mul` `div` `neg` `relu` are exactly equal: the same IEEE
//!   operation per element (NaN-aware: a NaN result is a NaN, whatever its payload);
//!   `relu_backward` equals the op's body (`grad · 1.0` or `grad · 0.0`, as `mul` of the
//!   converted `gt` computes it), which serves everything but two contiguous `f32` tensors of
//!   one shape (there is no naive kernel: the kernel redispatches below `CpuSimd`).
//! - **`exp`, `log`, `tanh`, `sigmoid`** compute in `f32` (range reductions, short polynomials,
//!   the critical sums carried as pairs of `f32`; `math_f32.rs` has the algorithms and their
//!   error budgets) and are within **1 ulp of the exact value** for every `f32` input, tested
//!   exhaustively (`tests/tests/ulp_exhaustive.rs`): the worst errors measured are 0.88 ulp
//!   (`exp`), 0.59 (`log`), 0.74 (`tanh`) and 0.78 (`sigmoid`, at subnormal results). So they are within 1 ulp of the naive backend, which is also within 1 ulp of the exact value
//!   (the C library's `expf` and `logf`; `tanh` and `sigmoid` computed in `f64` and rounded once),
//!   and equal to it on most inputs. Special values match it exactly: NaN (quieted), ±inf, ±0,
//!   the overflow and underflow thresholds, subnormal inputs and results. Every ISA computes the
//!   same steps with the same roundings (AVX2's `exp` takes an exact shortcut where the result
//!   is normal, `math_f32`): the same bits (`tests/tests/simd_differential.rs` checks every
//!   variant against hashes of the AVX2 results). wasm32 has no kernels for them: the
//!   algorithms need fused multiply-adds, which wasm SIMD lacks, and exact ones computed in
//!   `f64` lanes made them slower than the naive kernels.
//! - **`sum` and `mean`** cut the input into blocks of 1024 elements. Within a block, 32 `f32`
//!   accumulators each add every 32nd element (at most 32 each); each then goes to `f64`, onto
//!   its lane's sum, and the 32 lane sums of each superblock of 64K elements add up in a fixed
//!   tree; the superblocks' sums add up in `f64` in order. So the result is within **1 ulp of
//!   the result plus 2⁻¹⁹·Σ|xᵢ|** of the exact sum (each accumulator errs by at most `31·2⁻²⁴`
//!   of its terms' magnitudes; the `f64` part adds `n·2⁻⁵³·Σ|xᵢ|`, negligible below 2⁴⁰
//!   elements), independent of `n`: a plain `f32` loop errs by up to `n/lanes·2⁻²⁴·Σ|xᵢ|`. A
//!   superblock whose `f32` accumulators overflow where `f64` would not (or that holds an
//!   infinity or NaN) is summed again in `f64`. Blocks, superblocks and the order are fixed by
//!   `n` alone: every ISA and every thread count give the same bits, at every alignment of the
//!   input (an x86 variant reads an input that starts off its vectors' boundary in aligned
//!   windows, the lanes rotated back once per block: the same additions). (The naive backend
//!   accumulates in `f64` throughout: within half an ulp but for `n·2⁻⁵³·Σ|xᵢ|`.)
//! - **`sum_dim` and `mean_dim`** over leading dimensions of a contiguous tensor (not on wasm32) are
//!   exactly equal: each column added in `f64` from `+0`, row after row, as the naive kernel adds
//!   it; every other call is the naive kernel's.
//! - **`matmul`** uses FMA and another summation order: within `k`·2⁻²³·Σ|aᵢₚ·bₚⱼ| per element.
//!   Threads take bands of whole rows, each computed as on one thread: the same bits.
//! - **`full`** has no SIMD kernel: a fill is a `memset`-like loop the compiler already
//!   vectorises, so `CpuSimd` falls through to the naive kernel.

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod column_sums;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod math_f32;
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod matmul;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod matmul_half;
#[cfg(target_arch = "aarch64")]
pub mod neon;
#[cfg(target_arch = "x86_64")]
mod sgemm;
#[cfg(target_arch = "x86_64")]
mod sgemm_avx2;
#[cfg(target_arch = "x86_64")]
mod sgemm_avx512;
#[cfg(target_arch = "x86_64")]
mod sgemm_narrow;
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod template;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub mod wasm_simd128;
