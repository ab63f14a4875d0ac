//! The network ops on the GPU, checked against the naive CPU backend and against
//! values known by hand: `bool` results that read back as `bool` (values, dtype, `to(Cpu)`,
//! printing, `copy_`), `where` with broadcasting, `max_dim` with NaN, `argmax` ties and its `i64`
//! results, reductions over empty extents, `to_dtype` between the dtypes the GPU holds, `rand`
//! equal to the CPU's values and `randn` within `f32` accuracy, and the errors for what the GPU
//! does not serve. (`tests/conformance.rs` runs every case of the kit; these are the behaviours
//! a reader should see spelled out.)

use switchyard::ops::{
    argmax, contiguous, eq, ge, gt, le, lt, max_dim, mean_dim, ne, sum_dim, to_dtype, try_add,
    try_arange, try_argmax, try_eq, try_full, try_log, try_max_dim, try_rand_seeded, try_to_dtype,
    try_where_cond, where_cond,
};
use switchyard::random::{normal_value, uniform_value};
use switchyard::{DType, Device, ErrorKind, Tensor};
use switchyard_tests_wgpu::{
    RANDN_ULPS, Tolerance, assert_matches, gpu, gpu_or_skip, naive, tensor,
};

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

fn t(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec::<f32>(values.to_vec(), shape).unwrap()
}

/// `f` on the GPU equals `f` on the naive CPU backend exactly (any NaN matches any NaN), in dtype,
/// shape and values; the GPU's result stays on the GPU.
#[track_caller]
fn same_as_cpu(what: &str, inputs: &[&Tensor], f: impl Fn(&[Tensor]) -> Tensor) {
    let on_cpu: Vec<Tensor> = inputs.iter().map(|x| (*x).clone()).collect();
    let on_gpu: Vec<Tensor> = inputs.iter().map(|x| gpu(x)).collect();
    let want = naive(|| f(&on_cpu));
    let got = f(&on_gpu);
    assert_eq!(got.device(), Device::Wgpu, "{what}");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w) = (
        got.try_to_f64_vec().unwrap(),
        want.try_to_f64_vec().unwrap(),
    );
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "{what}: element {i}: got {a:e}, the naive CPU backend gives {b:e}"
        );
    }
}

#[test]
fn comparisons_give_bool_tensors_that_read_back_as_bool() {
    if !gpu_or_skip("comparisons_give_bool_tensors_that_read_back_as_bool") {
        return;
    }
    let x = t(&[1.0, NAN, -0.0, 1e-40, INF, 2.0], &[2, 3]);
    let y = t(&[1.0, NAN, 0.0, 0.0, INF, 3.0], &[2, 3]);
    let (gx, gy) = (gpu(&x), gpu(&y));
    let r = gt(&gx, &gy);
    assert_eq!(
        (r.device(), r.dtype(), r.shape()),
        (Device::Wgpu, DType::Bool, &[2, 3][..])
    );
    // IEEE: NaN compares false but for `ne`, −0 equals 0, a subnormal is above 0.
    assert_eq!(
        r.to_vec::<bool>(),
        [false, false, false, true, false, false]
    );
    assert_eq!(
        eq(&gx, &gy).to_vec::<bool>(),
        [true, false, true, false, true, false]
    );
    assert_eq!(
        ne(&gx, &gy).to_vec::<bool>(),
        [false, true, false, true, false, true]
    );
    assert_eq!(
        le(&gx, &gy).to_vec::<bool>(),
        [true, false, true, false, true, true]
    );
    // Back on the CPU it is a bool tensor with the same values; it prints as one.
    let back = r.to(Device::Cpu);
    assert_eq!((back.device(), back.dtype()), (Device::Cpu, DType::Bool));
    assert_eq!(back.to_vec::<bool>(), r.to_vec::<bool>());
    assert_eq!(
        format!("{r}"),
        "[[false, false, false], [true, false, false]]"
    );
    assert_eq!(format!("{r}"), format!("{back}"));
    // Reading it as f32 is the same clear error as on the CPU.
    let err = r.try_to_vec::<f32>().unwrap_err().to_string();
    assert!(err.contains("to_vec::<f32> of a bool tensor"), "{err}");
    // Broadcast, and every comparison against the oracle, views included.
    let a = tensor(&[4, 5], 1, 3.0);
    let b = tensor(&[5], 2, 3.0);
    for (name, f) in [
        ("eq", eq as fn(&Tensor, &Tensor) -> Tensor),
        ("ne", ne),
        ("lt", lt),
        ("le", le),
        ("gt", gt),
        ("ge", ge),
    ] {
        same_as_cpu(name, &[&a, &b], |v| f(&v[0], &v[1]));
        same_as_cpu(name, &[&a, &a], |v| {
            f(&v[0].transpose(0, 1), &v[1].narrow(0, 0, 4).transpose(0, 1))
        });
        same_as_cpu(name, &[&a, &b], |v| f(&v[0], &v[0]));
    }
    // Two i64 and two bool tensors compare too (what `max_dim`'s derivative needs).
    let i = Tensor::from_vec::<i64>(vec![i64::MIN, -1, 0, 1 << 40, i64::MAX], &[5]).unwrap();
    let j = Tensor::from_vec::<i64>(vec![-1, i64::MIN, 0, 1, i64::MAX], &[5]).unwrap();
    same_as_cpu("lt of i64", &[&i, &j], |v| lt(&v[0], &v[1]));
    same_as_cpu("eq of i64, broadcast", &[&i, &j], |v| {
        eq(&v[0].unsqueeze(1), &v[1])
    });
    let p = Tensor::from_vec::<bool>(vec![true, false, true], &[3]).unwrap();
    same_as_cpu("gt of bool", &[&p, &p], |v| {
        gt(&v[0], &v[1].flip_for_test())
    });
}

/// A reversed view, without a `flip` op: `[a, b, c]` as `[c, b, a]` through `slice` with a
/// negative step is not available either, so the test builds the reversed tensor on the host.
trait FlipForTest {
    fn flip_for_test(&self) -> Tensor;
}

impl FlipForTest for Tensor {
    fn flip_for_test(&self) -> Tensor {
        let values: Vec<bool> = self.to_vec::<bool>().into_iter().rev().collect();
        Tensor::from_vec::<bool>(values, self.shape())
            .unwrap()
            .to(self.device())
    }
}

#[test]
fn where_broadcasts_its_three_operands_and_keeps_bits() {
    if !gpu_or_skip("where_broadcasts_its_three_operands_and_keeps_bits") {
        return;
    }
    let cond = Tensor::from_vec::<bool>(vec![true, false, true], &[3, 1]).unwrap();
    let x = t(&[-0.0, NAN, 1e-40, 4.0], &[1, 4]);
    let y = t(&[7.0], &[]);
    let r = where_cond(&gpu(&cond), &gpu(&x), &gpu(&y));
    assert_eq!((r.dtype(), r.shape()), (DType::F32, &[3, 4][..]));
    let v = r.to_vec::<f32>();
    assert!(v[0] == 0.0 && v[0].is_sign_negative(), "−0 kept: {v:?}");
    assert!(v[1].is_nan() && v[2] == 1e-40 && v[3] == 4.0, "{v:?}");
    assert_eq!(&v[4..8], [7.0; 4]);
    same_as_cpu("where, broadcast", &[&cond, &x, &y], |v| {
        where_cond(&v[0], &v[1], &v[2])
    });
    // Transposed and strided operands.
    let c = gt(&tensor(&[5, 3], 3, 1.0), &Tensor::scalar(0.0));
    let a = tensor(&[3, 5], 4, 2.0);
    same_as_cpu("where, transposed", &[&c, &a, &a], |v| {
        where_cond(
            &v[0].transpose(0, 1),
            &v[1],
            &v[2].narrow(1, 1, 4).narrow(1, 0, 1),
        )
    });
    // i64 and bool values are selected word by word; a bool value is promoted on the GPU.
    let i = Tensor::from_vec::<i64>(vec![i64::MIN, 5, i64::MAX], &[3]).unwrap();
    let j = Tensor::from_vec::<i64>(vec![-7], &[1]).unwrap();
    same_as_cpu("where of i64", &[&cond, &i, &j], |v| {
        where_cond(&v[0], &v[1], &v[2])
    });
    let p = Tensor::from_vec::<bool>(vec![true, true, false], &[3]).unwrap();
    same_as_cpu("where of bool and i64", &[&cond, &p, &i], |v| {
        where_cond(&v[0], &v[1], &v[2])
    });
    // A condition that is not bool: the rule's own error, as on the CPU.
    let err = try_where_cond(&gpu(&x), &gpu(&x), &gpu(&x))
        .unwrap_err()
        .to_string();
    assert!(err.contains("the condition must be a bool tensor"), "{err}");
}

#[test]
fn max_dim_propagates_nan_and_argmax_takes_the_first_of_ties() {
    if !gpu_or_skip("max_dim_propagates_nan_and_argmax_takes_the_first_of_ties") {
        return;
    }
    let x = t(
        &[
            1.0, NAN, 3.0, NAN, 2.0, 2.0, -1.0, 2.0, -0.0, 0.0, -INF, -0.0,
        ],
        &[3, 4],
    );
    let g = gpu(&x);
    let m = max_dim(&g, 1, false);
    let v = m.to_vec::<f32>();
    assert!(v[0].is_nan(), "{v:?}");
    assert_eq!(v[1], 2.0);
    // −0 and 0 tie; the first is kept, bit for bit.
    assert!(v[2] == 0.0 && v[2].is_sign_negative(), "{v:?}");
    let a = argmax(&g, 1, true);
    assert_eq!(
        (a.dtype(), a.shape(), a.device()),
        (DType::I64, &[3, 1][..], Device::Wgpu)
    );
    assert_eq!(a.to_vec::<i64>(), [1, 0, 0]);
    assert_eq!(a.to(Device::Cpu).to_vec::<i64>(), [1, 0, 0]);
    assert_eq!(argmax(&g, 0, false).to_vec::<i64>(), [1, 0, 0, 0]);
    for dim in 0..2 {
        for keepdim in [false, true] {
            same_as_cpu("max_dim", &[&x], |v| max_dim(&v[0], dim, keepdim));
            same_as_cpu("argmax", &[&x], |v| argmax(&v[0], dim, keepdim));
            same_as_cpu("argmax of a transpose", &[&x], |v| {
                argmax(&v[0].transpose(0, 1), dim, keepdim)
            });
        }
    }
    // Rows longer than a workgroup: the tree finds the first maximum.
    let mut long = vec![1.0f32; 3000];
    long[700] = 5.0;
    long[2900] = 5.0;
    let long = t(&long, &[3000]);
    assert_eq!(argmax(&gpu(&long), 0, false).to_vec::<i64>(), [700]);
    // An empty extent is the CPU's error.
    let empty = gpu(&t(&[], &[2, 0]));
    for err in [
        try_max_dim(&empty, 1, false).unwrap_err(),
        try_argmax(&empty, 1, false).unwrap_err(),
    ] {
        assert!(matches!(err.kind(), ErrorKind::Shape { .. }), "{err}");
        assert!(err.to_string().contains("is empty"), "{err}");
    }
}

/// A view of a tensor, applied alike to the CPU input and its GPU copy.
type View = fn(&Tensor) -> Tensor;

#[test]
fn sums_and_means_along_dimensions_match_the_cpu() {
    if !gpu_or_skip("sums_and_means_along_dimensions_match_the_cpu") {
        return;
    }
    let base = tensor(&[4, 300, 3], 9, 4.0);
    let base_abs = Tensor::from_vec::<f32>(
        base.to_vec::<f32>().iter().map(|v| v.abs()).collect(),
        base.shape(),
    )
    .unwrap();
    let on_gpu = gpu(&base);
    let layouts: [(&str, View); 3] = [
        ("contiguous", Tensor::clone),
        ("transposed", |t| t.transpose(0, 2)),
        ("narrowed", |t| t.narrow(1, 5, 250)),
    ];
    for (layout, view) in layouts {
        let (x, abs, g) = (view(&base), view(&base_abs), view(&on_gpu));
        for dims in [&[0isize][..], &[1], &[2], &[0, 2], &[2, 1, 0], &[]] {
            let count: usize = dims.iter().map(|&d| x.shape()[d as usize]).product();
            for keepdim in [false, true] {
                // The error bound of a sum of n terms (and of their mean): n·Σ|x| (Σ|x|).
                let total = naive(|| sum_dim(&abs, dims, keepdim));
                let sum_scale = naive(|| &total * &Tensor::scalar(count as f32));
                let what = format!("sum_dim over {dims:?} of a {layout} tensor");
                let want = naive(|| sum_dim(&x, dims, keepdim));
                let got = sum_dim(&g, dims, keepdim);
                assert_matches(
                    &what,
                    Device::Wgpu,
                    &got,
                    &want,
                    Tolerance::Scaled(f32::EPSILON),
                    Some(&sum_scale),
                );
                let what = format!("mean_dim over {dims:?} of a {layout} tensor");
                let want = naive(|| mean_dim(&x, dims, keepdim));
                let got = mean_dim(&g, dims, keepdim);
                assert_matches(
                    &what,
                    Device::Wgpu,
                    &got,
                    &want,
                    Tolerance::Scaled(2.0 * f32::EPSILON),
                    Some(&total),
                );
            }
        }
    }
    // Empty extents: sums 0, means NaN.
    let empty = gpu(&t(&[], &[3, 0]));
    assert_eq!(sum_dim(&empty, &[1], false).to_vec::<f32>(), [0.0; 3]);
    assert!(
        mean_dim(&empty, &[1], true)
            .to_vec::<f32>()
            .iter()
            .all(|v| v.is_nan())
    );
    assert_eq!(sum_dim(&empty, &[0], false).shape(), [0]);
}

#[test]
fn to_dtype_converts_between_the_dtypes_the_gpu_holds() {
    if !gpu_or_skip("to_dtype_converts_between_the_dtypes_the_gpu_holds") {
        return;
    }
    let x = t(&[0.0, -0.0, NAN, 1e-40, -2.7, 3e9, -INF, 1e30], &[8]);
    let b = Tensor::from_vec::<bool>(vec![true, false, true], &[3]).unwrap();
    // 2⁶⁰ + 2³⁶ + 1 rounds up in one rounding to `f32`, but to 2⁶⁰ through `f64` (a tie
    // then), as the CPU converts.
    let tie = (1i64 << 60) + (1 << 36) + 1;
    let i = Tensor::from_vec::<i64>(
        vec![0, -1, i64::MIN, i64::MAX, 1 << 33, (1 << 24) + 1, tie, -tie],
        &[8],
    )
    .unwrap();
    assert_eq!(
        gpu(&i).to_dtype(DType::F32).to_vec::<f32>()[6],
        (1u64 << 60) as f32
    );
    for (input, to) in [
        (&x, DType::Bool),
        (&x, DType::I64),
        (&b, DType::F32),
        (&b, DType::I64),
        (&i, DType::Bool),
        (&i, DType::F32),
    ] {
        let what = format!("{} → {to}", input.dtype());
        same_as_cpu(&what, &[input], |v| to_dtype(&v[0], to));
        same_as_cpu(&what, &[input], |v| to_dtype(&v[0].narrow(0, 1, 2), to));
    }
    // Gathers of bool and i64 views keep every bit.
    same_as_cpu("contiguous of an i64 view", &[&i], |v| {
        contiguous(&v[0].unsqueeze(1).expand(&[8, 3]).transpose(0, 1))
    });
    same_as_cpu("contiguous of a bool view", &[&b], |v| {
        contiguous(&v[0].unsqueeze(0).expand(&[2, 3]).transpose(0, 1))
    });
    // What the GPU does not hold says how to get it.
    let err = try_to_dtype(&gpu(&x), DType::F64).unwrap_err().to_string();
    assert!(
        err.contains("f32 → f64") && err.contains("to(Device::Cpu)"),
        "{err}"
    );
}

#[test]
fn copy_writes_bool_and_i64_destinations() {
    if !gpu_or_skip("copy_writes_bool_and_i64_destinations") {
        return;
    }
    let mut dst = gpu(&Tensor::from_vec::<bool>(vec![false; 6], &[2, 3]).unwrap());
    let mask = gt(
        &gpu(&t(&[1.0, -1.0, 2.0], &[3])),
        &gpu(&Tensor::scalar(0.0)),
    );
    dst.copy_(&mask);
    assert_eq!(dst.to_vec::<bool>(), [true, false, true, true, false, true]);
    // From an f32 source on the GPU, converted there.
    dst.copy_(&gpu(&t(&[0.0, 5.0, NAN], &[3])));
    assert_eq!(dst.to_vec::<bool>(), [false, true, true, false, true, true]);
    let mut longs = gpu(&Tensor::from_vec::<i64>(vec![0; 4], &[2, 2]).unwrap());
    let source = Tensor::from_vec::<i64>(vec![i64::MIN, i64::MAX], &[2, 1]).unwrap();
    longs.copy_(&source);
    assert_eq!(
        longs.to_vec::<i64>(),
        [i64::MIN, i64::MIN, i64::MAX, i64::MAX]
    );
    let mut column = longs.narrow(1, 1, 1);
    column.copy_(&Tensor::from_vec::<i64>(vec![7, -7], &[2, 1]).unwrap());
    assert_eq!(longs.to_vec::<i64>(), [i64::MIN, 7, i64::MAX, -7]);
}

#[test]
fn full_and_fill_make_bool_and_i64_tensors() {
    if !gpu_or_skip("full_and_fill_make_bool_and_i64_tensors") {
        return;
    }
    for dtype in [DType::F32, DType::Bool, DType::I64] {
        for value in [2.75, -1.5, 0.0, f64::NAN, 1e30, -1e30] {
            let g = try_full(&[2, 3], value, dtype, Device::Wgpu).unwrap();
            let c = naive(|| try_full(&[2, 3], value, dtype, Device::Cpu).unwrap());
            assert_eq!((g.dtype(), g.device()), (dtype, Device::Wgpu));
            let (g, c) = (g.try_to_f64_vec().unwrap(), c.try_to_f64_vec().unwrap());
            assert!(
                g.iter()
                    .zip(&c)
                    .all(|(a, b)| a == b || (a.is_nan() && b.is_nan())),
                "full({value}, {dtype}): {g:?} vs {c:?}"
            );
        }
    }
    // The in-place composites go through `full` and `copy_`.
    let mask = gpu(&Tensor::from_vec::<bool>(vec![false; 4], &[4]).unwrap());
    mask.narrow(0, 1, 2).fill_(1.0);
    assert_eq!(mask.to_vec::<bool>(), [false, true, true, false]);
    let mut longs = gpu(&Tensor::from_vec::<i64>(vec![5; 3], &[3]).unwrap());
    longs.zero_();
    assert_eq!(longs.to_vec::<i64>(), [0; 3]);
}

#[test]
fn arange_and_rand_equal_the_cpu_and_randn_is_within_f32_accuracy() {
    if !gpu_or_skip("arange_and_rand_equal_the_cpu_and_randn_is_within_f32_accuracy") {
        return;
    }
    for dtype in [DType::F32, DType::I64] {
        let g = try_arange(1000, dtype, Device::Wgpu).unwrap();
        let c = naive(|| try_arange(1000, dtype, Device::Cpu).unwrap());
        assert_eq!((g.dtype(), g.device()), (dtype, Device::Wgpu));
        assert_eq!(g.try_to_f64_vec().unwrap(), c.try_to_f64_vec().unwrap());
    }
    // Seeds and offsets that carry into the counter's high word and wrap past 2⁶⁴.
    for (seed, offset) in [(0, 0), (42, (1 << 32) - 5), (-1, -3)] {
        let n = 5000;
        let r = try_rand_seeded(&[n], seed, offset, DType::F32, Device::Wgpu).unwrap();
        let got = r.to_vec::<f32>();
        for (i, v) in got.iter().enumerate() {
            let want = uniform_value(
                DType::F32,
                seed as u64,
                (offset as u64).wrapping_add(i as u64),
            );
            assert_eq!(
                f64::from(*v),
                want,
                "rand element {i} of seed {seed}, offset {offset}"
            );
        }
        let r = switchyard::ops::try_randn_seeded(&[n], seed, offset, DType::F32, Device::Wgpu)
            .unwrap();
        for (i, v) in r.to_vec::<f32>().iter().enumerate() {
            let want = normal_value(
                DType::F32,
                seed as u64,
                (offset as u64).wrapping_add(i as u64),
            ) as f32;
            let ulps = ulps(*v, want);
            assert!(
                ulps <= RANDN_ULPS,
                "randn element {i}: got {v:e}, the CPU gives {want:e} ({ulps} ulp)"
            );
        }
    }
    // Other dtypes: the dtype is named.
    let err = try_rand_seeded(&[3], 0, 0, DType::F64, Device::Wgpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("f64") && err.contains("f32"), "{err}");
}

fn ulps(a: f32, b: f32) -> u32 {
    let key = |x: f32| {
        let bits = x.to_bits() as i32;
        if bits < 0 { i32::MIN - bits } else { bits }
    };
    key(a).abs_diff(key(b))
}

#[test]
fn what_the_gpu_does_not_serve_is_a_clear_error() {
    if !gpu_or_skip("what_the_gpu_does_not_serve_is_a_clear_error") {
        return;
    }
    let b = gpu(&Tensor::from_vec::<bool>(vec![true], &[1]).unwrap());
    let x = gpu(&t(&[1.0], &[1]));
    let i = gpu(&Tensor::from_vec::<i64>(vec![1], &[1]).unwrap());
    // `log` of a bool GPU tensor: no kernel for the bool column at Wgpu; the error names the op,
    // the key and what is served.
    let err = try_log(&b).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::MissingKernel { .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("log") && message.contains("Wgpu") && message.contains("f32"),
        "{message}"
    );
    // Mixed dtypes in a comparison are not converted silently.
    let err = try_eq(&x, &i).unwrap_err().to_string();
    assert!(err.contains("eq") && err.contains("Wgpu"), "{err}");
    // Arithmetic on bool and i64 GPU tensors: refused by dtype, never computed as f32.
    let err = try_add(&i, &i).unwrap_err().to_string();
    assert!(err.contains("add") && err.contains("i64"), "{err}");
    // f64 cannot go to the GPU.
    let f = Tensor::from_vec::<f64>(vec![1.0], &[1]).unwrap();
    let err = f.try_to(Device::Wgpu).unwrap_err().to_string();
    assert!(
        err.contains("holds f32, bool and i64 tensors only") && err.contains("f64"),
        "{err}"
    );
}
