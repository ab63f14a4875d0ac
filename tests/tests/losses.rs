//! The composites of a classifier's last layer: `softmax`, `log_softmax`,
//! `cross_entropy` on the CPU (SIMD and naive) against values computed by hand and by a plain
//! `f64` loop, huge logits without overflow, their gradients through the decomposition, and
//! their errors. (`gradcheck` of each is in `autograd.rs`.)

use switchyard::ops::{
    cross_entropy, log_softmax, softmax, try_cross_entropy, try_log_softmax, try_softmax,
};
use switchyard::{DType, Device, DispatchKey, SlotOrigin, Tensor, find_op};
use switchyard_backends as _; // links the CPU kernels
use switchyard_example_downstream::to_toy;

fn f32s(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec::<f32>(values.to_vec(), shape).unwrap()
}

fn f64s(values: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_vec::<f64>(values.to_vec(), shape).unwrap()
}

fn i64s(values: &[i64]) -> Tensor {
    Tensor::from_vec::<i64>(values.to_vec(), &[values.len()]).unwrap()
}

/// Close in absolute terms, element by element, with equal lengths.
#[track_caller]
fn close(actual: &Tensor, expected: &[f64], tolerance: f64) {
    let values = actual.try_to_f64_vec().unwrap();
    assert_eq!(values.len(), expected.len(), "{actual:?}");
    for (i, (a, e)) in values.iter().zip(expected).enumerate() {
        assert!(
            (a - e).abs() <= tolerance,
            "element {i}: got {a}, expected {e} (all: {values:?})"
        );
    }
}

/// Runs `f` with the best CPU kernels, then on the naive backend alone.
fn on_both_cpu_backends(mut f: impl FnMut()) {
    f();
    let _naive = switchyard::exclude(DispatchKey::CpuSimd);
    f();
}

/// Deterministic values in [-3, 3).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 6000) as f64 / 1000.0 - 3.0
        })
        .collect()
}

/// `log_softmax` of each row of a row-major `[rows, cols]` matrix, the textbook way in `f64`.
fn reference_log_softmax(x: &[f64], cols: usize) -> Vec<f64> {
    x.chunks(cols)
        .flat_map(|row| {
            let total: f64 = row.iter().map(|v| v.exp()).sum();
            row.iter().map(move |v| v - total.ln())
        })
        .collect()
}

#[test]
fn softmax_and_log_softmax_of_known_values_along_any_dimension() {
    on_both_cpu_backends(|| {
        let ln3 = 3f64.ln();
        let x = f64s(&[0.0, ln3, 5.0, 5.0], &[2, 2]);
        close(&softmax(&x, 1), &[0.25, 0.75, 0.5, 0.5], 1e-15);
        close(
            &log_softmax(&x, 1),
            &[0.25f64.ln(), 0.75f64.ln(), 0.5f64.ln(), 0.5f64.ln()],
            1e-15,
        );
        // Along dim 0: the columns are the distributions.
        let x = f64s(&[0.0, 7.0, ln3, 7.0], &[2, 2]);
        close(&softmax(&x, 0), &[0.25, 0.5, 0.75, 0.5], 1e-15);
        // The middle dimension of a [2, 3, 2] tensor, against the textbook formula.
        let v = values(12, 3);
        let x = f64s(&v, &[2, 3, 2]);
        let mut expected = vec![0.0; 12];
        for a in 0..2 {
            for c in 0..2 {
                let at = |b: usize| a * 6 + b * 2 + c;
                let total: f64 = (0..3).map(|b| v[at(b)].exp()).sum();
                for b in 0..3 {
                    expected[at(b)] = v[at(b)].exp() / total;
                }
            }
        }
        let p = softmax(&x, 1);
        assert_eq!(p.shape(), [2, 3, 2]);
        assert_eq!(p.dtype(), DType::F64);
        close(&p, &expected, 1e-14);
        // f32 keeps its dtype.
        let p = softmax(&f32s(&[0.0, 0.0, 0.0, 0.0], &[4]), 0);
        assert_eq!(p.dtype(), DType::F32);
        close(&p, &[0.25; 4], 0.0);
    });
}

#[test]
fn huge_logits_neither_overflow_nor_lose_the_answer() {
    on_both_cpu_backends(|| {
        // exp(1000) is infinite in f32 and f64: the naive formula gives NaN here.
        let x = f32s(&[1000.0, 1000.0, 0.0, -1000.0, -1000.0, -1000.0], &[2, 3]);
        close(
            &softmax(&x, 1),
            &[0.5, 0.5, 0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
            1e-7,
        );
        let lp = log_softmax(&f32s(&[1000.0, 0.0, 88.0, 89.0], &[2, 2]), 1);
        // log σ(-1000) = -1000 (to f32's precision), where log(softmax) would be -inf.
        let l = lp.to_vec::<f32>();
        assert!(l.iter().all(|v| v.is_finite()), "{l:?}");
        close(
            &lp,
            &[
                0.0,
                -1000.0,
                -(1.0 + 1f64.exp()).ln(),
                -(1.0 + (-1f64).exp()).ln(),
            ],
            1e-5,
        );
        // Cross-entropy of a confident right and a confident wrong answer.
        let logits = f32s(&[1000.0, 0.0, 1000.0, 0.0], &[2, 2]);
        close(&cross_entropy(&logits, &i64s(&[0, 0])), &[0.0], 0.0);
        close(&cross_entropy(&logits, &i64s(&[1, 1])), &[1000.0], 1e-3);
        close(&cross_entropy(&logits, &i64s(&[0, 1])), &[500.0], 1e-3);
    });
}

#[test]
fn cross_entropy_is_the_mean_negative_log_probability_of_each_target() {
    on_both_cpu_backends(|| {
        // Two equal logits: −log ½ each.
        let loss = cross_entropy(&f64s(&[0.0, 0.0], &[1, 2]), &i64s(&[1]));
        assert_eq!(loss.shape(), [] as [usize; 0]);
        assert_eq!(loss.dtype(), DType::F64);
        close(&loss, &[2f64.ln()], 1e-15);

        let (n, c) = (6, 4);
        let v = values(n * c, 11);
        let targets = [3i64, 0, 1, 1, 2, 3];
        let reference = reference_log_softmax(&v, c);
        let expected = -(0..n)
            .map(|row| reference[row * c + targets[row] as usize])
            .sum::<f64>()
            / n as f64;
        close(
            &cross_entropy(&f64s(&v, &[n, c]), &i64s(&targets)),
            &[expected],
            1e-14,
        );
        // f32 logits, i32 and u8 targets.
        let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        let as_i32 = Tensor::from_vec(targets.iter().map(|&t| t as i32).collect(), &[n]).unwrap();
        let as_u8 = Tensor::from_vec(targets.iter().map(|&t| t as u8).collect(), &[n]).unwrap();
        let logits = f32s(&v32, &[n, c]);
        close(&cross_entropy(&logits, &as_i32), &[expected], 1e-5);
        close(&cross_entropy(&logits, &as_u8), &[expected], 1e-5);
        close(&cross_entropy(&logits, &i64s(&targets)), &[expected], 1e-5);
    });
}

#[test]
fn gradients_flow_through_the_decomposition() {
    // d cross_entropy / d logits = (softmax(logits) − one_hot(targets)) / N.
    let (n, c) = (3, 4);
    let v = values(n * c, 5);
    let targets = [2i64, 0, 3];
    let mut logits = f64s(&v, &[n, c]);
    logits.requires_grad_(true);
    let loss = cross_entropy(&logits, &i64s(&targets));
    assert!(loss.requires_grad());
    loss.backward();
    let log_p = reference_log_softmax(&v, c);
    let expected: Vec<f64> = (0..n * c)
        .map(|i| {
            let hit = if targets[i / c] as usize == i % c {
                1.0
            } else {
                0.0
            };
            (log_p[i].exp() - hit) / n as f64
        })
        .collect();
    close(&logits.grad().unwrap(), &expected, 1e-15);

    // Σ softmax along its dim is 1 whatever x is: its gradient is zero.
    let mut x = f64s(&values(6, 9), &[2, 3]);
    x.requires_grad_(true);
    switchyard::ops::sum(&softmax(&x, 1)).backward();
    close(&x.grad().unwrap(), &[0.0; 6], 1e-15);

    // No derivative of their own: autograd's slot holds the body, and the results record the
    // ops it called.
    for op in ["softmax", "log_softmax", "cross_entropy"] {
        let handle = find_op(op).unwrap();
        assert!(handle.has_composite(), "{op}");
        assert_eq!(
            handle.slot(DispatchKey::AutogradCpu).unwrap(),
            SlotOrigin::Composite,
            "{op}"
        );
    }
    assert_eq!(loss.grad_fn(), Some("neg"));
}

#[test]
fn empty_extents_and_empty_batches() {
    let x = f32s(&[], &[2, 0]);
    let p = softmax(&x, 1);
    assert_eq!(p.shape(), [2, 0]);
    assert_eq!(log_softmax(&x, 1).shape(), [2, 0]);
    // No rows: along dim 1 the maximum of each (absent) row is never needed.
    assert_eq!(softmax(&f32s(&[], &[0, 3]), 1).shape(), [0, 3]);
    // The mean over no examples is NaN, as PyTorch's.
    let loss = cross_entropy(&f32s(&[], &[0, 3]), &i64s(&[]));
    assert!(loss.to_vec::<f32>()[0].is_nan());
}

#[test]
fn softmax_errors_name_the_op_the_dtype_and_the_shape() {
    let ints = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
    for (op, e) in [
        ("softmax", try_softmax(&ints, 0).unwrap_err().to_string()),
        (
            "log_softmax",
            try_log_softmax(&ints, 0).unwrap_err().to_string(),
        ),
    ] {
        assert!(
            e.contains(op) && e.contains("i64") && e.contains("[3]") && e.contains("to_dtype"),
            "{e}"
        );
    }
    let x = f32s(&[1.0; 6], &[2, 3]);
    let e = try_softmax(&x, 2).unwrap_err().to_string();
    assert!(
        e.contains("softmax") && e.contains("dim 2") && e.contains("[2, 3]"),
        "{e}"
    );
    let e = try_log_softmax(&f32s(&[1.0], &[]), 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("log_softmax") && e.contains("rank 0"), "{e}");
}

#[test]
fn cross_entropy_errors_name_shapes_dtypes_and_the_bad_target() {
    let logits = f32s(&[0.0; 6], &[2, 3]);
    let expect = |e: String, words: &[&str]| {
        assert!(e.contains("cross_entropy"), "{e}");
        for w in words {
            assert!(e.contains(w), "`{w}` missing from: {e}");
        }
    };
    // Shapes: logits not [N, C], targets not [N], N differing.
    let e = try_cross_entropy(&f32s(&[0.0; 3], &[3]), &i64s(&[0, 1, 2])).unwrap_err();
    expect(e.to_string(), &["[3]", "[N, C]", "f32", "i64"]);
    let e = try_cross_entropy(&logits, &i64s(&[0, 1, 2])).unwrap_err();
    expect(e.to_string(), &["[2, 3]", "[3]", "[N]"]);
    let two_d = Tensor::from_vec(vec![0i64, 1], &[2, 1]).unwrap();
    let e = try_cross_entropy(&logits, &two_d).unwrap_err();
    expect(e.to_string(), &["[2, 1]", "[N]"]);
    // Dtypes: float targets (probabilities are not supported), integer logits.
    let e = try_cross_entropy(&logits, &f32s(&[0.0, 1.0], &[2])).unwrap_err();
    expect(e.to_string(), &["targets", "f32", "integer", "i64"]);
    let int_logits = Tensor::from_vec(vec![0i64; 6], &[2, 3]).unwrap();
    let e = try_cross_entropy(&int_logits, &i64s(&[0, 1])).unwrap_err();
    expect(e.to_string(), &["logits", "i64", "float", "to_dtype"]);
    // Targets outside 0..C, either side.
    let e = try_cross_entropy(&logits, &i64s(&[0, 3])).unwrap_err();
    expect(e.to_string(), &["target 3", "row 1", "0..3"]);
    let e = try_cross_entropy(&logits, &i64s(&[-1, 0])).unwrap_err();
    expect(e.to_string(), &["target -1", "row 0", "0..3"]);
    // Two devices: refused by the dispatcher before the body runs.
    let toy = to_toy(&logits).unwrap();
    assert_ne!(toy.device(), Device::Cpu);
    let e = try_cross_entropy(&toy, &i64s(&[0, 1])).unwrap_err();
    expect(e.to_string(), &["different devices", "cpu", "toy"]);
}
