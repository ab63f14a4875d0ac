//! Shared by the `simd_*` tests: deterministic data with special values, the comparisons each
//! SIMD kernel must pass against the naive backend (the oracle), the ops that have SIMD kernels,
//! and whether the run is on an emulated CPU.

use switchyard::ops::{
    add, div, exp, log, matmul, mean, mul, neg, relu, relu_backward, sigmoid, sub, sum, tanh,
};
use switchyard::{OpHandle, Tensor};

/// Sizes around every vector width in use (4, 8, 16 lanes; 16 and 32 per reduction block):
/// empty, one, lanes − 1, lanes, lanes + 1, odd, and large.
pub const SIZES: &[usize] = &[
    0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 1001, 4099, 100_003,
];

/// Whether this run is on an emulated CPU (`tools/avx512-emu` sets `SWITCHYARD_TESTS_EMULATED`),
/// a few hundred times slower than a real one: cases chosen for size alone (past a threshold
/// between engines, not a kernel's edge) are left to native runs.
pub fn emulated() -> bool {
    std::env::var_os("SWITCHYARD_TESTS_EMULATED").is_some()
}

/// The special values every elementwise input contains somewhere (when it is long enough).
pub const SPECIALS: [f32; 11] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    -0.0,
    0.0,
    f32::MIN_POSITIVE,
    1.0e-40, // subnormal
    f32::MAX,
    f32::MIN,
    -1.0,
    1.0,
];

/// A small deterministic generator (xorshift64*), so failures reproduce.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform value in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }
}

/// `n` values in `[lo, hi)`, with the special values sprinkled in when `specials`.
pub fn data(n: usize, seed: u64, lo: f32, hi: f32, specials: bool) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut values: Vec<f32> = (0..n).map(|_| rng.uniform(lo, hi)).collect();
    if specials && n > 0 {
        for (i, special) in SPECIALS.iter().enumerate() {
            let at = (rng.next_u64() as usize).wrapping_add(i) % n;
            values[at] = *special;
        }
    }
    values
}

/// A vector tensor of [`data`].
pub fn tensor(n: usize, seed: u64, lo: f32, hi: f32, specials: bool) -> Tensor {
    Tensor::vector(&data(n, seed, lo, hi, specials))
}

/// Equal bit for bit, or both NaN (NaN payloads may differ between instruction orders).
pub fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Panics with the first index where `got` and `want` are not [`same`].
#[track_caller]
pub fn assert_exact(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| !same(got[i], want[i])) {
        panic!("{what}: element {i} is {:e}, naive {:e}", got[i], want[i]);
    }
}

/// Distance in units in the last place between two finite or infinite `f32` of one sign class
/// (`u32::MAX` when one is NaN and the other is not).
pub fn ulps(a: f32, b: f32) -> u32 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u32::MAX
        };
    }
    // Map the floats onto a line of integers that is monotonic in value.
    let key = |x: f32| {
        let bits = x.to_bits() as i64;
        if bits < 0x8000_0000 {
            bits
        } else {
            0x8000_0000 - bits
        }
    };
    (key(a) - key(b)).unsigned_abs().min(u64::from(u32::MAX)) as u32
}

/// The tolerance of a SIMD `sum` against the naive one (`cpu::simd`'s stated bound): the SIMD
/// sum adds at most 32 elements in each `f32` accumulator (error `31·2⁻²⁴·Σ|xᵢ|` at most), then
/// everything in `f64` (`n·2⁻⁵³·Σ|xᵢ|`); the naive one is in `f64` throughout; rounding each to
/// `f32` adds at most one `f32` ulp of the result between them.
pub fn sum_tolerance(values: &[f32], naive: f32) -> f64 {
    let magnitude: f64 = values.iter().map(|&x| f64::from(x).abs()).sum();
    let lanes = 31.0 * f64::from(f32::EPSILON) / 2.0 * magnitude;
    let order = values.len() as f64 * f64::EPSILON * magnitude;
    let ulp = f64::from(naive.abs()) * f64::from(f32::EPSILON);
    lanes + order + ulp + f64::from(f32::from_bits(1)) // + the smallest subnormal, for a zero result
}

/// Panics unless `got` is within [`sum_tolerance`] of `want`, or both are the same special value.
#[track_caller]
pub fn assert_sum_close(what: &str, values: &[f32], got: f32, want: f32) {
    if want.is_nan() || want.is_infinite() {
        assert!(same(got, want), "{what}: {got} vs naive {want}");
        return;
    }
    let tolerance = sum_tolerance(values, want);
    let error = (f64::from(got) - f64::from(want)).abs();
    assert!(
        error <= tolerance,
        "{what}: {got:e} vs naive {want:e}: error {error:e} > tolerance {tolerance:e}"
    );
}

/// The ops with a CPU SIMD kernel (a variant per instruction set), by name.
pub fn simd_ops() -> [(&'static str, OpHandle); 14] {
    [
        ("add", add::handle()),
        ("sub", sub::handle()),
        ("mul", mul::handle()),
        ("div", div::handle()),
        ("neg", neg::handle()),
        ("relu", relu::handle()),
        ("relu_backward", relu_backward::handle()),
        ("exp", exp::handle()),
        ("log", log::handle()),
        ("tanh", tanh::handle()),
        ("sigmoid", sigmoid::handle()),
        ("sum", sum::handle()),
        ("mean", mean::handle()),
        ("matmul", matmul::handle()),
    ]
}
