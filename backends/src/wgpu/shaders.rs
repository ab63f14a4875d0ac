//! The standard ops' kernels: `static`s of the public [`Kernel`] type, as any crate declares its
//! own, over the WGSL files in `shaders/` (some with a shared head or helpers prepended: WGSL has
//! no includes). Modules with the same sources are compiled once for all their entry points.
//!
//! Elementwise ops have two kernels each: the plain one (`binary.wgsl`, `unary.wgsl`) for operands
//! that are contiguous from the start of their buffer and of the output's shape, the fast and
//! common case; and a strided one (`strided_*.wgsl`, after [`PRELUDE`]) for views and
//! broadcasting, which reads each operand through its offset and strides.
//!
//! Kernels that move or select values without computing on them (gathers, `copy_` of `bool` and
//! `i64`, comparisons, `where`, conversions) bind their arrays as `array<u32>` (the `words_*`,
//! `compare`, `where` shaders): a value's bits go through untouched (NaN payloads, `-0.0`,
//! subnormals on GPUs that flush them in float arithmetic), and `bool` and `i64` tensors, which
//! are 32-bit words on the GPU (see `storage.rs`), share them.

use super::pipeline::{Kernel, PRELUDE};

/// Invocations per workgroup of `reduce.wgsl`.
pub(super) const REDUCE_WORKGROUP: u64 = 256;
/// Elements each invocation of `reduce.wgsl` adds before the workgroup's tree.
pub(super) const REDUCE_PER_THREAD: u64 = 8;
/// Side of the square tile of `matmul.wgsl`.
pub(super) const MATMUL_TILE: u64 = 16;
/// Invocations per workgroup of the barrier-free kernels (`matmul_direct`, the short-row
/// reductions): one output each.
pub(super) const DIRECT_WORKGROUP: u64 = 64;
/// The longest row the short-row reductions fold (one invocation per row); longer rows take a
/// workgroup each.
pub(super) const SHORT_ROW: usize = 256;
/// The most multiply-adds (`m·n·k`) `matmul_direct` computes; larger products are tiled. On a
/// CPU adapter (a browser's software WebGPU, lavapipe, llvmpipe) the tiles' barriers make the
/// tiled kernel several times slower than the direct one (benches/README.md, "On WebGPU"); on a
/// GPU, the tiles' saved loads matter for larger products.
pub(super) const DIRECT_MATMUL_MACS: usize = 1 << 27;

/// `binary.wgsl`: the four arithmetic ops of two contiguous operands of one shape.
const BINARY: &[&str] = &[include_str!("shaders/binary.wgsl")];
pub(super) static ADD: Kernel = Kernel::new(BINARY, "add", 2);
pub(super) static SUB: Kernel = Kernel::new(BINARY, "sub", 2);
pub(super) static MUL: Kernel = Kernel::new(BINARY, "mul", 2);
pub(super) static DIV: Kernel = Kernel::new(BINARY, "div", 2);

/// `unary.wgsl` (after `math.wgsl`): the math of one contiguous operand.
const UNARY: &[&str] = &[
    include_str!("shaders/math.wgsl"),
    include_str!("shaders/unary.wgsl"),
];
pub(super) static NEG: Kernel = Kernel::new(UNARY, "neg", 1);
pub(super) static RELU: Kernel = Kernel::new(UNARY, "relu", 1);
pub(super) static EXP: Kernel = Kernel::new(UNARY, "exponential", 1);
pub(super) static LOG: Kernel = Kernel::new(UNARY, "logarithm", 1);
pub(super) static TANH: Kernel = Kernel::new(UNARY, "hyperbolic_tangent", 1);
pub(super) static SIGMOID: Kernel = Kernel::new(UNARY, "sigmoid", 1);
pub(super) static SQRT: Kernel = Kernel::new(UNARY, "square_root", 1);

/// `fill.wgsl`: `full` of `f32`.
const FILL: &[&str] = &[include_str!("shaders/fill.wgsl")];
pub(super) static FULL: Kernel = Kernel::new(FILL, "full", 0);

/// `reduce.wgsl`: one pass of the whole-tensor sum (a partial sum per workgroup).
const REDUCE: &[&str] = &[include_str!("shaders/reduce.wgsl")];
pub(super) static SUM_PASS: Kernel = Kernel::new(REDUCE, "sum_pass", 1);

/// `matmul.wgsl`: the product of two strided matrices, tiled, or direct for small products.
const MATMUL_WGSL: &[&str] = &[include_str!("shaders/matmul.wgsl")];
pub(super) static MATMUL: Kernel = Kernel::new(MATMUL_WGSL, "matmul", 2);
pub(super) static MATMUL_DIRECT: Kernel = Kernel::new(MATMUL_WGSL, "matmul_direct", 2);

/// The strided twins of `UNARY`'s kernels, and the `f32` gather and scatter of views.
const STRIDED_UNARY: &[&str] = &[
    PRELUDE,
    include_str!("shaders/math.wgsl"),
    include_str!("shaders/strided_unary.wgsl"),
];
pub(super) static NEG_STRIDED: Kernel = Kernel::new(STRIDED_UNARY, "neg_strided", 1);
pub(super) static RELU_STRIDED: Kernel = Kernel::new(STRIDED_UNARY, "relu_strided", 1);
pub(super) static EXP_STRIDED: Kernel = Kernel::new(STRIDED_UNARY, "exp_strided", 1);
pub(super) static LOG_STRIDED: Kernel = Kernel::new(STRIDED_UNARY, "log_strided", 1);
pub(super) static TANH_STRIDED: Kernel = Kernel::new(STRIDED_UNARY, "tanh_strided", 1);
pub(super) static SIGMOID_STRIDED: Kernel = Kernel::new(STRIDED_UNARY, "sigmoid_strided", 1);
pub(super) static SQRT_STRIDED: Kernel = Kernel::new(STRIDED_UNARY, "sqrt_strided", 1);
pub(super) static COPY_STRIDED: Kernel = Kernel::new(STRIDED_UNARY, "copy_strided", 1);
pub(super) static SCATTER_STRIDED: Kernel = Kernel::new(STRIDED_UNARY, "scatter_strided", 1);

/// The strided twins of `BINARY`'s kernels (broadcasting is stride 0).
const STRIDED_BINARY: &[&str] = &[PRELUDE, include_str!("shaders/strided_binary.wgsl")];
pub(super) static ADD_STRIDED: Kernel = Kernel::new(STRIDED_BINARY, "add_strided", 2);
pub(super) static SUB_STRIDED: Kernel = Kernel::new(STRIDED_BINARY, "sub_strided", 2);
pub(super) static MUL_STRIDED: Kernel = Kernel::new(STRIDED_BINARY, "mul_strided", 2);
pub(super) static DIV_STRIDED: Kernel = Kernel::new(STRIDED_BINARY, "div_strided", 2);

/// `div_rounded` of `f32` operands (`params.k`: 0 `Trunc`, 1 `Floor`), in any strided layout:
/// IEEE's operations on the values' bits in integer arithmetic, so the CPU's answer bit for bit.
const DIV_ROUNDED_WGSL: &[&str] = &[PRELUDE, include_str!("shaders/div_rounded.wgsl")];
pub(super) static DIV_ROUNDED_F32: Kernel = Kernel::new(DIV_ROUNDED_WGSL, "div_rounded_f32", 2);

/// Gathers, scatters and `to_dtype` conversions of 32-bit words (`bool`, `i64`).
const WORDS_UNARY: &[&str] = &[
    PRELUDE,
    include_str!("shaders/words.wgsl"),
    include_str!("shaders/words_unary.wgsl"),
];
pub(super) static GATHER_WORDS: Kernel = Kernel::new(WORDS_UNARY, "gather_words", 1);
pub(super) static SCATTER_WORDS: Kernel = Kernel::new(WORDS_UNARY, "scatter_words", 1);
pub(super) static F32_TO_BOOL: Kernel = Kernel::new(WORDS_UNARY, "f32_to_bool", 1);
pub(super) static BOOL_TO_F32: Kernel = Kernel::new(WORDS_UNARY, "bool_to_f32", 1);
pub(super) static BOOL_TO_I64: Kernel = Kernel::new(WORDS_UNARY, "bool_to_i64", 1);
pub(super) static I64_TO_BOOL: Kernel = Kernel::new(WORDS_UNARY, "i64_to_bool", 1);
pub(super) static F32_TO_I64: Kernel = Kernel::new(WORDS_UNARY, "f32_to_i64", 1);
pub(super) static I64_TO_F32: Kernel = Kernel::new(WORDS_UNARY, "i64_to_f32", 1);

/// The comparisons (`params.k` picks which) of two operands of one dtype.
const COMPARE: &[&str] = &[
    PRELUDE,
    include_str!("shaders/words.wgsl"),
    include_str!("shaders/compare.wgsl"),
];
pub(super) static COMPARE_F32: Kernel = Kernel::new(COMPARE, "compare_f32", 2);
pub(super) static COMPARE_BOOL: Kernel = Kernel::new(COMPARE, "compare_bool", 2);
pub(super) static COMPARE_I64: Kernel = Kernel::new(COMPARE, "compare_i64", 2);

/// `where`: a `bool` condition picks each word from one of two values.
const WHERE: &[&str] = &[PRELUDE, include_str!("shaders/where.wgsl")];
pub(super) static WHERE_WORDS: Kernel = Kernel::new(WHERE, "where_words", 3);

/// Reductions of each row of a contiguous `[rows, n]` matrix.
const REDUCE_DIM: &[&str] = &[
    include_str!("shaders/words.wgsl"),
    include_str!("shaders/reduce_dim.wgsl"),
];
pub(super) static SUM_ROWS: Kernel = Kernel::new(REDUCE_DIM, "sum_rows", 1);
pub(super) static MAX_ROWS: Kernel = Kernel::new(REDUCE_DIM, "max_rows", 1);
pub(super) static ARGMAX_ROWS: Kernel = Kernel::new(REDUCE_DIM, "argmax_rows", 1);
pub(super) static SUM_SHORT_ROWS: Kernel = Kernel::new(REDUCE_DIM, "sum_short_rows", 1);
pub(super) static MAX_SHORT_ROWS: Kernel = Kernel::new(REDUCE_DIM, "max_short_rows", 1);
pub(super) static ARGMAX_SHORT_ROWS: Kernel = Kernel::new(REDUCE_DIM, "argmax_short_rows", 1);
/// Each row reduction's two kernels, as `reduce_rows` picks between them: a workgroup per row,
/// and one invocation per row of at most [`SHORT_ROW`] elements.
pub(super) const SUM_ROW_KERNELS: [&Kernel; 2] = [&SUM_ROWS, &SUM_SHORT_ROWS];
pub(super) const MAX_ROW_KERNELS: [&Kernel; 2] = [&MAX_ROWS, &MAX_SHORT_ROWS];
pub(super) const ARGMAX_ROW_KERNELS: [&Kernel; 2] = [&ARGMAX_ROWS, &ARGMAX_SHORT_ROWS];

/// `arange`, `rand`, `randn`, and `full` of `bool` and `i64` (one or two words repeated).
const FACTORIES: &[&str] = &[
    include_str!("shaders/math.wgsl"),
    include_str!("shaders/words.wgsl"),
    include_str!("shaders/factories.wgsl"),
];
pub(super) static ARANGE_F32: Kernel = Kernel::new(FACTORIES, "arange_f32", 0);
pub(super) static ARANGE_I64: Kernel = Kernel::new(FACTORIES, "arange_i64", 0);
pub(super) static RAND_F32: Kernel = Kernel::new(FACTORIES, "rand_f32", 0);
pub(super) static RANDN_F32: Kernel = Kernel::new(FACTORIES, "randn_f32", 0);
pub(super) static FILL_WORDS: Kernel = Kernel::new(FACTORIES, "fill_words", 0);
