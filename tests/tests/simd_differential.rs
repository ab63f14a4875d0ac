//! Every SIMD variant this CPU runs, called directly and through dispatch, against the naive
//! backend on deterministic random data with special values: elementwise ops exactly equal,
//! `exp`, `log`, `tanh` and `sigmoid` within 1 ulp (every input: `ulp_exhaustive.rs`),
//! `sum`/`mean` and `matmul` within their stated tolerances. Runs on x86_64 (AVX2, AVX-512),
//! aarch64 (NEON) and wasm32 built with `simd128` (`.ci/wasm`; no transcendental kernels
//! there). The transcendental kernels' bits across instruction sets:
//! `transcendental_bits_are_the_same_on_every_isa`.

use switchyard::DTypeColumn;
use switchyard::cpu::{CpuFeatures, CpuPolicy};
use switchyard::ops::{
    add, contiguous, div, exp, log, matmul, mean, mul, narrow, neg, relu, relu_backward, sigmoid,
    sub, sum, tanh, try_add, try_div, try_exp, try_log, try_matmul, try_mean, try_mul, try_neg,
    try_relu, try_relu_backward, try_sigmoid, try_sub, try_sum, try_tanh,
};
use switchyard::{DispatchKey, DispatchKeySet, Result, SlotOrigin, Tensor};
use switchyard_tests::simd_check::{
    SIZES, assert_exact, assert_sum_close, data, emulated, same, simd_ops, tensor, ulps,
};

type Binary = fn(&Tensor, &Tensor) -> Result<Tensor>;
type Unary = fn(&Tensor) -> Result<Tensor>;
type NaiveBinary = fn(DispatchKeySet, &Tensor, &Tensor) -> Result<Tensor>;
type NaiveUnary = fn(DispatchKeySet, &Tensor) -> Result<Tensor>;

const NAIVE: DispatchKeySet = DispatchKeySet::CPU_NAIVE;

/// The arithmetic binary ops: their naive kernels (called below their keys) and their
/// dispatched calls.
const ARITHMETIC: [(&str, NaiveBinary, Binary); 4] = [
    ("add", add::redispatch, try_add),
    ("sub", sub::redispatch, try_sub),
    ("mul", mul::redispatch, try_mul),
    ("div", div::redispatch, try_div),
];

/// The variants among `$f => needs` whose features this CPU has, as callable function pointers.
#[cfg_attr(target_arch = "wasm32", allow(unused_macros))] // wasm kernels are plain functions
macro_rules! runnable {
    (Binary, |x, y|; $($f:path => $needs:expr),* $(,)?) => {{
        let mut found: Vec<(&'static str, Binary)> = Vec::new();
        $(if switchyard::cpu::detected().contains($needs) {
            // SAFETY: the CPU has every feature this variant enables (checked just above).
            found.push((stringify!($f), |x, y| unsafe { $f(x, y) }));
        })*
        found
    }};
    // A kernel that takes the call's keys first: given a CPU call's (it redispatches below its
    // own key with them, where the op's body serves what the SIMD path does not).
    (KeyedBinary, |x, y|; $($f:path => $needs:expr),* $(,)?) => {{
        let mut found: Vec<(&'static str, Binary)> = Vec::new();
        $(if switchyard::cpu::detected().contains($needs) {
            // SAFETY: the CPU has every feature this variant enables (checked just above).
            found.push((stringify!($f), |x, y| unsafe { $f(DispatchKeySet::CPU, x, y) }));
        })*
        found
    }};
    (Unary, |x|; $($f:path => $needs:expr),* $(,)?) => {{
        let mut found: Vec<(&'static str, Unary)> = Vec::new();
        $(if switchyard::cpu::detected().contains($needs) {
            // SAFETY: the CPU has every feature this variant enables (checked just above).
            found.push((stringify!($f), |x| unsafe { $f(x) }));
        })*
        found
    }};
}

#[cfg(target_arch = "x86_64")]
mod isa {
    use super::*;
    use switchyard_backends::cpu::simd::{avx2::*, avx512::*};

    const AVX2: CpuFeatures = CpuFeatures::AVX2.union(CpuFeatures::FMA);
    const AVX512: CpuFeatures = CpuFeatures::AVX512F;

    pub fn binary(op: &str) -> Vec<(&'static str, Binary)> {
        match op {
            "add" => runnable!(Binary, |x, y|; add_avx2 => AVX2, add_avx512 => AVX512),
            "sub" => runnable!(Binary, |x, y|; sub_avx2 => AVX2, sub_avx512 => AVX512),
            "mul" => runnable!(Binary, |x, y|; mul_avx2 => AVX2, mul_avx512 => AVX512),
            "div" => runnable!(Binary, |x, y|; div_avx2 => AVX2, div_avx512 => AVX512),
            "relu_backward" => runnable!(KeyedBinary, |x, y|;
                relu_backward_avx2 => AVX2, relu_backward_avx512 => AVX512),
            // Not `#[target_feature]` functions: callable without `unsafe`.
            "matmul" => {
                let mut found: Vec<(&'static str, Binary)> = Vec::new();
                if switchyard::cpu::detected().contains(AVX2) {
                    found.push(("matmul_avx2", matmul_avx2));
                }
                if switchyard::cpu::detected().contains(AVX512) {
                    found.push(("matmul_avx512", matmul_avx512));
                }
                found
            }
            _ => Vec::new(),
        }
    }

    pub fn unary(op: &str) -> Vec<(&'static str, Unary)> {
        match op {
            "neg" => runnable!(Unary, |x|; neg_avx2 => AVX2, neg_avx512 => AVX512),
            "relu" => runnable!(Unary, |x|; relu_avx2 => AVX2, relu_avx512 => AVX512),
            "exp" => runnable!(Unary, |x|; exp_avx2 => AVX2, exp_avx512 => AVX512),
            "log" => runnable!(Unary, |x|; log_avx2 => AVX2, log_avx512 => AVX512),
            "tanh" => runnable!(Unary, |x|; tanh_avx2 => AVX2, tanh_avx512 => AVX512),
            "sigmoid" => runnable!(Unary, |x|; sigmoid_avx2 => AVX2, sigmoid_avx512 => AVX512),
            "sum" => runnable!(Unary, |x|; sum_avx2 => AVX2, sum_avx512 => AVX512),
            "mean" => runnable!(Unary, |x|; mean_avx2 => AVX2, mean_avx512 => AVX512),
            _ => Vec::new(),
        }
    }

    /// The variant dispatch should install for `op`, given the process's policy.
    pub fn expected(op: &str) -> Option<String> {
        let policy = CpuPolicy::current();
        // Every op has an AVX-512 variant (see `simd::avx512`).
        let variants: &[(CpuFeatures, &str)] = &[(AVX2, "avx2"), (AVX512, "avx512")];
        let needs: Vec<CpuFeatures> = variants.iter().map(|(f, _)| *f).collect();
        policy
            .choose(&needs)
            .map(|i| format!("{op}_{}", variants[i].1))
    }
}

#[cfg(target_arch = "aarch64")]
mod isa {
    use super::*;
    use switchyard_backends::cpu::simd::neon::*;

    const NEON: CpuFeatures = CpuFeatures::NEON;

    pub fn binary(op: &str) -> Vec<(&'static str, Binary)> {
        match op {
            "add" => runnable!(Binary, |x, y|; add_neon => NEON),
            "sub" => runnable!(Binary, |x, y|; sub_neon => NEON),
            "mul" => runnable!(Binary, |x, y|; mul_neon => NEON),
            "div" => runnable!(Binary, |x, y|; div_neon => NEON),
            "relu_backward" => runnable!(KeyedBinary, |x, y|; relu_backward_neon => NEON),
            "matmul" if switchyard::cpu::detected().contains(NEON) => {
                vec![("matmul_neon", matmul_neon as Binary)]
            }
            _ => Vec::new(),
        }
    }

    pub fn unary(op: &str) -> Vec<(&'static str, Unary)> {
        match op {
            "neg" => runnable!(Unary, |x|; neg_neon => NEON),
            "relu" => runnable!(Unary, |x|; relu_neon => NEON),
            "exp" => runnable!(Unary, |x|; exp_neon => NEON),
            "log" => runnable!(Unary, |x|; log_neon => NEON),
            "tanh" => runnable!(Unary, |x|; tanh_neon => NEON),
            "sigmoid" => runnable!(Unary, |x|; sigmoid_neon => NEON),
            "sum" => runnable!(Unary, |x|; sum_neon => NEON),
            "mean" => runnable!(Unary, |x|; mean_neon => NEON),
            _ => Vec::new(),
        }
    }

    pub fn expected(op: &str) -> Option<String> {
        CpuPolicy::current()
            .choose(&[NEON])
            .map(|_| format!("{op}_neon"))
    }
}

/// wasm32 with `simd128` (`.ci/wasm` builds this file so): one variant per op but the
/// transcendental ones (the naive kernels serve those there), plain functions
/// (the module was compiled with the feature, so no detection and no `unsafe`), installed unless
/// `SWITCHYARD_CPU_CAPABILITY=default` says otherwise.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod isa {
    use super::*;
    use switchyard_backends::cpu::simd::wasm_simd128::*;

    pub fn binary(op: &str) -> Vec<(&'static str, Binary)> {
        match op {
            "add" => vec![("add_simd128", add_simd128)],
            "sub" => vec![("sub_simd128", sub_simd128)],
            "mul" => vec![("mul_simd128", mul_simd128)],
            "div" => vec![("div_simd128", div_simd128)],
            "relu_backward" => vec![("relu_backward_simd128", |x, y| {
                relu_backward_simd128(DispatchKeySet::CPU, x, y)
            })],
            "matmul" => vec![("matmul_simd128", matmul_simd128)],
            _ => Vec::new(),
        }
    }

    pub fn unary(op: &str) -> Vec<(&'static str, Unary)> {
        match op {
            "neg" => vec![("neg_simd128", neg_simd128)],
            "relu" => vec![("relu_simd128", relu_simd128)],
            "sum" => vec![("sum_simd128", sum_simd128)],
            "mean" => vec![("mean_simd128", mean_simd128)],
            _ => Vec::new(),
        }
    }

    /// `exp`, `log`, `tanh` and `sigmoid` have no `simd128` kernel (`simd::wasm_simd128`).
    pub fn expected(op: &str) -> Option<String> {
        if ["exp", "log", "tanh", "sigmoid"].contains(&op) {
            return None;
        }
        CpuPolicy::current()
            .choose(&[CpuFeatures::SIMD128])
            .map(|_| format!("{op}_simd128"))
    }
}

/// Elsewhere (wasm32 without `simd128`): no SIMD kernel is compiled, every `CpuSimd` slot falls
/// through, and the tests below compare dispatch (the naive kernels) with itself.
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
mod isa {
    use super::*;

    pub fn binary(_op: &str) -> Vec<(&'static str, Binary)> {
        Vec::new()
    }

    pub fn unary(_op: &str) -> Vec<(&'static str, Unary)> {
        Vec::new()
    }

    pub fn expected(_op: &str) -> Option<String> {
        None
    }
}

/// The direct variants of a binary op plus the dispatched call.
fn binary_runs(op: &str, dispatched: Binary) -> Vec<(&'static str, Binary)> {
    let mut runs = isa::binary(op);
    runs.push(("dispatch", dispatched));
    runs
}

fn unary_runs(op: &str, dispatched: Unary) -> Vec<(&'static str, Unary)> {
    let mut runs = isa::unary(op);
    runs.push(("dispatch", dispatched));
    runs
}

#[test]
fn dispatch_installs_the_best_variant_this_cpu_runs() {
    for (op, handle) in simd_ops() {
        let slot = handle
            .slot_in(DispatchKey::CpuSimd, DTypeColumn::F32)
            .unwrap();
        let direct = isa::binary(op).len() + isa::unary(op).len();
        if isa::expected(op).is_some() {
            assert!(
                direct > 0,
                "{op}: the installed variant is also tested directly"
            );
        }
        match isa::expected(op) {
            Some(name) => assert!(
                matches!(slot, SlotOrigin::Kernel(meta) if meta.name == name),
                "{op}: expected {name}, got {slot}\n{}",
                handle.table_dump()
            ),
            None => assert_eq!(slot, SlotOrigin::Fallthrough, "{op}"),
        }
    }
    // On wasm32 the dump's first line says the module has `simd128` (no runtime detection).
    if cfg!(target_arch = "wasm32") {
        let dump = switchyard::dump();
        let first = dump.lines().next().unwrap_or_default();
        let built_with = cfg!(target_feature = "simd128");
        assert_eq!(first.contains("detected simd128"), built_with, "{first}");
        assert_eq!(first.contains("without simd128"), !built_with, "{first}");
    }
}

#[test]
fn elementwise_binary_ops_equal_naive_exactly() {
    // `relu_backward`'s naive: the op's body (`le`, `where`), which has no naive
    // kernel of its own.
    let relu_backward: (&str, NaiveBinary, Binary) = (
        "relu_backward",
        relu_backward::redispatch,
        try_relu_backward,
    );
    for (op, naive, dispatched) in ARITHMETIC.into_iter().chain([relu_backward]) {
        for (name, run) in binary_runs(op, dispatched) {
            for &n in SIZES {
                for seed in 0..3 {
                    // Wide range: products overflow, quotients underflow, specials meet.
                    let x = tensor(n, seed, -1e20, 1e20, true);
                    let y = tensor(n, seed + 1000, -1e20, 1e20, true);
                    let want = naive(NAIVE, &x, &y).unwrap().to_vec::<f32>();
                    let got = run(&x, &y).unwrap();
                    assert_eq!(got.shape(), x.shape());
                    assert_exact(&format!("{op} {name} n={n}"), &got.to_vec::<f32>(), &want);
                }
            }
            let mismatch = run(&Tensor::vector(&[1.0; 3]), &Tensor::vector(&[1.0; 4]));
            let error = mismatch.unwrap_err().to_string();
            assert!(error.contains("shape error"), "{op} {name}: {error}");
        }
    }
}

/// A bias over a batch (`[N, C] + [C]`, either operand the repeated one, leading 1s, rows not a
/// multiple of the lanes, batches large enough for the worker threads): the row path's results
/// are the naive kernel's, bit for bit.
#[test]
fn row_broadcasts_equal_naive_exactly() {
    let shapes: [(&[usize], &[usize]); 18] = [
        (&[4096, 64], &[64]),
        (&[64], &[300, 64]),
        (&[1, 17], &[5, 17]),
        (&[3, 5, 40], &[5, 40]),
        (&[1, 1, 40], &[2, 3, 40]),
        (&[3000, 33], &[33]),
        (&[2000, 100], &[1, 100]),
        (&[0, 64], &[64]),
        // Scalars, and rows shorter than a vector, repeated into a longer row.
        (&[64, 64], &[]),
        (&[], &[1000]),
        (&[1], &[7]),
        (&[1, 1], &[3, 333]),
        (&[4096, 2], &[2]),
        (&[3], &[500, 3]),
        (&[700, 15], &[1, 15]),
        (&[0, 3], &[3]),
        (&[5, 0], &[]),
        (&[1, 1, 1], &[9]),
    ];
    let shaped = |shape: &[usize], seed: u64| {
        let n = shape.iter().product();
        let signed: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        switchyard::ops::reshape(&tensor(n, seed, -1e20, 1e20, true), &signed)
    };
    for (op, naive, dispatched) in ARITHMETIC {
        for (xshape, yshape) in shapes {
            let (x, y) = (shaped(xshape, 7), shaped(yshape, 8));
            let want = naive(NAIVE, &x, &y).unwrap();
            let got = dispatched(&x, &y).unwrap();
            assert_eq!(got.shape(), want.shape(), "{op} {xshape:?} {yshape:?}");
            let what = format!("{op} {xshape:?} {yshape:?}");
            assert_exact(&what, &got.to_vec::<f32>(), &want.to_vec::<f32>());
        }
    }
}

#[test]
fn elementwise_unary_ops_equal_naive_exactly() {
    let ops: [(&str, NaiveUnary, Unary); 2] = [
        ("neg", neg::redispatch, try_neg),
        ("relu", relu::redispatch, try_relu),
    ];
    for (op, naive, dispatched) in ops {
        for (name, run) in unary_runs(op, dispatched) {
            for &n in SIZES {
                let x = tensor(n, n as u64, -10.0, 10.0, true);
                let want = naive(NAIVE, &x).unwrap().to_vec::<f32>();
                assert_exact(
                    &format!("{op} {name} n={n}"),
                    &run(&x).unwrap().to_vec::<f32>(),
                    &want,
                );
            }
            // -0.0 and NaN keep their sign bits through relu, flip them through neg; a
            // signalling NaN and a NaN with a payload keep every bit.
            let signalling = f32::from_bits(0x7f80_0001);
            let payload = f32::from_bits(0xffc0_1234);
            let specials = Tensor::vector(&[
                -0.0,
                0.0,
                f32::NAN,
                -f32::NAN,
                -1.0,
                signalling,
                payload,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::MIN_POSITIVE / 2.0,
                -f32::MIN_POSITIVE / 2.0,
            ]);
            // Bit for bit, NaNs too: both ops only move or flip bits.
            let bits = |t: Tensor| t.to_vec::<f32>().iter().map(|v| v.to_bits()).collect();
            let (got, want): (Vec<u32>, Vec<u32>) = (
                bits(run(&specials).unwrap()),
                bits(naive(NAIVE, &specials).unwrap()),
            );
            assert_eq!(got, want, "{op} {name} specials");
        }
    }
}

/// The transcendental ops: each op, the input ranges that cover its whole useful range and past
/// both ends (overflow, underflow through the subnormals, saturation), and its special values
/// with the results the naive backend gives them.
#[allow(clippy::type_complexity)]
const TRANSCENDENTAL: [(&str, NaiveUnary, Unary, &[(f32, f32)], &[(f32, f32)]); 4] = [
    (
        "exp",
        exp::redispatch,
        try_exp,
        &[(-110.0, 95.0), (-1.0, 1.0)],
        &[
            (f32::INFINITY, f32::INFINITY),
            (f32::NEG_INFINITY, 0.0),
            (-0.0, 1.0),
            (0.0, 1.0),
            (88.8, f32::INFINITY),
            (-104.0, 0.0),
        ],
    ),
    (
        "log",
        log::redispatch,
        try_log,
        &[(-0.5, 3.0), (0.0, 1.0e30), (0.99, 1.01)],
        &[
            (f32::INFINITY, f32::INFINITY),
            (f32::NEG_INFINITY, f32::NAN),
            (-0.0, f32::NEG_INFINITY),
            (0.0, f32::NEG_INFINITY),
            (1.0, 0.0),
            (-1.0, f32::NAN),
        ],
    ),
    (
        "tanh",
        tanh::redispatch,
        try_tanh,
        &[(-12.0, 12.0), (-0.7, 0.7)],
        &[
            (f32::INFINITY, 1.0),
            (f32::NEG_INFINITY, -1.0),
            (-0.0, -0.0),
            (0.0, 0.0),
            (1.0e-40, 1.0e-40),
            (20.0, 1.0),
        ],
    ),
    (
        "sigmoid",
        sigmoid::redispatch,
        try_sigmoid,
        &[(-110.0, 40.0), (-3.0, 3.0)],
        &[
            (f32::INFINITY, 1.0),
            (f32::NEG_INFINITY, 0.0),
            (-0.0, 0.5),
            (0.0, 0.5),
            (-104.0, 0.0),
            (40.0, 1.0),
        ],
    ),
];

#[test]
fn transcendental_ops_are_within_one_ulp_of_naive() {
    for (op, naive, dispatched, ranges, specials) in TRANSCENDENTAL {
        for (name, run) in unary_runs(op, dispatched) {
            let mut mismatches = 0usize;
            let mut total = 0usize;
            for &(lo, hi) in ranges {
                for &n in SIZES {
                    let x = tensor(n, 7 + n as u64, lo, hi, true);
                    let want = naive(NAIVE, &x).unwrap().to_vec::<f32>();
                    let got = run(&x).unwrap().to_vec::<f32>();
                    for ((&g, &w), &input) in got.iter().zip(&want).zip(&x.to_vec::<f32>()) {
                        assert!(
                            ulps(g, w) <= 1,
                            "{op} {name}: {op}({input:e}) = {g:e}, naive {w:e}"
                        );
                        mismatches += usize::from(!same(g, w));
                        total += 1;
                    }
                }
            }
            // Mostly the naive value itself: both round the exact value to nearest but near
            // ties (the `f32` kernels err by up to 0.88 ulp). Measured here: `exp` 9%.
            println!("{op} {name}: {mismatches} of {total} differ from the naive results");
            assert!(
                mismatches * 5 <= total,
                "{op} {name}: {mismatches} of {total} differ"
            );
            let (inputs, want): (Vec<f32>, Vec<f32>) = specials.iter().copied().unzip();
            let got = run(&Tensor::vector(&inputs)).unwrap().to_vec::<f32>();
            assert_exact(&format!("{op} {name} specials"), &got, &want);
            let nan = run(&Tensor::vector(&[f32::NAN, -f32::NAN])).unwrap();
            assert!(
                nan.to_vec::<f32>().iter().all(|v| v.is_nan()),
                "{op} {name}"
            );
        }
    }
}

/// An input that starts off the vectors' boundary has its first elements taken on their own (so
/// that the loads after them are aligned): each element's result is its own, so the bits are
/// the same at every alignment of the first element to a 64-byte line.
#[test]
fn transcendental_bits_do_not_depend_on_the_inputs_alignment() {
    for (op, _, dispatched, ranges, _) in TRANSCENDENTAL {
        let (lo, hi) = ranges[0];
        for (name, run) in unary_runs(op, dispatched) {
            for n in [4096, 4111, 9000] {
                let values = tensor(n, 11 + n as u64, lo, hi, true).to_vec::<f32>();
                let want = run(&Tensor::vector(&values)).unwrap().to_vec::<f32>();
                for offset in 1..16isize {
                    let padded: Vec<f32> = std::iter::repeat_n(f32::NAN, offset as usize)
                        .chain(values.iter().copied())
                        .collect();
                    let view = narrow(&Tensor::vector(&padded), 0, offset, n);
                    let got = run(&view).unwrap().to_vec::<f32>();
                    assert_exact(
                        &format!("{op} {name} n={n} at offset {offset}"),
                        &got,
                        &want,
                    );
                }
            }
        }
    }
}

#[test]
fn sum_and_mean_are_within_tolerance_of_naive() {
    let ops: [(&str, NaiveUnary, Unary); 2] = [
        ("sum", sum::redispatch, try_sum),
        ("mean", mean::redispatch, try_mean),
    ];
    for (op, naive, dispatched) in ops {
        for (name, run) in unary_runs(op, dispatched) {
            for &n in SIZES.iter().chain(&[1 << 20]) {
                // Mixed signs (cancellation) and one sign (a large total).
                for (lo, hi) in [(-1.0, 1.0), (0.0, 1000.0)] {
                    let values = data(n, n as u64 + 3, lo, hi, false);
                    let x = Tensor::vector(&values);
                    let want = naive(NAIVE, &x).unwrap().to_vec::<f32>()[0];
                    let got = run(&x).unwrap();
                    assert_eq!(got.shape(), &[] as &[usize]);
                    let scale = if op == "mean" { n.max(1) as f32 } else { 1.0 };
                    assert_sum_close(
                        &format!("{op} {name} n={n}"),
                        &values,
                        got.to_vec::<f32>()[0] * scale,
                        want * scale,
                    );
                }
            }
            let cases: [&[f32]; 7] = [
                &[],
                &[-0.0],
                &[1.0, f32::NAN, 2.0],
                &[f32::INFINITY, 1.0],
                &[f32::INFINITY, f32::NEG_INFINITY],
                &[f32::MAX; 40],
                &[f32::MIN; 33],
            ];
            for values in cases {
                let x = Tensor::vector(values);
                let want = naive(NAIVE, &x).unwrap().to_vec::<f32>()[0];
                let got = run(&x).unwrap().to_vec::<f32>()[0];
                assert!(same(got, want), "{op} {name} {values:?}: {got} vs {want}");
            }
        }
    }
}

/// The sum as `cpu::simd` documents it, one element at a time: blocks of 1024 elements, 32 `f32`
/// accumulators each adding every 32nd element of a block from `-0.0`, each block's accumulators
/// onto 32 `f64` lane sums; per superblock of 64K elements the lane sums in a halving tree, then
/// the last `len % 32` elements in order (the superblock again in `f64` if that is not finite);
/// the superblocks' sums in order.
fn documented_sum(values: &[f32]) -> f64 {
    let superblock_sum = |xs: &[f32]| {
        let whole = xs.len() - xs.len() % 32;
        let mut lanes = [-0.0f64; 32];
        for block in xs[..whole].chunks(1024) {
            let mut acc = [-0.0f32; 32];
            for run in block.chunks(32) {
                for (a, x) in acc.iter_mut().zip(run) {
                    *a += x;
                }
            }
            for (l, a) in lanes.iter_mut().zip(acc) {
                *l += f64::from(a);
            }
        }
        let mut width = 16;
        while width > 0 {
            for i in 0..width {
                lanes[i] += lanes[i + width];
            }
            width /= 2;
        }
        let sum = xs[whole..].iter().fold(lanes[0], |s, &x| s + f64::from(x));
        if sum.is_finite() {
            sum
        } else {
            xs.iter().fold(-0.0, |s, &x| s + f64::from(x))
        }
    };
    values
        .chunks(1 << 16)
        .map(superblock_sum)
        .fold(-0.0, |total, s| total + s)
}

/// Every variant's `sum` and `mean` are the bits of the documented blocking (so every ISA's are
/// the same), at lengths around the block and superblock boundaries.
#[test]
fn sum_and_mean_are_the_documented_blocking_bit_for_bit() {
    let ops: [(&str, Unary); 2] = [("sum", try_sum), ("mean", try_mean)];
    for (op, dispatched) in ops {
        for (name, run) in unary_runs(op, dispatched) {
            for n in [
                0,
                1,
                33,
                1023,
                1024,
                1025,
                2047,
                2048,
                3 * 1024 + 40,
                (1 << 16) - 1,
                1 << 16,
                (1 << 16) + 2048 + 5,
                (3 << 16) + 100,
            ] {
                // Magnitudes over many binades, so that any other order shows in the bits.
                let values: Vec<f32> = data(n, n as u64 + 7, -1.0, 1.0, false)
                    .iter()
                    .enumerate()
                    .map(|(i, v)| v * (1u32 << (i % 17)) as f32)
                    .collect();
                let total = documented_sum(&values);
                let want = if op == "sum" {
                    total as f32
                } else {
                    (total / n as f64) as f32
                };
                let got = run(&Tensor::vector(&values)).unwrap().to_vec::<f32>()[0];
                assert!(same(got, want), "{op} {name} n={n}: {got} vs {want}");
                // The same values `offset` elements into a storage: every alignment of the first
                // element to a 64-byte line (the kernels read misaligned runs in aligned
                // windows), the same bits.
                for offset in 1..16isize {
                    let padded: Vec<f32> = std::iter::repeat_n(f32::NAN, offset as usize)
                        .chain(values.iter().copied())
                        .collect();
                    let view = narrow(&Tensor::vector(&padded), 0, offset, n);
                    let got = run(&view).unwrap().to_vec::<f32>()[0];
                    assert!(
                        same(got, want),
                        "{op} {name} n={n} at offset {offset}: {got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn matmul_is_within_tolerance_of_naive() {
    for (name, run) in binary_runs("matmul", try_matmul) {
        for (m, k, n) in [
            (0, 3, 4),
            (3, 0, 4),
            (1, 1, 1),
            (2, 3, 5),
            (7, 9, 8),
            (8, 8, 8),
            (17, 33, 15),
            (64, 64, 64),
            (100, 37, 129),
            // Past one block of the tiles' `k` (256) and of their columns (256), with a partial
            // tile of rows (13 = 2·6 + 1) and of columns (270 = 16·16 + 14 = 8·32 + 14).
            (13, 300, 270),
            (6, 513, 16),
            // The AVX-512 tile's edges: rows 2·14 + 1, columns 2·32 + 17 (both its vectors
            // partial in the last panel), and a single column.
            (29, 260, 81),
            (15, 40, 1),
            // A few rows times a wide `y` (on x86-64 the transposed product on the narrow
            // kernels): tails of `k`'s 16-lane chunks and of the 32-column blocks.
            (3, 300, 70),
            // Just past 2²⁷ multiply-adds: on x86-64 the AVX2 variant hands the product to
            // `matrixmultiply`, the AVX-512 one to its tiles with `x` packed.
            (512, 512, 513),
        ]
        .into_iter()
        // That last case is about x86-64's engines; on wasm32 (one engine) its naive reference
        // alone takes over a minute under Node, and minutes on an emulated CPU.
        .filter(|&(m, k, n)| !(cfg!(target_arch = "wasm32") || emulated()) || m * k * n <= 1 << 27)
        {
            let a = data(m * k, 11, -1.0, 1.0, false);
            let b = data(k * n, 12, -1.0, 1.0, false);
            let x = Tensor::from_slice::<f32>(&a, &[m, k]).unwrap();
            let y = Tensor::from_slice::<f32>(&b, &[k, n]).unwrap();
            // Each operand also as a view: the transpose of its column-major copy (strides 1
            // and the other extent), which on x86-64 the tiles pack.
            let y_view = contiguous(&y.t()).t();
            let x_view = contiguous(&x.t()).t();
            let want = matmul::redispatch(NAIVE, &x, &y).unwrap().to_vec::<f32>();
            // Per element: `k` ulps of the sum of its terms' magnitudes.
            let tolerance: Vec<f32> = (0..m * n)
                .map(|index| {
                    let (i, j) = (index / n, index % n);
                    let magnitude: f32 = (0..k).map(|p| (a[i * k + p] * b[p * n + j]).abs()).sum();
                    k as f32 * f32::EPSILON * magnitude + f32::MIN_POSITIVE
                })
                .collect();
            for (operands, x, y) in [
                ("contiguous", &x, &y),
                ("y a transposed view", &x, &y_view),
                ("x a transposed view", &x_view, &y),
            ] {
                let got = run(x, y).unwrap();
                assert_eq!(got.shape(), &[m, n]);
                for (index, (&g, &w)) in got.to_vec::<f32>().iter().zip(&want).enumerate() {
                    let (i, j) = (index / n, index % n);
                    assert!(
                        (g - w).abs() <= tolerance[index],
                        "matmul {name} {operands} {m}x{k}x{n} [{i},{j}]: {g} vs {w}"
                    );
                }
            }
        }
        // Contracted extents that differ (1-D operands are products too, since PyTorch's forms).
        let x = Tensor::from_vec::<f32>(vec![1.0; 6], &[2, 3]).unwrap();
        let error = run(&x, &x).unwrap_err().to_string();
        assert!(error.contains("got [2, 3] and [2, 3]"), "{error}");
    }
}

/// Every `matmul` variant this CPU runs gives the same bits up to 2²⁷ multiply-adds: on x86-64
/// the AVX2 and AVX-512 tiles compute each element as the same chains of FMAs, whether they
/// read `x` in place or packed (as they do a transposed `x`), and the narrow kernels (a `y` of
/// at most 4 columns, an `x` of at most 4 rows) follow one order on both. (Past 2²⁷ they part:
/// the AVX2 variant takes `matrixmultiply`, the AVX-512 one its tiles with `x` packed. Each is
/// still the same bits at every thread count.)
#[test]
fn matmul_variants_give_the_same_bits() {
    let variants = isa::binary("matmul");
    let Some((first_name, first)) = variants.first() else {
        return;
    };
    for (m, k, n) in [
        (1, 1, 1),
        (13, 300, 270),
        (29, 260, 81),
        (100, 37, 129),
        (64, 64, 64),
        (3, 300, 70),
    ] {
        let x = Tensor::from_vec(data(m * k, 21, -1.0, 1.0, false), &[m, k]).unwrap();
        let y = Tensor::from_vec(data(k * n, 22, -1.0, 1.0, false), &[k, n]).unwrap();
        let x_view = contiguous(&x.t()).t();
        let bits = |product: Tensor| -> Vec<u32> {
            product
                .to_vec::<f32>()
                .iter()
                .map(|v| v.to_bits())
                .collect()
        };
        for (operands, x) in [("contiguous", &x), ("x a transposed view", &x_view)] {
            let want = bits(first(x, &y).unwrap());
            for (name, run) in &variants[1..] {
                let got = bits(run(x, &y).unwrap());
                assert!(
                    got == want,
                    "matmul {name} and {first_name} differ, {operands} {m}x{k}x{n}"
                );
            }
        }
    }
}

/// A `bf16` or `f16` product on the CPU SIMD backend is the `f32` product of the widened
/// operands, rounded once: the same bits as each `f32` variant's product (it takes the `f32`
/// variant the op's table installed, and the variants agree bit for bit). (On wasm32 the naive
/// kernel serves these dtypes.)
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[test]
fn half_matmul_is_the_rounded_product_of_every_f32_variant() {
    use switchyard::DType;
    use switchyard::ops::to_dtype;
    for dtype in [DType::BF16, DType::F16] {
        for (m, k, n) in [(29, 260, 81), (7, 9, 8)] {
            let x = Tensor::from_vec(data(m * k, 31, -1.0, 1.0, false), &[m, k]).unwrap();
            let y = Tensor::from_vec(data(k * n, 32, -1.0, 1.0, false), &[k, n]).unwrap();
            let (xh, yh) = (to_dtype(&x, dtype), to_dtype(&y, dtype));
            let (xw, yw) = (to_dtype(&xh, DType::F32), to_dtype(&yh, DType::F32));
            let got = to_dtype(&matmul(&xh, &yh), DType::F32).to_vec::<f32>();
            for (name, run) in isa::binary("matmul") {
                let want = to_dtype(&to_dtype(&run(&xw, &yw).unwrap(), dtype), DType::F32);
                assert!(
                    got.iter()
                        .zip(want.to_vec::<f32>())
                        .all(|(g, w)| same(*g, w)),
                    "{dtype} matmul against {name}'s rounded product, {m}x{k}x{n}"
                );
            }
        }
    }
}

/// The bits of `exp`, `log`, `tanh` and `sigmoid` on one input in 4099 of all 2³² `f32`s (NaN
/// payloads aside), hashed: every instruction set computes the same steps with the same roundings
/// (`simd::math_f32`), so each variant here, whatever its ISA, gives the hash the AVX2 kernels
/// gave when these constants were recorded.
#[test]
fn transcendental_bits_are_the_same_on_every_isa() {
    const STRIDE: u64 = 4099;
    const RECORDED: [(&str, u64); 4] = [
        ("exp", 0x5469_c758_eaed_7e0e),
        ("log", 0x26fc_13f0_d640_73f9),
        ("tanh", 0x56e6_3d7d_75a9_8f01),
        ("sigmoid", 0xee30_661c_1f8a_21a8),
    ];
    let inputs: Vec<f32> = (0..(1u64 << 32).div_ceil(STRIDE))
        .map(|i| f32::from_bits((i * STRIDE) as u32))
        .collect();
    let x = Tensor::vector(&inputs);
    for (op, recorded) in RECORDED {
        for (name, run) in isa::unary(op) {
            // FNV-1a over the result bits, every NaN as one.
            let hash = run(&x).unwrap().to_vec::<f32>().iter().fold(
                0xcbf2_9ce4_8422_2325u64,
                |hash, &y| {
                    let bits = if y.is_nan() {
                        f32::NAN.to_bits()
                    } else {
                        y.to_bits()
                    };
                    bits.to_le_bytes().iter().fold(hash, |h, &b| {
                        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                    })
                },
            );
            println!("{op} {name}: {hash:#018x}");
            assert_eq!(hash, recorded, "{op} {name}: {hash:#018x}");
        }
    }
}
