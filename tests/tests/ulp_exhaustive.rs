//! Every `f32` input, all 2³² bit patterns, through the SIMD `exp`, `log`, `tanh` and `sigmoid`:
//! the dispatched call (the variant dispatch installs on this CPU) and every other variant this
//! CPU runs, called directly. Each result must be
//! - **within 1 ulp of the exact value**: `|got − y| < ulp(y)`, where `y` is the `f64` function
//!   of the input (the C library's `exp`, `log`, `tanh`; `sigmoid` as the naive backend computes
//!   it in `f64`), and `ulp(y)` the spacing of `f32` values at `|y|` (2⁻¹⁴⁹ below the normal
//!   range). The reference is never rounded to `f32` first: a result rounded twice (to `f64`,
//!   then to `f32`) can differ from the correctly rounded `f32` near a tie, and measuring against
//!   the `f64` value avoids that. The `f64` functions err by a few `f64` ulps at most, under 2⁻²⁶
//!   of an `f32` ulp, so the test asserts `|got − y| ≤ (1 − 2⁻²⁰)·ulp(y)`: then the true error is
//!   below 1 ulp;
//! - within 1 ulp (`simd_check::ulps`) of the naive backend's result (the oracle the differential
//!   tests and the conformance kit compare with);
//! - exactly the naive result wherever either is NaN, ±0 or ±inf: special values, overflow and
//!   underflow thresholds as the oracle has them.
//!
//! The worst error per op and variant is printed (`--nocapture`), with how many results differ
//! from the naive one and from the `f64` value rounded to `f32`.
//!
//! A release build checks every input, on every core, in seconds (`.ci/run` runs `cargo test
//! --release -p switchyard-tests --test ulp_exhaustive`); a debug build checks every 4099th bit
//! pattern, so that the workspace's `cargo test` stays quick.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use switchyard::cpu::CpuFeatures;
use switchyard::ops::{log, sigmoid, tanh, try_exp, try_log, try_sigmoid, try_tanh};
use switchyard::{DTypeColumn, DispatchKey, DispatchKeySet, OpHandle, Result, SlotOrigin, Tensor};
use switchyard_tests::simd_check::{same, ulps};

type Unary = fn(&Tensor) -> Result<Tensor>;
type NaiveUnary = fn(DispatchKeySet, &Tensor) -> Result<Tensor>;

/// Inputs per kernel call: below the size where the kernels split work over their threads, so
/// that the test's own threads are the only ones.
const CHUNK: u64 = 1 << 14;

/// Every bit pattern in release builds; every 4099th (a prime: every exponent, both signs, many
/// mantissas) in debug builds.
const STRIDE: u64 = if cfg!(debug_assertions) { 4099 } else { 1 };

/// The variants among `$f => needs` whose features this CPU has, as callable function pointers.
macro_rules! runnable {
    ($($f:path => $needs:expr),* $(,)?) => {{
        let mut found: Vec<(&'static str, Unary)> = Vec::new();
        $(if switchyard::cpu::detected().contains($needs) {
            // SAFETY: the CPU has every feature this variant enables (checked just above).
            found.push((stringify!($f), |x| unsafe { $f(x) }));
        })*
        found
    }};
}

#[cfg(target_arch = "x86_64")]
fn variants(op: &str) -> Vec<(&'static str, Unary)> {
    use switchyard_backends::cpu::simd::{avx2::*, avx512::*};
    const AVX2: CpuFeatures = CpuFeatures::AVX2.union(CpuFeatures::FMA);
    const AVX512: CpuFeatures = CpuFeatures::AVX512F;
    match op {
        "exp" => runnable!(exp_avx2 => AVX2, exp_avx512 => AVX512),
        "log" => runnable!(log_avx2 => AVX2, log_avx512 => AVX512),
        "tanh" => runnable!(tanh_avx2 => AVX2, tanh_avx512 => AVX512),
        "sigmoid" => runnable!(sigmoid_avx2 => AVX2, sigmoid_avx512 => AVX512),
        _ => unreachable!("{op}"),
    }
}

#[cfg(target_arch = "aarch64")]
fn variants(op: &str) -> Vec<(&'static str, Unary)> {
    use switchyard_backends::cpu::simd::neon::*;
    const NEON: CpuFeatures = CpuFeatures::NEON;
    match op {
        "exp" => runnable!(exp_neon => NEON),
        "log" => runnable!(log_neon => NEON),
        "tanh" => runnable!(tanh_neon => NEON),
        "sigmoid" => runnable!(sigmoid_neon => NEON),
        _ => unreachable!("{op}"),
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn variants(_: &str) -> Vec<(&'static str, Unary)> {
    Vec::new()
}

/// The calls to check: the dispatched one (named after the variant it runs) and every other
/// variant this CPU has.
fn runs(op: &str, handle: OpHandle, dispatched: Unary) -> Vec<(String, Unary)> {
    let installed = match handle.slot_in(DispatchKey::CpuSimd, DTypeColumn::F32) {
        Ok(SlotOrigin::Kernel(meta)) => meta.name.to_string(),
        _ => "the naive kernel".to_string(),
    };
    let mut runs = vec![(format!("dispatch ({installed})"), dispatched)];
    for (name, run) in variants(op) {
        if name != installed {
            runs.push((name.to_string(), run));
        }
    }
    runs
}

/// The spacing of `f32` values at `|y|`: `2^(e − 23)` for `y`'s binary exponent `e`, at least
/// 2⁻¹⁴⁹ (the subnormals' spacing).
fn ulp(y: f64) -> f64 {
    let e = ((y.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023;
    f64::from(e.max(-126) - 23).exp2()
}

/// What one run found: the worst error in ulps and its input, and the counts of results that
/// differ from the naive one and from the `f64` reference rounded to `f32`.
#[derive(Clone, Copy, Debug, Default)]
struct Found {
    worst: f64,
    worst_input: f32,
    /// The worst error where the exact value is in the normal range.
    worst_normal: f64,
    checked: u64,
    off_naive: u64,
    off_rounded: u64,
}

impl Found {
    fn merge(&mut self, other: Found) {
        if other.worst > self.worst {
            self.worst = other.worst;
            self.worst_input = other.worst_input;
        }
        self.worst_normal = self.worst_normal.max(other.worst_normal);
        self.checked += other.checked;
        self.off_naive += other.off_naive;
        self.off_rounded += other.off_rounded;
    }
}

/// The failure for input `x`, if `got` breaks one of the module's rules; else its error in ulps.
fn judge(x: f32, got: f32, naive: f32, reference: f64) -> std::result::Result<f64, String> {
    let special = |v: f32| v.is_nan() || v.is_infinite() || v == 0.0;
    if special(got) || special(naive) {
        let same = got.to_bits() == naive.to_bits() || (got.is_nan() && naive.is_nan());
        return if same {
            Ok(0.0)
        } else {
            Err(format!(
                "{x:e} ({:#010x}): {got:e}, naive {naive:e}",
                x.to_bits()
            ))
        };
    }
    let error = (f64::from(got) - reference).abs() / ulp(reference);
    if error > 1.0 - 2f64.powi(-20) {
        return Err(format!(
            "{x:e} ({:#010x}): {got:e}, exact {reference:e}: {error} ulp",
            x.to_bits()
        ));
    }
    if got.to_bits() != naive.to_bits() && ulps(got, naive) > 1 {
        return Err(format!(
            "{x:e} ({:#010x}): {got:e}, naive {naive:e}: {} ulps apart",
            x.to_bits(),
            ulps(got, naive)
        ));
    }
    Ok(error)
}

/// Checks every run of one op over every input (see the module docs), on every core.
fn exhaustive(
    op: &str,
    handle: OpHandle,
    dispatched: Unary,
    naive: NaiveUnary,
    reference: fn(f64) -> f64,
) {
    let runs = runs(op, handle, dispatched);
    let count = (1u64 << 32).div_ceil(STRIDE);
    let next = AtomicU64::new(0);
    let found = Mutex::new(vec![Found::default(); runs.len()]);
    let failures = Mutex::new(Vec::<String>::new());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut mine = vec![Found::default(); runs.len()];
                loop {
                    let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                    if start >= count || !failures.lock().unwrap().is_empty() {
                        break;
                    }
                    let inputs: Vec<f32> = (start..count.min(start + CHUNK))
                        .map(|i| f32::from_bits((i * STRIDE) as u32))
                        .collect();
                    let x = Tensor::vector(&inputs);
                    let want = naive(DispatchKeySet::CPU_NAIVE, &x)
                        .unwrap()
                        .to_vec::<f32>();
                    let exact: Vec<f64> = inputs.iter().map(|&v| reference(v.into())).collect();
                    for ((name, run), found) in runs.iter().zip(&mut mine) {
                        let got = run(&x).unwrap().to_vec::<f32>();
                        for i in 0..inputs.len() {
                            match judge(inputs[i], got[i], want[i], exact[i]) {
                                Ok(error) => {
                                    if error > found.worst {
                                        found.worst = error;
                                        found.worst_input = inputs[i];
                                    }
                                    if exact[i].abs() >= f64::from(f32::MIN_POSITIVE) {
                                        found.worst_normal = found.worst_normal.max(error);
                                    }
                                    found.checked += 1;
                                    found.off_naive += u64::from(!same(got[i], want[i]));
                                    found.off_rounded += u64::from(!same(got[i], exact[i] as f32));
                                }
                                Err(failure) => {
                                    failures
                                        .lock()
                                        .unwrap()
                                        .push(format!("{op} {name}: {failure}"));
                                    return;
                                }
                            }
                        }
                    }
                }
                for (total, mine) in found.lock().unwrap().iter_mut().zip(mine) {
                    total.merge(mine);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for ((name, _), found) in runs.iter().zip(found.into_inner().unwrap()) {
        assert_eq!(found.checked, count, "{name}: every input checked");
        println!(
            "{op} {name}: {} inputs, worst {:.4} ulp at {:e} ({:#010x}), {:.4} ulp where the \
             exact value is normal; {} differ from the naive result, {} from the f64 value \
             rounded to f32",
            found.checked,
            found.worst,
            found.worst_input,
            found.worst_input.to_bits(),
            found.worst_normal,
            found.off_naive,
            found.off_rounded,
        );
    }
}

/// `e^x` in `f64`. Past ±200 the `f32` results are `inf`, `0` (judged against the naive ones,
/// not this) or 1: the clamp only spares the C library's slow overflow path.
fn exp_f64(x: f64) -> f64 {
    x.clamp(-200.0, 200.0).exp()
}

/// `1 / (1 + e^−x)` in `f64`, as the naive backend computes it (clamped as [`exp_f64`]).
fn sigmoid_f64(x: f64) -> f64 {
    let x = x.clamp(-200.0, 200.0);
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

#[test]
fn exp_is_within_one_ulp_everywhere() {
    exhaustive(
        "exp",
        switchyard::ops::exp::handle(),
        try_exp,
        switchyard::ops::exp::redispatch,
        exp_f64,
    );
}

#[test]
fn log_is_within_one_ulp_everywhere() {
    exhaustive("log", log::handle(), try_log, log::redispatch, f64::ln);
}

#[test]
fn tanh_is_within_one_ulp_everywhere() {
    exhaustive(
        "tanh",
        tanh::handle(),
        try_tanh,
        tanh::redispatch,
        f64::tanh,
    );
}

#[test]
fn sigmoid_is_within_one_ulp_everywhere() {
    exhaustive(
        "sigmoid",
        sigmoid::handle(),
        try_sigmoid,
        sigmoid::redispatch,
        sigmoid_f64,
    );
}
