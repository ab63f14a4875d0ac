//! Broadcasting and strided views on the GPU, against the naive CPU backend on the same values:
//! every elementwise op over broadcast shapes, and every op the wgpu backend serves over
//! transposed, narrowed, stepped, selected, permuted and expanded GPU views, and reading such a
//! view back. Each view is taken the same way on both devices, so the two compute over the same
//! layout.

use switchyard::ops::{
    add, contiguous, expand, matmul, mean, mul, narrow, neg, permute, relu, select, slice, sum,
    transpose, try_add, try_full, try_mul, try_neg, try_to,
};
use switchyard::{DType, Device, ErrorKind, Tensor};
use switchyard_tests_wgpu::{
    BINARY, Tolerance, UNARY, assert_matches, gpu, gpu_or_skip, naive, tensor,
};

/// A view taken the same way on the CPU and on the GPU.
struct View {
    name: &'static str,
    /// The base tensor's shape.
    base: &'static [usize],
    take: fn(&Tensor) -> Tensor,
}

/// Views whose layouts the strided shaders must follow: gaps between rows, steps, swapped and
/// permuted strides, a storage offset, stride 0, and sizes past one workgroup.
fn views() -> Vec<View> {
    vec![
        View {
            name: "transposed [5, 7]",
            base: &[5, 7],
            take: |x| transpose(x, 0, 1),
        },
        View {
            name: "narrowed columns 2..5 of [6, 9]",
            base: &[6, 9],
            take: |x| narrow(x, 1, 2, 3),
        },
        View {
            name: "rows 1..11 step 3 of [12, 5]",
            base: &[12, 5],
            take: |x| slice(x, 0, 1, 11, 3),
        },
        View {
            name: "columns 0..37 step 2 of [3, 37]",
            base: &[3, 37],
            take: |x| slice(x, 1, 0, 37, 2),
        },
        View {
            name: "index 2 of dimension 1 of [4, 5, 6]",
            base: &[4, 5, 6],
            take: |x| select(x, 1, 2),
        },
        View {
            name: "[2, 3, 4] permuted to [4, 2, 3]",
            base: &[2, 3, 4],
            take: |x| permute(x, &[2, 0, 1]),
        },
        View {
            name: "[1, 5] expanded to [3, 5]",
            base: &[1, 5],
            take: |x| expand(x, &[3, 5]),
        },
        View {
            name: "[3, 1] expanded to [2, 3, 4]",
            base: &[3, 1],
            take: |x| expand(x, &[2, 3, 4]),
        },
        View {
            name: "the last row of [4, 300] (an offset, contiguous)",
            base: &[4, 300],
            take: |x| select(x, 0, 3),
        },
        View {
            name: "transposed [300, 257] (many workgroups)",
            base: &[300, 257],
            take: |x| transpose(x, 0, 1),
        },
        View {
            name: "an empty narrow of [4, 3]",
            base: &[4, 3],
            take: |x| narrow(x, 0, 2, 0),
        },
    ]
}

/// Each view's `to(Device::Cpu)` and `to_vec` give its elements bit for bit, and `contiguous`
/// on the GPU gives them too.
#[test]
fn strided_views_read_back() {
    if !gpu_or_skip("strided_views_read_back") {
        return;
    }
    for (i, view) in views().into_iter().enumerate() {
        let x = tensor(view.base, 10 + i as u64, 8.0);
        let expected = (view.take)(&x);
        let on_gpu = (view.take)(&gpu(&x));
        assert_eq!(on_gpu.device(), Device::Wgpu, "{}", view.name);
        assert_eq!(on_gpu.strides(), expected.strides(), "{}", view.name);
        let back = on_gpu.to(Device::Cpu);
        assert_eq!(back.device(), Device::Cpu, "{}", view.name);
        assert!(back.is_contiguous(), "{}: to(Cpu) is contiguous", view.name);
        let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
        let want = bits(expected.to_vec::<f32>());
        assert_eq!(bits(back.to_vec::<f32>()), want, "{}: to(Cpu)", view.name);
        assert_eq!(bits(on_gpu.to_vec::<f32>()), want, "{}: to_vec", view.name);
        let packed = contiguous(&on_gpu);
        assert_eq!(packed.device(), Device::Wgpu, "{}", view.name);
        assert!(packed.is_contiguous(), "{}: contiguous", view.name);
        assert_eq!(
            bits(packed.to_vec::<f32>()),
            want,
            "{}: contiguous",
            view.name
        );
    }
}

#[test]
fn unary_ops_of_strided_views() {
    if !gpu_or_skip("unary_ops_of_strided_views") {
        return;
    }
    for (i, view) in views().into_iter().enumerate() {
        let x = tensor(view.base, 100 + i as u64, 8.0);
        let (xv, xg) = ((view.take)(&x), (view.take)(&gpu(&x)));
        for (name, op, tolerance) in UNARY {
            let what = format!("{name} of {}", view.name);
            let expected = naive(|| op(&xv));
            assert_matches(&what, Device::Wgpu, &op(&xg), &expected, tolerance, None);
        }
    }
}

/// Each binary op with a view on either side and a contiguous operand of the view's shape on the
/// other, and with the view on both sides.
#[test]
fn binary_ops_of_strided_views() {
    if !gpu_or_skip("binary_ops_of_strided_views") {
        return;
    }
    for (i, view) in views().into_iter().enumerate() {
        let x = tensor(view.base, 200 + i as u64, 8.0);
        let xv = (view.take)(&x);
        let xg = (view.take)(&gpu(&x));
        let y = tensor(xv.shape(), 300 + i as u64, 8.0);
        let yg = gpu(&y);
        for (name, op, tolerance) in BINARY {
            for (side, (a, b), (ag, bg)) in [
                ("view ∘ dense", (&xv, &y), (&xg, &yg)),
                ("dense ∘ view", (&y, &xv), (&yg, &xg)),
                ("view ∘ view", (&xv, &xv), (&xg, &xg)),
            ] {
                let what = format!("{name}, {side}, of {}", view.name);
                let expected = naive(|| op(a, b));
                assert_matches(&what, Device::Wgpu, &op(ag, bg), &expected, tolerance, None);
            }
        }
    }
}

/// NumPy's broadcasting, both operand orders, every binary op.
#[test]
fn binary_ops_broadcast() {
    if !gpu_or_skip("binary_ops_broadcast") {
        return;
    }
    let pairs: &[(&[usize], &[usize])] = &[
        (&[3, 1], &[1, 4]),
        (&[4], &[2, 3, 4]),
        (&[], &[5]),
        (&[0, 3], &[1, 3]),
        (&[1000, 1], &[1, 37]),
        (&[2, 1, 3], &[4, 1]),
        (&[1], &[257]),
        (&[7, 1, 1], &[1, 300, 1]),
    ];
    for (i, &(a, b)) in pairs.iter().enumerate() {
        let x = tensor(a, 400 + 2 * i as u64, 8.0);
        let y = tensor(b, 401 + 2 * i as u64, 8.0);
        let (xg, yg) = (gpu(&x), gpu(&y));
        for (name, op, tolerance) in BINARY {
            let what = format!("{name} of {a:?} and {b:?}");
            let expected = naive(|| op(&x, &y));
            assert_matches(
                &what,
                Device::Wgpu,
                &op(&xg, &yg),
                &expected,
                tolerance,
                None,
            );
            let what = format!("{name} of {b:?} and {a:?}");
            let expected = naive(|| op(&y, &x));
            assert_matches(
                &what,
                Device::Wgpu,
                &op(&yg, &xg),
                &expected,
                tolerance,
                None,
            );
        }
    }
    // A broadcast operand that is itself a view: a transposed [4, 1]'s row against [3, 4].
    let x = tensor(&[4, 1], 450, 8.0);
    let y = tensor(&[3, 4], 451, 8.0);
    let expected = naive(|| mul(&transpose(&x, 0, 1), &y));
    let actual = mul(&transpose(&gpu(&x), 0, 1), &gpu(&y));
    let what = "mul of a transposed [4, 1] and [3, 4]";
    assert_matches(
        what,
        Device::Wgpu,
        &actual,
        &expected,
        Tolerance::Exact,
        None,
    );
}

/// Incompatible shapes are a shape error naming both, the CPU's word for word; never a panic.
#[test]
fn incompatible_broadcasts_are_shape_errors() {
    if !gpu_or_skip("incompatible_broadcasts_are_shape_errors") {
        return;
    }
    for (a, b) in [(&[2, 3][..], &[4][..]), (&[3, 1], &[2, 4]), (&[5], &[0])] {
        let (x, y) = (tensor(a, 500, 1.0), tensor(b, 501, 1.0));
        let on_cpu = naive(|| try_add(&x, &y)).unwrap_err();
        let on_gpu = try_add(&gpu(&x), &gpu(&y)).unwrap_err();
        assert!(
            matches!(on_gpu.kind(), ErrorKind::Shape { op: "add", .. }),
            "{on_gpu}"
        );
        let message = on_gpu.to_string();
        assert!(
            message.contains(&format!("{a:?}")) && message.contains(&format!("{b:?}")),
            "{message}"
        );
        assert_eq!(message, on_cpu.to_string());
    }
    // Broadcasting that does fit works on the GPU (it was refused before).
    let x = gpu(&tensor(&[2, 3], 502, 1.0));
    let y = gpu(&Tensor::vector(&[2.0]));
    assert_eq!(try_mul(&x, &y).unwrap().shape(), &[2, 3]);
}

#[test]
fn reductions_of_strided_views() {
    if !gpu_or_skip("reductions_of_strided_views") {
        return;
    }
    let mut all = views();
    all.push(View {
        name: "transposed [1100, 9] (several reduction chunks)",
        base: &[1100, 9],
        take: |x| transpose(x, 0, 1),
    });
    for (i, view) in all.into_iter().enumerate() {
        let x = tensor(view.base, 600 + i as u64, 4.0);
        let (xv, xg) = ((view.take)(&x), (view.take)(&gpu(&x)));
        // The rounding error of a sum is bounded by a multiple of the sum of magnitudes.
        let magnitude: f32 = xv.to_vec::<f32>().iter().map(|v| v.abs()).sum();
        let tolerance = Tolerance::Scaled(1e-5);
        let what = format!("sum of {}", view.name);
        let scale = Tensor::scalar(magnitude);
        let expected = naive(|| sum(&xv));
        let actual = sum(&xg);
        assert_matches(
            &what,
            Device::Wgpu,
            &actual,
            &expected,
            tolerance,
            Some(&scale),
        );
        let what = format!("mean of {}", view.name);
        let scale = Tensor::scalar(magnitude / xv.numel().max(1) as f32);
        let expected = naive(|| mean(&xv));
        let actual = mean(&xg);
        assert_matches(
            &what,
            Device::Wgpu,
            &actual,
            &expected,
            tolerance,
            Some(&scale),
        );
    }
}

/// `|x|`, elementwise, from ops every backend has.
fn abs(x: &Tensor) -> Tensor {
    add(&relu(x), &relu(&neg(x)))
}

/// Operands of `matmul` as views: transposed (the common `x · wᵀ`), column slices with gaps,
/// stepped rows, an expanded row (stride 0), a selected plane.
#[test]
fn matmul_of_strided_views() {
    if !gpu_or_skip("matmul_of_strided_views") {
        return;
    }
    type Take = fn(&Tensor) -> Tensor;
    /// A base shape and the view of it that `matmul` gets.
    type Operand = (&'static [usize], Take);
    let same: Take = |t| t.clone();
    let t: Take = |t| transpose(t, 0, 1);
    let cases: &[(&str, Operand, Operand)] = &[
        ("x · yᵀ", (&[17, 33], same), (&[15, 33], t)),
        ("xᵀ · y", (&[33, 17], t), (&[33, 15], same)),
        ("xᵀ · yᵀ", (&[40, 20], t), (&[9, 40], t)),
        (
            "narrowed columns",
            (&[10, 30], |t| narrow(t, 1, 5, 20)),
            (&[20, 50], |t| narrow(t, 1, 7, 30)),
        ),
        (
            "stepped rows",
            (&[30, 8], |t| slice(t, 0, 1, 30, 2)),
            (&[16, 6], |t| slice(t, 0, 0, 16, 2)),
        ),
        (
            "an expanded row",
            (&[1, 12], |t| expand(t, &[5, 12])),
            (&[12, 3], same),
        ),
        (
            "a selected plane, transposed",
            (&[3, 9, 7], |t| transpose(&select(t, 0, 1), 0, 1)),
            (&[9, 4], same),
        ),
        (
            "transposed, larger than a tile",
            (&[129, 100], t),
            (&[65, 129], t),
        ),
    ];
    for (i, &(name, (xs, take_x), (ys, take_y))) in cases.iter().enumerate() {
        let x = tensor(xs, 700 + 2 * i as u64, 2.0);
        let y = tensor(ys, 701 + 2 * i as u64, 2.0);
        let (xv, yv) = (take_x(&x), take_y(&y));
        let (xg, yg) = (take_x(&gpu(&x)), take_y(&gpu(&y)));
        let expected = naive(|| matmul(&xv, &yv));
        // The same product over magnitudes bounds each element's rounding error.
        let magnitude = naive(|| matmul(&abs(&xv), &abs(&yv)));
        let what = format!("matmul, {name}");
        assert_matches(
            &what,
            Device::Wgpu,
            &matmul(&xg, &yg),
            &expected,
            Tolerance::Scaled(1e-5),
            Some(&magnitude),
        );
    }
}

/// Ten dimensions are fine when they merge (a contiguous tensor is one run of elements); a
/// layout that leaves more than eight after merging is a clear error, not a panic.
#[test]
fn rank_limit_of_the_strided_shaders() {
    if !gpu_or_skip("rank_limit_of_the_strided_shaders") {
        return;
    }
    let shape = [2; 10];
    let x = tensor(&shape, 800, 4.0);
    let xg = gpu(&x);
    // Every dimension reversed: no two neighbours merge.
    let reverse: Vec<isize> = (0..10).rev().collect();
    let expected = naive(|| neg(&permute(&x, &reverse)));
    let strided = permute(&xg, &reverse);
    // A dense operand of ten dimensions takes the plain shader; a broadcast one merges.
    let what = "add of [2; 10] and [2]";
    let expected_add = naive(|| add(&x, &Tensor::vector(&[1.0, 2.0])));
    let actual = add(&xg, &gpu(&Tensor::vector(&[1.0, 2.0])));
    assert_matches(
        what,
        Device::Wgpu,
        &actual,
        &expected_add,
        Tolerance::Exact,
        None,
    );
    let err = try_neg(&strided).unwrap_err().to_string();
    assert!(err.contains("at most 8 dimensions"), "{err}");
    assert!(err.contains(&format!("{:?}", strided.strides())), "{err}");
    // Through the CPU it works, and gives what the naive backend gives.
    let via_cpu = gpu(&neg(&strided.to(Device::Cpu)));
    assert_matches(
        "neg of ten reversed dimensions, via the CPU",
        Device::Wgpu,
        &via_cpu,
        &expected,
        Tolerance::Exact,
        None,
    );
}

/// Other dtypes are refused by name: the backend's buffers hold `f32`, `bool` and `i64` only.
#[test]
fn other_dtypes_are_clear_errors() {
    if !gpu_or_skip("other_dtypes_are_clear_errors") {
        return;
    }
    let x = Tensor::from_vec::<f64>(vec![1.0, 2.0], &[2]).unwrap();
    // `to` refuses by itself (it declares every column: see `kernels.rs`).
    let err = try_to(&x, Device::Wgpu).unwrap_err().to_string();
    assert!(
        err.contains("the wgpu backend holds f32, bool and i64 tensors only")
            && err.contains("f64"),
        "{err}"
    );
    // `full` declares the held dtypes: the missing-kernel error names the dtype asked for and
    // those served.
    let err = try_full(&[2], 1.0, DType::F64, Device::Wgpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("f32") && err.contains("f64"), "{err}");
}
