//! Every standard op on every backend against the naive CPU backend: one test body per op,
//! instantiated per backend by `backend_tests!`. Sizes cover empty, one element, around the
//! workgroup size (256) and the reduction chunk (2048), and large ones (several reduction passes).

use switchyard::ops::{
    add, full, matmul, mean, mul, neg, relu, slice, sub, sum, try_add, try_matmul, try_mul,
};
use switchyard::{DType, Device, ErrorKind, Tensor};
use switchyard_tests_wgpu::{
    BINARY, Backend, Tolerance, UNARY, Unary, assert_matches, naive, tensor,
};

const INF: f32 = f32::INFINITY;
const NAN: f32 = f32::NAN;

/// Element counts every elementwise op and reduction is checked at.
const SIZES: &[usize] = &[
    0,
    1,
    7,
    255,
    256,
    257,
    1000,
    2048,
    2049,
    65_537,
    (1 << 20) + 3,
    // More than 2048² elements: three reduction passes.
    (1 << 22) + 12_345,
];

/// Shapes the same element count can take: a vector, and a matrix when it factors.
fn shapes(len: usize) -> Vec<Vec<usize>> {
    let mut shapes = vec![vec![len]];
    if len == 1 {
        shapes.push(vec![]);
    }
    if len.is_multiple_of(7) && len > 0 {
        shapes.push(vec![7, len / 7]);
    }
    if len == 0 {
        shapes.push(vec![3, 0]);
    }
    shapes
}

fn binary_ops(backend: Backend) {
    for (i, &len) in SIZES.iter().enumerate() {
        for shape in shapes(len) {
            let x = tensor(&shape, 2 * i as u64, 8.0);
            let y = tensor(&shape, 2 * i as u64 + 1, 8.0);
            let (xd, yd) = (backend.put(&x), backend.put(&y));
            for (name, op, tolerance) in BINARY {
                let expected = naive(|| op(&x, &y));
                let what = format!("{name} of shape {shape:?}");
                assert_matches(&what, backend.0, &op(&xd, &yd), &expected, tolerance, None);
            }
        }
    }
}

fn unary_ops(backend: Backend) {
    for (i, &len) in SIZES.iter().enumerate() {
        for shape in shapes(len) {
            let x = tensor(&shape, 100 + i as u64, 8.0);
            let xd = backend.put(&x);
            for (name, op, tolerance) in UNARY {
                let expected = naive(|| op(&x));
                let what = format!("{name} of shape {shape:?}");
                assert_matches(&what, backend.0, &op(&xd), &expected, tolerance, None);
            }
        }
    }
}

/// IEEE special values through every elementwise op (no subnormals: GPUs may flush them).
fn special_values(backend: Backend) {
    let x = Tensor::vector(&[INF, -INF, NAN, 0.0, -0.0, 1.0, -1.0, f32::MAX, 3.0, 1e30]);
    let y = Tensor::vector(&[1.0, -INF, 2.0, 0.0, 5.0, 0.0, INF, f32::MAX, NAN, 1e30]);
    let (xd, yd) = (backend.put(&x), backend.put(&y));
    for (name, op, tolerance) in BINARY {
        let expected = naive(|| op(&x, &y));
        assert_matches(name, backend.0, &op(&xd, &yd), &expected, tolerance, None);
    }
    let x = Tensor::vector(&[INF, -INF, NAN, 0.0, -0.0, 100.0, -120.0, f32::MAX, f32::MIN]);
    let xd = backend.put(&x);
    for (name, op, _) in UNARY {
        let expected = naive(|| op(&x));
        // exp(100) is inf and exp(-120) is 0 in f32 on both sides (exp(-100) would be subnormal,
        // which GPUs may flush to 0); relu keeps NaN.
        assert_matches(name, backend.0, &op(&xd), &expected, Tolerance::Exact, None);
    }
    // The same values as a stepped view: the strided shaders decide them alike.
    let values = x.to_vec::<f32>();
    let x = Tensor::from_fn(&[18], |i| values[i / 2]);
    let (x, xd) = (slice(&x, 0, 0, 18, 2), slice(&backend.put(&x), 0, 0, 18, 2));
    for (name, op, _) in UNARY {
        let expected = naive(|| op(&x));
        let what = format!("{name} of a stepped view");
        assert_matches(
            &what,
            backend.0,
            &op(&xd),
            &expected,
            Tolerance::Exact,
            None,
        );
    }
}

fn reductions(backend: Backend) {
    for (i, &len) in SIZES.iter().enumerate() {
        for shape in shapes(len) {
            let x = tensor(&shape, 200 + i as u64, 4.0);
            let xd = backend.put(&x);
            // The rounding error of a sum is bounded by a multiple of the sum of magnitudes.
            let magnitude: f32 = x.to_vec::<f32>().iter().map(|v| v.abs()).sum();
            let expected = naive(|| sum(&x));
            let what = format!("sum of shape {shape:?}");
            let tolerance = Tolerance::Scaled(1e-5);
            let scale = Tensor::scalar(magnitude);
            assert_matches(
                &what,
                backend.0,
                &sum(&xd),
                &expected,
                tolerance,
                Some(&scale),
            );
            let expected = naive(|| mean(&x));
            let per_element = Tensor::scalar(magnitude / len.max(1) as f32);
            let what = format!("mean of shape {shape:?}");
            assert_matches(
                &what,
                backend.0,
                &mean(&xd),
                &expected,
                tolerance,
                Some(&per_element),
            );
        }
    }
    // Special values: an infinity wins, opposite infinities and NaN give NaN, nothing gives 0
    // (sum) and NaN (mean).
    for values in [&[1.0, INF][..], &[INF, -INF], &[1.0, NAN, 2.0], &[]] {
        let x = Tensor::vector(values);
        let xd = backend.put(&x);
        for (name, op) in [("sum", sum as Unary), ("mean", mean)] {
            let what = format!("{name} of {values:?}");
            let expected = naive(|| op(&x));
            assert_matches(
                &what,
                backend.0,
                &op(&xd),
                &expected,
                Tolerance::Exact,
                None,
            );
        }
    }
}

/// (All products here are under 2^27 multiply-adds, so the GPU computes them directly, one
/// invocation per element; `large_products_are_tiled` covers the tiled kernel.)
fn matmuls(backend: Backend) {
    let shapes: &[(usize, usize, usize)] = &[
        (1, 1, 1),
        (2, 3, 2),
        (16, 16, 16),
        (17, 33, 15),
        (1, 300, 1),
        (64, 1, 64),
        (100, 257, 70),
        (257, 129, 65),
        (3, 1000, 5),
        // Empty: no rows, no columns, and an empty inner dimension (all zeros).
        (0, 4, 3),
        (4, 3, 0),
        (5, 0, 6),
    ];
    for (i, &(m, k, n)) in shapes.iter().enumerate() {
        let x = tensor(&[m, k], 300 + 2 * i as u64, 2.0);
        let y = tensor(&[k, n], 301 + 2 * i as u64, 2.0);
        let expected = naive(|| matmul(&x, &y));
        // The same product over magnitudes bounds each element's rounding error.
        let magnitude = naive(|| matmul(&abs(&x), &abs(&y)));
        let actual = matmul(&backend.put(&x), &backend.put(&y));
        let what = format!("matmul [{m}, {k}] · [{k}, {n}]");
        let tolerance = Tolerance::Scaled(1e-5);
        assert_matches(
            &what,
            backend.0,
            &actual,
            &expected,
            tolerance,
            Some(&magnitude),
        );
    }
}

fn abs(x: &Tensor) -> Tensor {
    add(&relu(x), &relu(&neg(x)))
}

fn fills(backend: Backend) {
    let cases: &[(&[usize], f64)] = &[
        (&[], 7.0),
        (&[0], 3.0),
        (&[2, 0, 4], 3.0),
        (&[1], 0.25),
        (&[257], -1.5),
        (&[3, 1000], f64::INFINITY),
        (&[2, 2], f64::NAN),
        (&[(1 << 20) + 3], 2.0),
    ];
    for &(shape, value) in cases {
        let expected = naive(|| full(shape, value, DType::F32, Device::Cpu));
        let what = format!("full({shape:?}, {value})");
        let actual = full(shape, value, DType::F32, backend.0);
        assert_matches(&what, backend.0, &actual, &expected, Tolerance::Exact, None);
    }
}

/// A chain of dependent ops, none waited for until the end: the batch and the buffer pool must
/// keep every intermediate right.
fn chains(backend: Backend) {
    let x = tensor(&[4099], 400, 1.0);
    let y = tensor(&[4099], 401, 1.0);
    let run = |x: &Tensor, y: &Tensor| {
        let mut t = x.clone();
        for step in 0..100 {
            t = match step % 4 {
                0 => add(&t, y),
                1 => mul(&t, y),
                2 => relu(&t),
                _ => sub(&t, x),
            };
        }
        (mean(&t), t)
    };
    let (expected_mean, expected) = naive(|| run(&x, &y));
    let (actual_mean, actual) = run(&backend.put(&x), &backend.put(&y));
    assert_matches(
        "100 chained ops",
        backend.0,
        &actual,
        &expected,
        Tolerance::Exact,
        None,
    );
    let tolerance = Tolerance::Scaled(1e-5);
    let scale = Tensor::scalar(
        expected
            .to_vec::<f32>()
            .iter()
            .map(|v| v.abs())
            .sum::<f32>()
            / 4099.0,
    );
    assert_matches(
        "their mean",
        backend.0,
        &actual_mean,
        &expected_mean,
        tolerance,
        Some(&scale),
    );
}

/// More than 65535 workgroups of 256: the elementwise grid gets a second row.
fn two_row_grid(backend: Backend) {
    let len = 65_535 * 256 + 1;
    let x = tensor(&[len], 700, 4.0);
    let y = tensor(&[len], 701, 4.0);
    let (xd, yd) = (backend.put(&x), backend.put(&y));
    let expected = naive(|| add(&x, &y));
    assert_matches(
        "add, two-row grid",
        backend.0,
        &add(&xd, &yd),
        &expected,
        Tolerance::Exact,
        None,
    );
    let expected = naive(|| full(&[len], -2.5, DType::F32, Device::Cpu));
    let actual = full(&[len], -2.5, DType::F32, backend.0);
    assert_matches(
        "full, two-row grid",
        backend.0,
        &actual,
        &expected,
        Tolerance::Exact,
        None,
    );
}

/// Shape errors are the CPU's, word for word.
fn shape_errors(backend: Backend) {
    let (x, y) = (tensor(&[2, 3], 500, 1.0), tensor(&[3, 2], 501, 1.0));
    let (xd, yd) = (backend.put(&x), backend.put(&y));
    let on_cpu = naive(|| try_add(&x, &y)).unwrap_err();
    let on_device = try_add(&xd, &yd).unwrap_err();
    assert!(
        matches!(on_device.kind(), ErrorKind::Shape { op: "add", .. }),
        "{on_device}"
    );
    assert_eq!(on_device.to_string(), on_cpu.to_string());
    // [2, 3] with [2]: the last dimensions (3 and 2) neither match nor are 1.
    let on_device = try_mul(&xd, &backend.put(&Tensor::vector(&[1.0, 2.0]))).unwrap_err();
    assert!(
        matches!(on_device.kind(), ErrorKind::Shape { op: "mul", .. }),
        "{on_device}"
    );
    let on_cpu = naive(|| try_matmul(&x, &x)).unwrap_err();
    let on_device = try_matmul(&xd, &xd).unwrap_err();
    assert_eq!(on_device.to_string(), on_cpu.to_string());
}

/// Values survive the trip to the device and back bit for bit.
fn round_trips(backend: Backend) {
    for shape in [&[][..], &[0], &[1], &[5, 7], &[(1 << 20) + 1]] {
        let x = tensor(shape, 600, 1e6);
        let there = backend.put(&x);
        assert_eq!(there.shape(), shape);
        let back = there.to(Device::Cpu);
        assert_eq!(back.device(), Device::Cpu);
        let bits = |t: &Tensor| {
            t.to_vec::<f32>()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&back), bits(&x), "{shape:?}");
        assert_eq!(bits(&there), bits(&x), "to_vec on the device, {shape:?}");
        // Moving to where a tensor already is gives the same tensor.
        assert!(there.to(backend.0).same_storage(&there));
    }
}

/// Past 2^27 multiply-adds the GPU tiles the product (ragged tiles here: 520 is no multiple of
/// 16), plain and through a transposed operand. Against the identity every output is one product
/// and zeros, so the result is exact, and the oracle costs no 2^27 multiply-adds of its own.
fn large_products_are_tiled(backend: Backend) {
    let k = 520;
    let x = Tensor::from_fn(&[k, k], |i| ((i * 7919) % 1000) as f32 - 500.0);
    let eye = Tensor::from_fn(&[k, k], |i| if i / k == i % k { 1.0f32 } else { 0.0 });
    let (on_x, on_eye) = (backend.put(&x), backend.put(&eye));
    assert_eq!(matmul(&on_x, &on_eye).to_vec::<f32>(), x.to_vec::<f32>());
    let transposed = switchyard::ops::transpose(&on_x, 0, 1);
    assert_eq!(
        matmul(&transposed, &on_eye).to_vec::<f32>(),
        switchyard::ops::transpose(&x, 0, 1).to_vec::<f32>()
    );
}

/// One module per backend, each with one `#[test]` per body above.
macro_rules! backend_tests {
    ($($backend:ident => $device:expr),* $(,)?) => {$(
        mod $backend {
            use super::*;

            const BACKEND: Backend = Backend($device);

            macro_rules! case {
                ($name:ident) => {
                    #[test]
                    fn $name() {
                        let test = concat!(stringify!($backend), "::", stringify!($name));
                        if BACKEND.available(test) {
                            super::$name(BACKEND);
                        }
                    }
                };
            }

            case!(binary_ops);
            case!(unary_ops);
            case!(special_values);
            case!(reductions);
            case!(matmuls);
            case!(large_products_are_tiled);
            case!(fills);
            case!(chains);
            case!(two_row_grid);
            case!(shape_errors);
            case!(round_trips);
        }
    )*};
}

backend_tests! {
    cpu => Device::Cpu,
    wgpu => Device::Wgpu,
}
