//! The standard ops (`switchyard::ops`) on the CPU, against values computed by hand: ordinary
//! values, empty and one-element tensors, 0-d and 2-D shapes, IEEE special values, shape errors in
//! both the `try_` and the plain (panicking) form, and the same results with `CpuSimd` excluded.

use std::panic::{AssertUnwindSafe, catch_unwind};
use switchyard::DType;

use switchyard::ops::{
    add, div, exp, full, matmul, mean, mul, neg, relu, sub, sum, try_add, try_div, try_matmul,
    try_mul, try_sub,
};
use switchyard::{Device, DispatchError, DispatchKey, ErrorKind, Tensor};
use switchyard_backends as _; // links the CPU kernels

const INF: f32 = f32::INFINITY;
const NAN: f32 = f32::NAN;

fn t(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec::<f32>(values.to_vec(), shape).unwrap()
}

/// Equal shape and equal values, where NaN matches NaN (and `0.0 == -0.0`, as `==` says).
#[track_caller]
fn check(actual: &Tensor, shape: &[usize], expected: &[f32]) {
    assert_eq!(actual.shape(), shape, "shape of {actual:?}");
    let values = actual.to_vec::<f32>();
    assert_eq!(values.len(), expected.len(), "length of {actual:?}");
    for (i, (a, e)) in values.iter().zip(expected).enumerate() {
        assert!(
            a == e || (a.is_nan() && e.is_nan()),
            "element {i}: got {a}, expected {e} (tensor {actual:?})"
        );
    }
}

/// Like [`check`], within a relative tolerance (for transcendental functions).
#[track_caller]
fn check_close(actual: &Tensor, shape: &[usize], expected: &[f32]) {
    assert_eq!(actual.shape(), shape, "shape of {actual:?}");
    let values = actual.to_vec::<f32>();
    assert_eq!(values.len(), expected.len(), "length of {actual:?}");
    for (i, (a, e)) in values.iter().zip(expected).enumerate() {
        let close = if e.is_finite() {
            (a - e).abs() <= 1e-6 * e.abs().max(1.0)
        } else {
            a == e || (a.is_nan() && e.is_nan())
        };
        assert!(
            close,
            "element {i}: got {a}, expected {e} (tensor {actual:?})"
        );
    }
}

/// Runs a plain op call that must panic and returns the panic message.
#[track_caller]
fn panic_message(call: impl FnOnce() -> Tensor) -> String {
    let payload = catch_unwind(AssertUnwindSafe(call)).expect_err("the plain call must panic");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast::<&'static str>()
            .map(|s| (*s).to_owned())
            .expect("panic payload is a string"),
    }
}

/// The error is a shape error of `op` whose text names `op` and every shape in `shapes`.
#[track_caller]
fn check_shape_error(error: &DispatchError, op: &str, shapes: &[&str]) {
    match error.kind() {
        ErrorKind::Shape { op: kind_op, .. } => assert_eq!(*kind_op, op, "{error}"),
        other => panic!("expected a shape error, got {other:?}"),
    }
    assert_eq!(error.op(), op);
    let text = error.to_string();
    assert!(text.contains(&format!("op `{op}`")), "{text}");
    assert!(text.contains("shape"), "{text}");
    for shape in shapes {
        assert!(text.contains(shape), "`{shape}` missing from: {text}");
    }
}

// ---- elementwise binary ops ----

#[test]
fn add_by_hand() {
    let x = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let y = t(&[10.0, 20.0, 30.0, -1.0, -2.0, -3.5], &[2, 3]);
    check(&add(&x, &y), &[2, 3], &[11.0, 22.0, 33.0, 3.0, 3.0, 2.5]);
    check(&add(&Tensor::vector(&[]), &Tensor::vector(&[])), &[0], &[]);
    check(
        &add(&Tensor::vector(&[1.5]), &Tensor::vector(&[2.25])),
        &[1],
        &[3.75],
    );
    check(
        &add(&Tensor::scalar(2.0), &Tensor::scalar(-5.0)),
        &[],
        &[-3.0],
    );
    // Empty along one axis of a 2-D shape keeps the shape.
    check(&add(&t(&[], &[2, 0]), &t(&[], &[2, 0])), &[2, 0], &[]);
    check(
        &add(
            &Tensor::vector(&[INF, INF, NAN, f32::MAX]),
            &Tensor::vector(&[1.0, -INF, 1.0, f32::MAX]),
        ),
        &[4],
        &[INF, NAN, NAN, INF],
    );
}

#[test]
fn sub_by_hand() {
    let x = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
    let y = t(&[0.5, 4.0, 3.0, -4.0, 10.0, 0.0], &[3, 2]);
    check(&sub(&x, &y), &[3, 2], &[0.5, -2.0, 0.0, 8.0, -5.0, 6.0]);
    check(&sub(&Tensor::vector(&[]), &Tensor::vector(&[])), &[0], &[]);
    check(
        &sub(&Tensor::vector(&[1.0]), &Tensor::vector(&[3.0])),
        &[1],
        &[-2.0],
    );
    check(
        &sub(&Tensor::scalar(7.0), &Tensor::scalar(7.0)),
        &[],
        &[0.0],
    );
    check(
        &sub(&Tensor::vector(&[INF, INF]), &Tensor::vector(&[INF, 1.0])),
        &[2],
        &[NAN, INF],
    );
}

#[test]
fn mul_by_hand() {
    let x = t(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let y = t(&[5.0, -6.0, 0.5, 0.0], &[2, 2]);
    check(&mul(&x, &y), &[2, 2], &[5.0, -12.0, 1.5, 0.0]);
    check(&mul(&Tensor::vector(&[]), &Tensor::vector(&[])), &[0], &[]);
    check(
        &mul(&Tensor::vector(&[-3.0]), &Tensor::vector(&[4.0])),
        &[1],
        &[-12.0],
    );
    check(
        &mul(&Tensor::scalar(1.5), &Tensor::scalar(4.0)),
        &[],
        &[6.0],
    );
    check(
        &mul(
            &Tensor::vector(&[0.0, INF, -INF]),
            &Tensor::vector(&[INF, 2.0, 2.0]),
        ),
        &[3],
        &[NAN, INF, -INF],
    );
}

#[test]
fn div_by_hand() {
    let x = t(&[6.0, 1.0, -9.0, 0.0, 7.0, 1.0], &[2, 3]);
    let y = t(&[3.0, 4.0, 3.0, 5.0, -2.0, 8.0], &[2, 3]);
    check(&div(&x, &y), &[2, 3], &[2.0, 0.25, -3.0, 0.0, -3.5, 0.125]);
    check(&div(&Tensor::vector(&[]), &Tensor::vector(&[])), &[0], &[]);
    check(
        &div(&Tensor::vector(&[1.0]), &Tensor::vector(&[2.0])),
        &[1],
        &[0.5],
    );
    check(
        &div(&Tensor::scalar(-3.0), &Tensor::scalar(2.0)),
        &[],
        &[-1.5],
    );
    // IEEE division: x / 0 is ±inf, 0 / 0 is NaN.
    check(
        &div(
            &Tensor::vector(&[1.0, -1.0, 0.0, INF, 1.0]),
            &Tensor::vector(&[0.0, 0.0, 0.0, INF, INF]),
        ),
        &[5],
        &[INF, -INF, NAN, NAN, 0.0],
    );
}

// ---- elementwise unary ops ----

#[test]
fn neg_by_hand() {
    check(
        &neg(&t(&[1.0, -2.0, 3.5, 0.0, INF, -INF], &[2, 3])),
        &[2, 3],
        &[-1.0, 2.0, -3.5, 0.0, -INF, INF],
    );
    check(&neg(&Tensor::vector(&[])), &[0], &[]);
    check(&neg(&Tensor::vector(&[4.0])), &[1], &[-4.0]);
    check(&neg(&Tensor::scalar(-0.5)), &[], &[0.5]);
    let negated = neg(&Tensor::vector(&[0.0, NAN])).to_vec::<f32>();
    assert!(
        negated[0] == 0.0 && negated[0].is_sign_negative(),
        "-(0) is -0"
    );
    assert!(negated[1].is_nan(), "-(NaN) is NaN");
}

#[test]
fn relu_by_hand() {
    check(
        &relu(&t(&[-2.0, -0.5, 0.0, 0.5, 3.0, 100.0], &[3, 2])),
        &[3, 2],
        &[0.0, 0.0, 0.0, 0.5, 3.0, 100.0],
    );
    check(&relu(&Tensor::vector(&[])), &[0], &[]);
    check(&relu(&Tensor::vector(&[-7.0])), &[1], &[0.0]);
    check(&relu(&Tensor::scalar(2.5)), &[], &[2.5]);
    check(
        &relu(&Tensor::vector(&[-INF, INF, f32::MIN])),
        &[3],
        &[0.0, INF, 0.0],
    );
    // NaN stays NaN (PyTorch's behaviour); `f32::max(NaN, 0)` would give 0.
    let out = relu(&Tensor::vector(&[NAN, -1.0, NAN])).to_vec::<f32>();
    assert!(out[0].is_nan(), "relu(NaN) must be NaN, got {}", out[0]);
    assert_eq!(out[1], 0.0);
    assert!(out[2].is_nan(), "relu(NaN) must be NaN, got {}", out[2]);
}

#[test]
fn exp_by_hand() {
    // e = 2.718281828…, 1/e = 0.367879441…, e² = 7.389056098…, e^-2 = 0.135335283…
    check_close(
        &exp(&t(&[0.0, 1.0, -1.0, 2.0, -2.0, 0.0], &[2, 3])),
        &[2, 3],
        &[
            1.0,
            std::f32::consts::E,
            0.367_879_44,
            7.389_056,
            0.135_335_28,
            1.0,
        ],
    );
    check(&exp(&Tensor::vector(&[])), &[0], &[]);
    // exp(0) is exactly 1.
    check(&exp(&Tensor::vector(&[0.0])), &[1], &[1.0]);
    check(&exp(&Tensor::scalar(0.0)), &[], &[1.0]);
    check(
        &exp(&Tensor::vector(&[-INF, INF, NAN, 1000.0, -1000.0])),
        &[5],
        &[0.0, INF, NAN, INF, 0.0],
    );
}

// ---- reductions ----

#[test]
fn sum_by_hand() {
    check(&sum(&Tensor::vector(&[1.0, 2.0, 3.0, 4.0])), &[], &[10.0]);
    check(
        &sum(&t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])),
        &[],
        &[21.0],
    );
    check(&sum(&t(&[0.5, -1.5, 2.0, -4.0], &[2, 2])), &[], &[-3.0]);
    // The sum of nothing is 0, whatever the empty shape.
    check(&sum(&Tensor::vector(&[])), &[], &[0.0]);
    check(&sum(&t(&[], &[3, 0])), &[], &[0.0]);
    check(&sum(&Tensor::vector(&[-2.5])), &[], &[-2.5]);
    check(&sum(&Tensor::scalar(9.0)), &[], &[9.0]);
    check(&sum(&Tensor::vector(&[1.0, INF])), &[], &[INF]);
    check(&sum(&Tensor::vector(&[INF, -INF])), &[], &[NAN]);
    check(&sum(&Tensor::vector(&[1.0, NAN, 2.0])), &[], &[NAN]);
}

#[test]
fn mean_by_hand() {
    check(&mean(&Tensor::vector(&[1.0, 2.0, 3.0, 4.0])), &[], &[2.5]);
    check(
        &mean(&t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])),
        &[],
        &[3.5],
    );
    check(&mean(&t(&[-1.0, 1.0, -3.0, 3.0], &[2, 2])), &[], &[0.0]);
    // The mean of nothing is undefined: NaN (0 / 0), as in PyTorch.
    check(&mean(&Tensor::vector(&[])), &[], &[NAN]);
    check(&mean(&t(&[], &[0, 4])), &[], &[NAN]);
    check(&mean(&Tensor::vector(&[-2.5])), &[], &[-2.5]);
    check(&mean(&Tensor::scalar(9.0)), &[], &[9.0]);
    check(&mean(&Tensor::vector(&[1.0, INF])), &[], &[INF]);
}

// ---- matmul ----

#[test]
fn matmul_by_hand() {
    // [[1, 2, 3], [4, 5, 6]] · [[7, 8], [9, 10], [11, 12]]
    //   row 0: 1·7 + 2·9 + 3·11 = 58,  1·8 + 2·10 + 3·12 = 64
    //   row 1: 4·7 + 5·9 + 6·11 = 139, 4·8 + 5·10 + 6·12 = 154
    let x = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let y = t(&[7.0, 8.0, 9.0, 10.0, 11.0, 12.0], &[3, 2]);
    check(&matmul(&x, &y), &[2, 2], &[58.0, 64.0, 139.0, 154.0]);
    // The other way round: [3, 2] · [2, 3] = [3, 3].
    //   [7, 8]·cols:   7·1+8·4=39,   7·2+8·5=54,   7·3+8·6=69
    //   [9, 10]·cols:  9·1+10·4=49,  9·2+10·5=68,  9·3+10·6=87
    //   [11, 12]·cols: 11·1+12·4=59, 11·2+12·5=82, 11·3+12·6=105
    check(
        &matmul(&y, &x),
        &[3, 3],
        &[39.0, 54.0, 69.0, 49.0, 68.0, 87.0, 59.0, 82.0, 105.0],
    );
    // Identity on the right leaves x unchanged.
    let eye = t(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], &[3, 3]);
    check(&matmul(&x, &eye), &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // An outer product: [3, 1] · [1, 2].
    check(
        &matmul(&t(&[1.0, 2.0, 3.0], &[3, 1]), &t(&[10.0, -1.0], &[1, 2])),
        &[3, 2],
        &[10.0, -1.0, 20.0, -2.0, 30.0, -3.0],
    );
    // An inner product: [1, 3] · [3, 1] = 1·4 + 2·5 + 3·6 = 32.
    check(
        &matmul(&t(&[1.0, 2.0, 3.0], &[1, 3]), &t(&[4.0, 5.0, 6.0], &[3, 1])),
        &[1, 1],
        &[32.0],
    );
    check(
        &matmul(&t(&[3.0], &[1, 1]), &t(&[-2.0], &[1, 1])),
        &[1, 1],
        &[-6.0],
    );
}

#[test]
fn matmul_with_empty_dimensions() {
    // A zero inner dimension: every output element is an empty sum, 0.
    check(
        &matmul(&t(&[], &[2, 0]), &t(&[], &[0, 3])),
        &[2, 3],
        &[0.0; 6],
    );
    // Zero rows or zero columns: an empty result of the right shape.
    check(
        &matmul(&t(&[], &[0, 3]), &t(&[1.0; 6], &[3, 2])),
        &[0, 2],
        &[],
    );
    check(
        &matmul(&t(&[1.0; 6], &[2, 3]), &t(&[], &[3, 0])),
        &[2, 0],
        &[],
    );
}

// ---- full ----

#[test]
fn full_by_hand() {
    check(&full(&[], 7.0, DType::F32, Device::Cpu), &[], &[7.0]);
    check(
        &full(&[2, 3], -1.5, DType::F32, Device::Cpu),
        &[2, 3],
        &[-1.5; 6],
    );
    check(&full(&[1], 0.25, DType::F32, Device::Cpu), &[1], &[0.25]);
    check(&full(&[0], 3.0, DType::F32, Device::Cpu), &[0], &[]);
    check(
        &full(&[2, 0, 4], 3.0, DType::F32, Device::Cpu),
        &[2, 0, 4],
        &[],
    );
    check(
        &full(&[3], f64::INFINITY, DType::F32, Device::Cpu),
        &[3],
        &[INF; 3],
    );
    check(
        &full(&[2, 2], f64::NAN, DType::F32, Device::Cpu),
        &[2, 2],
        &[NAN; 4],
    );
    let filled = full(&[2, 3], 1.0, DType::F32, Device::Cpu);
    assert_eq!(filled.device(), Device::Cpu);
}

// ---- shape errors ----

#[test]
fn elementwise_shape_mismatch_is_an_error_naming_op_and_shapes() {
    let x = Tensor::vector(&[1.0, 2.0]);
    let y = Tensor::vector(&[1.0, 2.0, 3.0]);
    type Binary = fn(&Tensor, &Tensor) -> Tensor;
    type TryBinary = fn(&Tensor, &Tensor) -> switchyard::Result<Tensor>;
    let cases: [(&str, TryBinary, Binary); 4] = [
        ("add", try_add, add),
        ("sub", try_sub, sub),
        ("mul", try_mul, mul),
        ("div", try_div, div),
    ];
    for (name, try_op, op) in cases {
        let error = try_op(&x, &y).unwrap_err();
        check_shape_error(&error, name, &["[2]", "[3]"]);
        // The plain form panics with exactly the error's message.
        assert_eq!(panic_message(|| op(&x, &y)), error.to_string(), "{name}");
    }
    // Same element count, different shapes: still an error.
    let error = try_add(&t(&[1.0; 6], &[2, 3]), &t(&[1.0; 6], &[3, 2])).unwrap_err();
    check_shape_error(&error, "add", &["[2, 3]", "[3, 2]"]);
    // Shapes that do not broadcast (trailing 3 against 2), whatever the ranks.
    let error = try_mul(&t(&[1.0; 6], &[2, 3]), &t(&[1.0; 2], &[2])).unwrap_err();
    check_shape_error(&error, "mul", &["[2, 3]", "[2]"]);
}

#[test]
fn matmul_shape_errors_name_op_and_shapes() {
    let cases: [(Tensor, Tensor, [&str; 2]); 4] = [
        // Inner dimensions differ.
        (
            t(&[1.0; 6], &[2, 3]),
            t(&[1.0; 6], &[2, 3]),
            ["[2, 3]", "[2, 3]"],
        ),
        (
            t(&[1.0; 4], &[2, 2]),
            t(&[1.0; 3], &[3, 1]),
            ["[2, 2]", "[3, 1]"],
        ),
        // Not 2-D (1-D and batched operands: tests/matmul_batched.rs).
        (
            Tensor::vector(&[1.0; 3]),
            Tensor::vector(&[1.0; 4]),
            ["[3]", "[4]"],
        ),
        (
            t(&[1.0; 12], &[2, 2, 3]),
            t(&[1.0; 4], &[2, 2]),
            ["[2, 2, 3]", "[2, 2]"],
        ),
    ];
    for (x, y, shapes) in &cases {
        let error = try_matmul(x, y).unwrap_err();
        check_shape_error(&error, "matmul", shapes);
        assert_eq!(
            panic_message(|| matmul(x, y)),
            error.to_string(),
            "{shapes:?}"
        );
    }
    let error = try_matmul(&Tensor::scalar(2.0), &Tensor::scalar(3.0)).unwrap_err();
    check_shape_error(&error, "matmul", &["[]"]);
}

// ---- CpuSimd falls through to CpuNaive ----

/// Every op once, on inputs with ordinary and special values.
fn every_op() -> Vec<(&'static str, Tensor)> {
    let x = t(&[1.0, -2.0, 0.0, 4.5, NAN, -INF], &[2, 3]);
    let y = t(&[2.0, 0.5, 0.0, -1.5, 1.0, 3.0], &[2, 3]);
    let w = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
    vec![
        ("add", add(&x, &y)),
        ("sub", sub(&x, &y)),
        ("mul", mul(&x, &y)),
        ("div", div(&x, &y)),
        ("neg", neg(&x)),
        ("relu", relu(&x)),
        ("exp", exp(&x)),
        ("sum", sum(&y)),
        ("mean", mean(&y)),
        ("sum of empty", sum(&Tensor::vector(&[]))),
        ("mean of empty", mean(&Tensor::vector(&[]))),
        ("matmul", matmul(&y, &w)),
        (
            "matmul, empty inner",
            matmul(&t(&[], &[2, 0]), &t(&[], &[0, 3])),
        ),
        ("full", full(&[2, 3], 0.75, DType::F32, Device::Cpu)),
        ("full, 0-d", full(&[], -2.0, DType::F32, Device::Cpu)),
    ]
}

#[test]
fn excluding_cpu_simd_gives_identical_results() {
    let plain = every_op();
    let naive = {
        let _naive = switchyard::exclude(DispatchKey::CpuSimd);
        every_op()
    };
    assert_eq!(plain.len(), naive.len());
    for ((name, a), (_, b)) in plain.iter().zip(&naive) {
        assert_eq!(a.shape(), b.shape(), "{name}");
        let bits = |t: &Tensor| {
            t.to_vec::<f32>()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        };
        // The SIMD `exp`, `log`, `tanh` and `sigmoid` are within 1 ulp of the naive ones (which
        // call the C library or round an `f64` once), not bit for bit; everything else is exact.
        let ulps = if ["exp", "log", "tanh", "sigmoid"].contains(name) {
            1
        } else {
            0
        };
        for (x, y) in bits(a).iter().zip(bits(b)) {
            assert!(
                x.abs_diff(y) <= ulps
                    || (f32::from_bits(*x).is_nan() && f32::from_bits(y).is_nan()),
                "{name}: {a:?} vs {b:?}"
            );
        }
    }
    // And both are right: a few spot checks by hand.
    //   y · w = [[2·1 + 0.5·3 + 0·5, 2·2 + 0.5·4 + 0·6], [-1.5·1 + 1·3 + 3·5, -1.5·2 + 1·4 + 3·6]]
    check(&naive[11].1, &[2, 2], &[3.5, 6.0, 16.5, 19.0]);
    // sum(y) = 2 + 0.5 + 0 - 1.5 + 1 + 3 = 5, mean = 5 / 6.
    check(&naive[7].1, &[], &[5.0]);
    check_close(&naive[8].1, &[], &[0.833_333_3]);
    check(&naive[9].1, &[], &[0.0]);
    check(&naive[10].1, &[], &[NAN]);
    check(&naive[5].1, &[2, 3], &[1.0, 0.0, 0.0, 4.5, NAN, 0.0]);
    check(&naive[3].1, &[2, 3], &[0.5, -4.0, NAN, -3.0, NAN, -INF]);
}

#[test]
fn excluding_both_cpu_keys_leaves_nothing_to_dispatch_on() {
    let _none = switchyard::exclude(DispatchKey::CpuSimd.set() | DispatchKey::CpuNaive.set());
    let error = try_add(&Tensor::vector(&[1.0]), &Tensor::vector(&[2.0])).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::NoDispatchKeys {
                op: "switchyard::add",
                ..
            }
        ),
        "{error}"
    );
}
