//! Random numbers: a counter-based generator (Philox4x32-10) and each device's generator state.
//!
//! Element `i` of a `rand`/`randn` call with seed `s` and offset `o` is a pure function of
//! `(s, o + i)`: the Philox4x32-10 block of counter `o + i` under key `s` (Salmon et al.,
//! "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the generator of PyTorch's CUDA
//! backend). No element depends on another, on the thread or on the backend that computes it, so
//! the CPU and the GPU give the same values for the same seed and offset (the GPU's `randn`
//! within its transcendental functions' accuracy), and kernels need no state: the ops
//! [`rand_seeded`](fn@crate::ops::rand_seeded) and [`randn_seeded`](fn@crate::ops::randn_seeded)
//! take `(seed, offset)` as arguments.
//!
//! The state is per device: a seed ([`manual_seed`]) and the next unused counter. [`rand`] and
//! [`randn`] take the next `numel` counters of their device atomically (two threads never share
//! one) and call the ops. A device's first seed is [`DEFAULT_SEED`], so a program that never
//! seeds is still reproducible, as in PyTorch.

use std::sync::Mutex;

use switchyard::{DType, DispatchError};

use crate::ops::{try_rand_seeded, try_randn_seeded};
use crate::{Device, Tensor};

type Result<T> = std::result::Result<T, DispatchError>;

/// Every device's seed before [`manual_seed`] (PyTorch's default CPU seed).
pub const DEFAULT_SEED: u64 = 67_280_421_310_721;

/// A device's generator: its seed and the first counter not yet handed out.
#[derive(Clone, Copy, Debug)]
struct State {
    seed: u64,
    next: u64,
}

/// One state per device, indexed like [`Device::ALL`].
static STATES: [Mutex<State>; Device::ALL.len()] = [const {
    Mutex::new(State {
        seed: DEFAULT_SEED,
        next: 0,
    })
}; Device::ALL.len()];

fn state(device: Device) -> std::sync::MutexGuard<'static, State> {
    let index = Device::ALL
        .iter()
        .position(|&d| d == device)
        .expect("Device::ALL lists every device");
    // A poisoned lock still holds a consistent state: every critical section is two plain
    // stores.
    STATES[index].lock().unwrap_or_else(|e| e.into_inner())
}

/// Seeds `device`'s generator and restarts its counter: the calls that follow give the values
/// they gave after the last `manual_seed(device, seed)` with the same seed.
pub fn manual_seed(device: Device, seed: u64) {
    *state(device) = State { seed, next: 0 };
}

/// `device`'s current seed ([`DEFAULT_SEED`] until [`manual_seed`]).
pub fn initial_seed(device: Device) -> u64 {
    state(device).seed
}

/// Takes the next `count` counters of `device`'s generator: its seed and the first of them. The
/// counter wraps after 2⁶⁴ values (no program draws that many).
pub fn next_counters(device: Device, count: u64) -> (u64, u64) {
    let mut state = state(device);
    let first = state.next;
    state.next = first.wrapping_add(count);
    (state.seed, first)
}

/// Values uniform in `[0, 1)` of `shape` and `dtype` (a float dtype) on `device`, from the
/// device's generator: the op [`rand_seeded`](fn@crate::ops::rand_seeded) at the next
/// `numel` counters. Panics with [`try_rand`]'s error.
#[track_caller]
pub fn rand(shape: &[usize], dtype: DType, device: Device) -> Tensor {
    try_rand(shape, dtype, device).unwrap_or_else(|e| e.panic())
}

/// [`rand`], returning its error (a shape that overflows, a non-float dtype, no kernel for the
/// device) instead of panicking. A refused call takes no counters.
pub fn try_rand(shape: &[usize], dtype: DType, device: Device) -> Result<Tensor> {
    let (seed, offset) = take("rand", shape, dtype, device)?;
    try_rand_seeded(shape, seed as i64, offset as i64, dtype, device)
}

/// Values of the standard normal distribution, of `shape` and `dtype` (a float dtype) on
/// `device`, from the device's generator: the op
/// [`randn_seeded`](fn@crate::ops::randn_seeded) at the next `numel` counters. Panics with
/// [`try_randn`]'s error.
#[track_caller]
pub fn randn(shape: &[usize], dtype: DType, device: Device) -> Tensor {
    try_randn(shape, dtype, device).unwrap_or_else(|e| e.panic())
}

/// [`randn`], returning its error instead of panicking. A refused call takes no counters.
pub fn try_randn(shape: &[usize], dtype: DType, device: Device) -> Result<Tensor> {
    let (seed, offset) = take("randn", shape, dtype, device)?;
    try_randn_seeded(shape, seed as i64, offset as i64, dtype, device)
}

/// The checks the op would make first (so a refused call consumes nothing), then the counters.
fn take(op: &'static str, shape: &[usize], dtype: DType, device: Device) -> Result<(u64, u64)> {
    crate::rules::random(op, dtype)?;
    let numel = Tensor::checked_numel(op, shape, dtype)?;
    Ok(next_counters(device, numel as u64))
}

/// The Philox4x32 round multipliers and key increments (Random123's constants).
const PHILOX_M: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];
const PHILOX_W: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];

/// The Philox4x32-10 block of `counter` (its low and high words, then two zero words) under
/// `key` (low and high words): four independent uniform 32-bit words. The GPU's
/// `random.wgsl` computes the same function.
pub fn philox(key: u64, counter: u64) -> [u32; 4] {
    philox4x32_10(
        [counter as u32, (counter >> 32) as u32, 0, 0],
        [key as u32, (key >> 32) as u32],
    )
}

/// Random123's `philox4x32_R` with `R = 10`: ten rounds, the key bumped between rounds.
pub fn philox4x32_10(mut ctr: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    for round in 0..10 {
        if round > 0 {
            key = [
                key[0].wrapping_add(PHILOX_W[0]),
                key[1].wrapping_add(PHILOX_W[1]),
            ];
        }
        let p0 = u64::from(PHILOX_M[0]) * u64::from(ctr[0]);
        let p1 = u64::from(PHILOX_M[1]) * u64::from(ctr[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        ctr = [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0];
    }
    ctr
}

/// Significand bits of a float dtype (what a uniform value of it is made of).
fn digits(dtype: DType) -> u32 {
    match dtype {
        DType::F16 => 11,
        DType::BF16 => 8,
        DType::F64 => 53,
        _ => 24,
    }
}

/// A uniform value in `[0, 1)` from `words`, with the `digits` significand bits of the dtype it
/// is for: `k · 2^-digits` for a random `k < 2^digits`, so every value is exact in the dtype and
/// none rounds up to 1 (a 24-bit value converted to `f16` could). Up to 32 bits come from the
/// first word, the rest (for `f64`) from the second.
fn unit(words: [u32; 2], digits: u32) -> f64 {
    let k = if digits <= 32 {
        u64::from(words[0] >> (32 - digits))
    } else {
        (u64::from(words[0]) << (digits - 32)) | u64::from(words[1] >> (64 - digits))
    };
    k as f64 * (-f64::from(digits)).exp2()
}

/// Element `counter` of `rand` with `seed` in float `dtype`: uniform in `[0, 1)`, exact in the
/// dtype.
pub fn uniform_value(dtype: DType, seed: u64, counter: u64) -> f64 {
    let w = philox(seed, counter);
    unit([w[0], w[1]], digits(dtype))
}

/// Element `counter` of `randn` with `seed` in float `dtype`, before its rounding to the dtype:
/// Box–Muller, `sqrt(-2 ln u1) · cos(π (2 u2 - 1))`, from `u1` in `(0, 1]` (so the logarithm
/// is finite) and `u2` in `[0, 1)`, each with the dtype's significand bits (at least `f32`'s),
/// computed in `f64`. The angle lies in `[-π, π)`, where GPU cosines are accurate.
pub fn normal_value(dtype: DType, seed: u64, counter: u64) -> f64 {
    let w = philox(seed, counter);
    let digits = digits(dtype).max(24);
    let step = (-f64::from(digits)).exp2();
    let u1 = unit([w[0], w[1]], digits) + step;
    let u2 = unit([w[2], w[3]], digits);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::PI * (2.0 * u2 - 1.0)).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known answers for philox4x32-10 (`kat_vectors`).
    #[test]
    fn philox_gives_random123s_known_answers() {
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn uniform_values_are_exact_in_their_dtype_and_below_one() {
        for dtype in [DType::F16, DType::BF16, DType::F32, DType::F64] {
            for counter in 0..1000 {
                let v = uniform_value(dtype, 7, counter);
                assert!((0.0..1.0).contains(&v), "{dtype} {v}");
                let scaled = v * f64::from(digits(dtype)).exp2();
                assert_eq!(scaled, scaled.trunc(), "{dtype} {v}");
            }
        }
        // The largest value of each dtype stays below 1.
        assert!(unit([u32::MAX; 2], 11) < 1.0 && unit([u32::MAX; 2], 53) < 1.0);
    }

    #[test]
    fn the_counter_is_taken_once_per_element_and_a_seed_restarts_it() {
        // A device of its own (no other test draws on it).
        let device = Device::PrivateUse3;
        manual_seed(device, 5);
        assert_eq!(next_counters(device, 10), (5, 0));
        assert_eq!(next_counters(device, 3), (5, 10));
        manual_seed(device, 6);
        assert_eq!(initial_seed(device), 6);
        assert_eq!(next_counters(device, 1), (6, 0));
    }
}
