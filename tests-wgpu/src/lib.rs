//! What the wgpu tests share: which backends exist, the naive CPU oracle, inputs, and comparisons.
//!
//! Every check runs one test body per backend (the `backend_tests!` macro in `tests/ops.rs`): the
//! body computes an op on the backend's device and compares it with the naive CPU backend on the
//! same inputs. A GPU test skips, saying why on stderr, when no adapter exists; with
//! `REQUIRE_GPU=1` (as in CI) it fails instead.

use std::io::Write as _;

pub mod readme_table;

use switchyard::ops::{add, div, exp, mul, neg, relu, sub};
use switchyard::{Device, DispatchKey, Tensor};
use switchyard_backends as _; // links the CPU and wgpu kernels

/// A two-operand elementwise op.
pub type Binary = fn(&Tensor, &Tensor) -> Tensor;
/// A one-operand elementwise op.
pub type Unary = fn(&Tensor) -> Tensor;

/// The elementwise binary ops, with what the GPU must match the naive CPU backend to (WGSL lets
/// `f32` division be 2.5 ulp off).
pub const BINARY: [(&str, Binary, Tolerance); 4] = [
    ("add", add, Tolerance::Exact),
    ("sub", sub, Tolerance::Exact),
    ("mul", mul, Tolerance::Exact),
    ("div", div, Tolerance::Ulps(3)),
];

/// The elementwise unary ops, likewise.
pub const UNARY: [(&str, Unary, Tolerance); 3] = [
    ("neg", neg, Tolerance::Exact),
    ("relu", relu, Tolerance::Exact),
    // Inputs stay within [-8, 8], where Vulkan's bound for `exp` is 3 + 2·8 ULP.
    ("exp", exp, Tolerance::Ulps(19)),
];

/// The standard ops with a kernel of the wgpu backend's own (the others reach the GPU as
/// composites or layouts over these): `kernels.rs`'s, then the network ops of `kernels_nn.rs`.
pub const WGPU_KERNEL_OPS: [&str; 34] = [
    "add",
    "sub",
    "mul",
    "div",
    "div_rounded",
    "neg",
    "relu",
    "exp",
    "sum",
    "mean",
    "matmul",
    "full",
    "contiguous",
    "to",
    "copy_",
    "to_dtype",
    "log",
    "tanh",
    "sigmoid",
    "sqrt",
    "sum_dim",
    "mean_dim",
    "max_dim",
    "argmax",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "where",
    "arange",
    "rand",
    "randn",
];

/// How far the GPU's `randn` may be from the CPU's value, in `f32` ulp: the Box–Muller transform
/// in `f32` (`factories.wgsl`) rounds `ln` (3.5 ulp: a division and a series, or WGSL's `log`),
/// `sqrt` (WGSL: 4.5 ulp, and half of `ln`'s error), the cosine's series (1.5 ulp) and the
/// product; the CPU's result is rounded once from `f64`.
pub const RANDN_ULPS: u32 = 9;

/// A backend under test: the device its tensors live on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Backend(pub Device);

impl Backend {
    /// Whether the backend can run here. The CPU always can; the GPU needs an adapter, and
    /// without one this prints why `test` is skipped, or panics if `REQUIRE_GPU=1`.
    pub fn available(self, test: &str) -> bool {
        self.0 != Device::Wgpu || gpu_or_skip(test)
    }

    /// `x` (a CPU tensor) on this backend's device.
    #[track_caller]
    pub fn put(self, x: &Tensor) -> Tensor {
        let moved = x.to(self.0);
        assert_eq!(moved.device(), self.0);
        moved
    }
}

/// `x` (a CPU tensor) on the GPU.
#[track_caller]
pub fn gpu(x: &Tensor) -> Tensor {
    Backend(Device::Wgpu).put(x)
}

/// Whether a GPU adapter exists; if not, prints that `test` is skipped and why, or panics when
/// the environment says `REQUIRE_GPU=1`.
pub fn gpu_or_skip(test: &str) -> bool {
    match switchyard_backends::wgpu::adapter_info() {
        Ok(_) => true,
        Err(error) => {
            if std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("{test}: REQUIRE_GPU=1 but {error}");
            }
            // Straight to stderr: the test harness captures `eprintln!`, and a skip should show.
            let _ = writeln!(
                std::io::stderr(),
                "skipping {test}: {error} (REQUIRE_GPU=1 makes this a failure)"
            );
            false
        }
    }
}

/// `f` run on the naive CPU backend only: the oracle.
pub fn naive<T>(f: impl FnOnce() -> T) -> T {
    let _naive = switchyard::exclude(DispatchKey::CpuSimd);
    f()
}

/// `len` deterministic values spread over `[-range, range]` (no zeros, no subnormals).
pub fn values(len: usize, seed: u64, range: f32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // 24 random bits to a float in [0, 1), then to [-range, range], skipping near-zero.
            let unit = (state >> 40) as f32 / (1u64 << 24) as f32;
            let v = (2.0 * unit - 1.0) * range;
            if v.abs() < 1e-3 { 0.5 } else { v }
        })
        .collect()
}

/// A CPU tensor of `shape` filled by [`values`].
pub fn tensor(shape: &[usize], seed: u64, range: f32) -> Tensor {
    Tensor::from_vec::<f32>(values(shape.iter().product(), seed, range), shape).expect("values fit")
}

/// How close a backend's value must be to the oracle's.
#[derive(Clone, Copy, Debug)]
pub enum Tolerance {
    /// Bit for bit, except that any NaN matches any NaN and `0 == -0`.
    Exact,
    /// Within this many units in the last place (GPU division and `exp` are not correctly
    /// rounded: Vulkan allows 2.5 ULP for division and more for `exp`).
    Ulps(u32),
    /// `|actual - expected| <= rel * scale`, where `scale` is given per element (for sums and
    /// products: the same computation over absolute values, which bounds the rounding error).
    Scaled(f32),
}

fn ulps_apart(a: f32, b: f32) -> u32 {
    // Map the floats to a monotonic integer line, then measure the distance.
    let key = |x: f32| {
        let bits = x.to_bits() as i32;
        if bits < 0 { i32::MIN - bits } else { bits }
    };
    key(a).abs_diff(key(b))
}

/// Asserts that `actual` (on `device`) matches `expected` (on the CPU) within `tolerance`; for
/// [`Tolerance::Scaled`], `scale` gives each element's error bound before the factor.
#[track_caller]
pub fn assert_matches(
    what: &str,
    device: Device,
    actual: &Tensor,
    expected: &Tensor,
    tolerance: Tolerance,
    scale: Option<&Tensor>,
) {
    assert_eq!(actual.device(), device, "{what}: result device");
    assert_eq!(actual.shape(), expected.shape(), "{what}: shape");
    let got = actual.to_vec::<f32>();
    let want = expected.to_vec::<f32>();
    let scale = scale.map(Tensor::to_vec);
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&a, &e)) in got.iter().zip(&want).enumerate() {
        let ok = if a.is_nan() || e.is_nan() {
            a.is_nan() && e.is_nan()
        } else if !e.is_finite() || !a.is_finite() {
            a == e
        } else {
            match tolerance {
                Tolerance::Exact => a == e,
                Tolerance::Ulps(n) => a == e || ulps_apart(a, e) <= n,
                Tolerance::Scaled(rel) => {
                    let bound = scale.as_ref().map_or(e.abs(), |s| s[i]);
                    (a - e).abs() <= rel * bound + f32::MIN_POSITIVE
                }
            }
        };
        assert!(
            ok,
            "{what}: element {i} of {}: got {a:e}, the naive CPU backend gives {e:e} \
             ({tolerance:?})",
            got.len()
        );
    }
}
