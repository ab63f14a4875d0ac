//! The ops a small network needs, on the CPU against values computed by hand:
//! `log`, `tanh`, `sigmoid`, `sqrt` (large arguments included), reductions along dimensions and
//! their errors (a dimension out of range or repeated, an empty extent), comparisons, `where`,
//! `arange`, and `rand`/`randn`: statistics of 100,000 values, determinism, the per-device
//! generator. The conformance kit checks every backend against the naive one; this file checks
//! the naive one (and the CPU as a whole) against arithmetic.

use switchyard::ops::{
    arange, argmax, eq, ge, gt, le, log, lt, max_dim, mean_dim, ne, rand_seeded, randn_seeded,
    sigmoid, sqrt, sum_dim, tanh, try_arange, try_argmax, try_max_dim, try_mean_dim, try_rand,
    try_rand_seeded, try_sum_dim, try_where_cond, where_cond,
};
use switchyard::random::{self, manual_seed};
use switchyard::{DType, Device, DispatchKey, Tensor};
use switchyard_backends as _; // links the CPU kernels

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

fn t(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec::<f32>(values.to_vec(), shape).unwrap()
}

/// Equal shape and values (NaN matches NaN).
#[track_caller]
fn check(actual: &Tensor, shape: &[usize], expected: &[f32]) {
    assert_eq!(actual.dtype(), DType::F32, "{actual:?}");
    assert_eq!(actual.shape(), shape, "shape of {actual:?}");
    let values = actual.to_vec::<f32>();
    for (i, (a, e)) in values.iter().zip(expected).enumerate() {
        assert!(
            a == e || (a.is_nan() && e.is_nan()),
            "element {i}: got {a}, expected {e}"
        );
    }
    assert_eq!(values.len(), expected.len());
}

/// Runs `f` with the best CPU kernels, then on the naive backend alone.
fn on_both_cpu_backends(mut f: impl FnMut()) {
    f();
    let _naive = switchyard::exclude(DispatchKey::CpuSimd);
    f();
}

#[test]
fn elementwise_functions_are_right_at_the_extremes() {
    on_both_cpu_backends(|| {
        let x = t(&[0.0, 1.0, -1.0, INF, NAN, 4.0], &[6]);
        check(&log(&x), &[6], &[-INF, 0.0, NAN, INF, NAN, 4f32.ln()]);
        check(&sqrt(&x), &[6], &[0.0, 1.0, NAN, INF, NAN, 2.0]);
        assert!(sqrt(&t(&[-0.0], &[1])).to_vec::<f32>()[0].is_sign_negative());
        // Large |x|: no overflow on the way, no NaN.
        let big = t(&[1000.0, -1000.0, 88.8, -88.8, 1e30, -1e30, 0.0, NAN], &[8]);
        let s = sigmoid(&big).to_vec::<f32>();
        assert_eq!(&s[..2], [1.0, 0.0]);
        assert_eq!(s[2], 1.0);
        assert!(s[3] > 0.0 && s[3] < 1e-38, "{}", s[3]);
        assert_eq!(&s[4..7], [1.0, 0.0, 0.5]);
        assert!(s[7].is_nan());
        check(
            &tanh(&big),
            &[8],
            &[1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0, NAN],
        );
        // Integers compute in f32.
        let ints = Tensor::from_vec::<i64>(vec![1, 4], &[2]).unwrap();
        check(&sqrt(&ints), &[2], &[1.0, 2.0]);
        assert_eq!(sigmoid(&ints).dtype(), DType::F32);
    });
}

#[test]
fn sums_and_means_along_dimensions() {
    let x = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    check(&sum_dim(&x, &[0], false), &[3], &[5.0, 7.0, 9.0]);
    check(&sum_dim(&x, &[1], true), &[2, 1], &[6.0, 15.0]);
    check(&sum_dim(&x, &[1, 0], false), &[], &[21.0]);
    check(&sum_dim(&x, &[0, 1], true), &[1, 1], &[21.0]);
    check(&mean_dim(&x, &[1], false), &[2], &[2.0, 5.0]);
    check(&mean_dim(&x.t(), &[1], false), &[3], &[2.5, 3.5, 4.5]);
    // No dimensions: nothing is reduced (NumPy's `axis=()`).
    check(
        &sum_dim(&x, &[], false),
        &[2, 3],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    );
    // Empty extents: sums of nothing are 0, means NaN.
    let empty = t(&[], &[0, 3]);
    check(&sum_dim(&empty, &[0], false), &[3], &[0.0; 3]);
    check(&mean_dim(&empty, &[0], true), &[1, 3], &[NAN; 3]);
    check(&sum_dim(&empty, &[1], false), &[0], &[]);
    // Integers and bool sum to i64; means need floats.
    let ints = Tensor::from_vec::<i32>(vec![1, 2, 3, 4], &[2, 2]).unwrap();
    let sums = sum_dim(&ints, &[0], false);
    assert_eq!(sums.dtype(), DType::I64);
    assert_eq!(sums.to_vec::<i64>(), [4, 6]);
    let err = try_mean_dim(&ints, &[0], false).unwrap_err().to_string();
    assert!(err.contains("mean_dim") && err.contains("i32"), "{err}");
}

#[test]
fn bad_dimensions_are_errors_naming_op_dim_and_shape() {
    let x = t(&[0.0; 6], &[2, 3]);
    for err in [
        try_sum_dim(&x, &[2], false).unwrap_err(),
        try_mean_dim(&x, &[0, 5], false).unwrap_err(),
        try_max_dim(&x, 2, true).unwrap_err(),
        try_argmax(&x, 7, false).unwrap_err(),
    ] {
        let text = err.to_string();
        assert!(
            text.contains("out of range") && text.contains("[2, 3]"),
            "{text}"
        );
        assert!(
            ["sum_dim", "mean_dim", "max_dim", "argmax"].contains(&err.op()),
            "{text}"
        );
    }
    let err = try_sum_dim(&x, &[1, 0, 1], false).unwrap_err().to_string();
    assert!(
        err.contains("sum_dim") && err.contains("dim 1 appears twice") && err.contains("[2, 3]"),
        "{err}"
    );
    let scalar = Tensor::scalar(1.0);
    assert!(try_max_dim(&scalar, 0, false).is_err());
}

#[test]
fn maxima_propagate_nan_and_argmax_takes_the_first() {
    on_both_cpu_backends(|| {
        let x = t(&[1.0, 3.0, 3.0, -INF, NAN, 2.0, NAN, 0.0], &[2, 4]);
        check(&max_dim(&x, 1, false), &[2], &[3.0, NAN]);
        assert_eq!(argmax(&x, 1, false).to_vec::<i64>(), [1, 0]);
        check(&max_dim(&x, 0, true), &[1, 4], &[NAN, 3.0, NAN, 0.0]);
        assert_eq!(argmax(&x, 0, true).to_vec::<i64>(), [1, 0, 1, 1]);
        assert_eq!(argmax(&x, 0, true).shape(), [1, 4]);
        let ints = Tensor::from_vec::<i32>(vec![5, -1, 5, 7], &[4]).unwrap();
        assert_eq!(max_dim(&ints, 0, false).to_vec::<i32>(), [7]);
        let bools = Tensor::from_vec::<bool>(vec![false, true, true], &[3]).unwrap();
        assert_eq!(max_dim(&bools, 0, false).to_vec::<bool>(), [true]);
        // `argmax` of `bool` is refused, as in PyTorch (tests/torch_values.rs).
        assert_eq!(
            argmax(&switchyard::ops::to_dtype(&bools, DType::U8), 0, false).to_vec::<i64>(),
            [1]
        );
    });
}

#[test]
fn the_maximum_of_an_empty_extent_is_an_error() {
    let x = t(&[], &[3, 0]);
    for err in [
        try_max_dim(&x, 1, false).unwrap_err(),
        try_argmax(&x, 1, true).unwrap_err(),
    ] {
        let text = err.to_string();
        assert!(
            text.contains("dim 1 of shape [3, 0] is empty") && text.contains(err.op()),
            "{text}"
        );
    }
    // Reducing a non-empty extent of an empty tensor is fine: an empty result.
    assert_eq!(max_dim(&t(&[], &[0, 3]), 1, false).shape(), [0]);
}

#[test]
fn comparisons_broadcast_promote_and_give_bool() {
    let x = t(&[1.0, 2.0, NAN], &[3, 1]);
    let y = Tensor::from_vec::<i32>(vec![1, 2], &[2]).unwrap();
    let bools = |t: Tensor| {
        assert_eq!(t.dtype(), DType::Bool);
        assert_eq!(t.shape(), [3, 2]);
        t.to_vec::<bool>()
    };
    let (f, tr) = (false, true);
    assert_eq!(bools(eq(&x, &y)), [tr, f, f, tr, f, f]);
    assert_eq!(bools(ne(&x, &y)), [f, tr, tr, f, tr, tr]);
    assert_eq!(bools(lt(&x, &y)), [f, tr, f, f, f, f]);
    assert_eq!(bools(le(&x, &y)), [tr, tr, f, tr, f, f]);
    assert_eq!(bools(gt(&x, &y)), [f, f, tr, f, f, f]);
    assert_eq!(bools(ge(&x, &y)), [tr, f, tr, tr, f, f]);
    // i64 beyond f32's precision compare exactly in i64.
    let a = Tensor::from_vec::<i64>(vec![1 << 40, (1 << 40) + 1], &[2]).unwrap();
    let b = Tensor::from_vec::<i64>(vec![(1 << 40) + 1], &[1]).unwrap();
    assert_eq!(lt(&a, &b).to_vec::<bool>(), [true, false]);
}

#[test]
fn where_selects_broadcasts_and_promotes() {
    let cond = Tensor::from_vec::<bool>(vec![true, false], &[2, 1]).unwrap();
    let x = Tensor::from_vec::<i32>(vec![1, 2, 3], &[3]).unwrap();
    let y = Tensor::scalar(-0.5);
    let out = where_cond(&cond, &x, &y);
    check(&out, &[2, 3], &[1.0, 2.0, 3.0, -0.5, -0.5, -0.5]);
    let err = try_where_cond(&x, &x, &y).unwrap_err().to_string();
    assert!(
        err.contains("where") && err.contains("i32 condition"),
        "{err}"
    );
}

#[test]
fn arange_counts_in_its_dtype() {
    assert_eq!(
        arange(4, DType::I64, Device::Cpu).to_vec::<i64>(),
        [0, 1, 2, 3]
    );
    check(&arange(3, DType::F32, Device::Cpu), &[3], &[0.0, 1.0, 2.0]);
    assert_eq!(arange(0, DType::U8, Device::Cpu).shape(), [0]);
    assert_eq!(arange(256, DType::U8, Device::Cpu).to_vec::<u8>()[255], 255);
    let err = try_arange(257, DType::U8, Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("arange") && err.contains("256") && err.contains("u8"),
        "{err}"
    );
    let err = try_arange(2, DType::Bool, Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("arange") && err.contains("bool"), "{err}");
}

/// Mean and standard deviation.
fn moments(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[test]
fn rand_and_randn_have_the_right_moments_for_every_float_dtype() {
    const N: usize = 100_000;
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let u = rand_seeded(&[N], 42, 0, dtype, Device::Cpu);
        assert_eq!((u.dtype(), u.shape()), (dtype, &[N][..]));
        let u = u.try_to_f64_vec().unwrap();
        assert!(
            u.iter().all(|v| (0.0..1.0).contains(v)),
            "{dtype}: outside [0, 1)"
        );
        // The mean of N uniforms has a standard deviation of 0.289 / √N ≈ 0.0009: 5σ bounds.
        let (mean, std) = moments(&u);
        assert!((mean - 0.5).abs() < 0.005, "{dtype}: mean {mean}");
        assert!(
            (std - 12f64.recip().sqrt()).abs() < 0.005,
            "{dtype}: std {std}"
        );

        let z = randn_seeded(&[N], 42, 0, dtype, Device::Cpu)
            .try_to_f64_vec()
            .unwrap();
        assert!(z.iter().all(|v| v.is_finite()), "{dtype}");
        let (mean, std) = moments(&z);
        assert!(mean.abs() < 0.02, "{dtype}: mean {mean}");
        assert!((std - 1.0).abs() < 0.02, "{dtype}: std {std}");
        // About 68.3% within one standard deviation.
        let within = z.iter().filter(|v| v.abs() < 1.0).count() as f64 / N as f64;
        assert!((within - 0.6827).abs() < 0.01, "{dtype}: {within}");
    }
}

#[test]
fn random_values_depend_on_seed_and_counter_only() {
    let a = rand_seeded(&[1000], 7, 0, DType::F32, Device::Cpu).to_vec::<f32>();
    // The same call gives the same values; a shape is only a layout of the counters.
    let b = rand_seeded(&[10, 100], 7, 0, DType::F32, Device::Cpu).to_vec::<f32>();
    assert_eq!(a, b);
    // Offset 600 starts at element 600 of the stream.
    let tail = rand_seeded(&[400], 7, 600, DType::F32, Device::Cpu).to_vec::<f32>();
    assert_eq!(a[600..], tail[..]);
    // Another seed, other values.
    let other = rand_seeded(&[1000], 8, 0, DType::F32, Device::Cpu).to_vec::<f32>();
    assert!(a.iter().zip(&other).filter(|(x, y)| x == y).count() < 5);
    // SIMD or naive, the CPU computes the same values.
    let naive = {
        let _naive = switchyard::exclude(DispatchKey::CpuSimd);
        randn_seeded(&[1000], 7, 0, DType::F32, Device::Cpu).to_vec::<f32>()
    };
    assert_eq!(
        naive,
        randn_seeded(&[1000], 7, 0, DType::F32, Device::Cpu).to_vec::<f32>()
    );
    // Integer dtypes are refused.
    let err = try_rand_seeded(&[3], 0, 0, DType::I64, Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("rand") && err.contains("i64"), "{err}");
}

/// The one test of this file that draws on the CPU's generator (tests run in parallel).
#[test]
fn the_cpu_generator_hands_out_each_counter_once() {
    manual_seed(Device::Cpu, 2024);
    let first = random::rand(&[3, 4], DType::F32, Device::Cpu).to_vec::<f32>();
    let second = random::rand(&[5], DType::F32, Device::Cpu).to_vec::<f32>();
    // A refused call takes no counters.
    assert!(try_rand(&[2], DType::I32, Device::Cpu).is_err());
    let third = random::randn(&[2], DType::F64, Device::Cpu).to_vec::<f64>();
    // They are one stream: counters 0..12, 12..17, 17..19.
    let stream = rand_seeded(&[17], 2024, 0, DType::F32, Device::Cpu).to_vec::<f32>();
    assert_eq!([first, second].concat(), stream);
    assert_eq!(
        third,
        randn_seeded(&[2], 2024, 17, DType::F64, Device::Cpu).to_vec::<f64>()
    );
    // Seeding again replays.
    manual_seed(Device::Cpu, 2024);
    assert_eq!(
        random::rand(&[17], DType::F32, Device::Cpu).to_vec::<f32>(),
        stream
    );
    assert_eq!(random::initial_seed(Device::Cpu), 2024);
}
