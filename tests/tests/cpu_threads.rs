//! The CPU backends' worker threads (`switchyard_backends::cpu::threads`): every op gives the
//! same bits at every thread count (sizes on both sides of each op's threshold, views too),
//! `sum`/`mean` stay within the bound `cpu::simd` states of the exact sum, and the thread-count
//! API refuses what it cannot do without changing anything.

use std::sync::Mutex;

use switchyard::Tensor;
use switchyard::ops::{add, exp, matmul, mean, mul, relu, sum, tanh, transpose};
use switchyard_backends::{num_threads, reset_num_threads, set_num_threads};
use switchyard_tests::simd_check::data;

/// The count is process-wide and these tests change it: one at a time.
static COUNT: Mutex<()> = Mutex::new(());

/// `f()`'s result as bits at 1, 2, 3 and 8 threads; panics unless all four are the same.
fn same_bits_at_every_count(what: &str, f: impl Fn() -> Tensor) {
    let _one_at_a_time = COUNT.lock().unwrap_or_else(|e| e.into_inner());
    let mut first: Option<(Vec<usize>, Vec<u32>)> = None;
    for threads in [1, 2, 3, 8] {
        set_num_threads(threads).unwrap();
        let result = f();
        let bits = (
            result.shape().to_vec(),
            result.to_vec::<f32>().iter().map(|v| v.to_bits()).collect(),
        );
        match &first {
            None => first = Some(bits),
            Some(want) => assert!(*want == bits, "{what}: {threads} threads differ from 1"),
        }
    }
    reset_num_threads();
}

#[test]
fn elementwise_ops_give_the_same_bits_at_every_thread_count() {
    // 16K + 7: split for `exp` and `tanh` (from 16K), not for `add`, `mul`, `relu` (from 64K).
    for n in [1000, (1 << 14) + 7, (1 << 16) + 13, (1 << 20) + 5] {
        let (xs, ys) = (data(n, 1, -10.0, 10.0, true), data(n, 2, -10.0, 10.0, true));
        let (x, y) = (Tensor::vector(&xs), Tensor::vector(&ys));
        same_bits_at_every_count(&format!("add n={n}"), || add(&x, &y));
        same_bits_at_every_count(&format!("mul n={n}"), || mul(&x, &y));
        same_bits_at_every_count(&format!("exp n={n}"), || exp(&x));
        same_bits_at_every_count(&format!("tanh n={n}"), || tanh(&x));
        same_bits_at_every_count(&format!("relu n={n}"), || relu(&x));
        // And against one element at a time: the parts cover every element once.
        let sums = add(&x, &y).to_vec::<f32>();
        for (i, (a, b)) in xs.iter().zip(&ys).enumerate() {
            assert!(
                (a + b).to_bits() == sums[i].to_bits() || (a + b).is_nan(),
                "add n={n} [{i}]"
            );
        }
    }
}

#[test]
fn sums_give_the_same_bits_at_every_thread_count() {
    for n in [0, 1, 1023, 1025, (1 << 17) + 1, (1 << 20) + 7, 3_000_001] {
        let x = Tensor::vector(&data(n, n as u64, -1.0, 1.0, false));
        same_bits_at_every_count(&format!("sum n={n}"), || sum(&x));
        same_bits_at_every_count(&format!("mean n={n}"), || mean(&x));
    }
}

#[test]
fn matmul_gives_the_same_bits_at_every_thread_count() {
    for (m, k, n) in [
        (64, 64, 64),
        (200, 150, 100),
        (1031, 64, 300),
        (256, 256, 256),
    ] {
        let a = Tensor::from_vec(data(m * k, 3, -1.0, 1.0, false), &[m, k]).unwrap();
        let b = Tensor::from_vec(data(k * n, 4, -1.0, 1.0, false), &[k, n]).unwrap();
        same_bits_at_every_count(&format!("matmul {m}x{k}x{n}"), || matmul(&a, &b));
        // A transposed left operand: a view, strides (1, m).
        let at = Tensor::from_vec(data(k * m, 5, -1.0, 1.0, false), &[k, m]).unwrap();
        same_bits_at_every_count(&format!("matmul transposed {m}x{k}x{n}"), || {
            matmul(&transpose(&at, 0, 1), &b)
        });
    }
}

/// `|sum − exact| ≤ 1 ulp(sum) + 2⁻¹⁹·Σ|xᵢ|` (at most 32 elements per `f32` accumulator:
/// `31·2⁻²⁴·Σ|xᵢ|`), plus the `f64` part's `n·2⁻⁵³·Σ|xᵢ|` and the reference's own as much.
fn assert_within_stated_bound(what: &str, values: &[f32], got: f32) {
    let exact: f64 = values.iter().map(|&v| f64::from(v)).sum();
    let magnitude: f64 = values.iter().map(|&v| f64::from(v).abs()).sum();
    let ulp = f64::from(got.abs()) * f64::from(f32::EPSILON);
    let bound =
        ulp + magnitude * 2f64.powi(-19) + 2.0 * values.len() as f64 * f64::EPSILON * magnitude;
    let error = (f64::from(got) - exact).abs();
    assert!(
        error <= bound,
        "{what}: {got} vs exact {exact}: error {error:e} > {bound:e}"
    );
}

#[test]
fn sums_are_within_the_stated_bound_of_the_exact_sum() {
    let _one_at_a_time = COUNT.lock().unwrap_or_else(|e| e.into_inner());
    for threads in [1, 2] {
        set_num_threads(threads).unwrap();
        for n in [100, 4099, 1 << 20, 16_000_003] {
            // Mixed signs (cancellation) and one sign (a large total, every rounding one way).
            for (lo, hi) in [(-1.0, 1.0), (0.0, 1000.0)] {
                let values = data(n, n as u64 + 9, lo, hi, false);
                let x = Tensor::vector(&values);
                let got = sum(&x).to_vec::<f32>()[0];
                assert_within_stated_bound(&format!("sum n={n} [{lo}, {hi})"), &values, got);
                let mean = mean(&x).to_vec::<f32>()[0];
                let scaled: Vec<f32> = values.iter().map(|v| v / n as f32).collect();
                assert_within_stated_bound(&format!("mean n={n}"), &scaled, mean);
            }
        }
    }
    reset_num_threads();
}

#[test]
fn lanes_that_would_overflow_in_f32_still_give_the_f64_sum() {
    // MAX twice in one accumulator, -MAX twice in another: 0 in `f64`, inf - inf in `f32`.
    let mut values = vec![0.0f32; 5000];
    values[0] = f32::MAX;
    values[32] = f32::MAX;
    values[1] = -f32::MAX;
    values[33] = -f32::MAX;
    // And something to add in the next blocks.
    values[2000..2004].fill(1.0);
    values[4999] = 0.5;
    let got = sum(&Tensor::vector(&values)).to_vec::<f32>()[0];
    assert_eq!(got, 4.5);
}

#[test]
fn a_count_of_zero_is_refused_and_changes_nothing() {
    let _one_at_a_time = COUNT.lock().unwrap_or_else(|e| e.into_inner());
    set_num_threads(3).unwrap();
    let error = set_num_threads(0).unwrap_err().to_string();
    assert_eq!(
        error,
        "set_num_threads(0): the count must be at least 1 (1 runs every op on its calling thread); \
         the CPU backends keep 3 thread(s)"
    );
    assert_eq!(num_threads(), 3);
    reset_num_threads();
    assert!(num_threads() >= 1);
}
