//! Where the standard ops say they answer as PyTorch does, PyTorch's answers: each expected value
//! below was computed with PyTorch 2.x and is held here as data (the tests do not need PyTorch).
//! The 0-d promotion rule, `relu`'s gradient at NaN, the refusals of `bool − x` and `argmax` of
//! `bool`, `matmul` overflowing to IEEE infinity on the naive backend (the oracle), and `div`
//! with a rounding mode.

use switchyard::ops::{self, Rounding, div_rounded, matmul};
use switchyard::{DType, DispatchKeySet, Tensor};
use switchyard_backends as _; // links the CPU kernels

fn f32s(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).unwrap()
}

fn zero_dim<T: switchyard::Element>(value: T) -> Tensor {
    Tensor::from_scalar(value).unwrap()
}

// torch.tensor([1., 2., 3.]) + torch.tensor(0.1, dtype=torch.float64)
//   -> tensor([1.1000, 2.1000, 3.1000]) (float32)
#[test]
fn a_zero_dim_float_does_not_raise_a_float_tensor() {
    let x = f32s(&[1.0, 2.0, 3.0], &[3]);
    let y = zero_dim(0.1f64);
    for result in [ops::add(&x, &y), ops::add(&y, &x)] {
        assert_eq!(result.dtype(), DType::F32);
        // Computed in f32: the 0-d operand is rounded to f32 first.
        assert_eq!(
            result.to_vec::<f32>(),
            [1.0 + 0.1f32, 2.0 + 0.1f32, 3.0 + 0.1f32]
        );
    }
    // torch.tensor([1., 2.], dtype=torch.float16) * torch.tensor(2.) -> float16
    let h = ops::to_dtype(&f32s(&[1.0, 2.0], &[2]), DType::F16);
    assert_eq!(ops::mul(&h, &zero_dim(2.0f32)).dtype(), DType::F16);
}

// torch.tensor([250, 1, 2], dtype=torch.uint8) + torch.tensor(10) -> tensor([4, 11, 12],
//   dtype=torch.uint8)
#[test]
fn a_zero_dim_integer_does_not_raise_an_integer_tensor() {
    let x = Tensor::from_vec(vec![250u8, 1, 2], &[3]).unwrap();
    let result = ops::add(&x, &zero_dim(10i64));
    assert_eq!(result.dtype(), DType::U8);
    assert_eq!(result.to_vec::<u8>(), [4, 11, 12]);
}

// torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(0.5, dtype=torch.float64)
//   -> tensor([1.5000, 2.5000], dtype=torch.float64): a higher category promotes.
// torch.tensor(1.) + torch.tensor(2., dtype=torch.float64) -> float64: all 0-d promote.
// torch.tensor([True, False]) + torch.tensor(3) -> tensor([4, 3]) (int64)
#[test]
fn a_zero_dim_of_a_higher_category_promotes() {
    let x = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    let result = ops::add(&x, &zero_dim(0.5f64));
    assert_eq!(result.dtype(), DType::F64);
    assert_eq!(result.to_vec::<f64>(), [1.5, 2.5]);
    assert_eq!(
        ops::add(&zero_dim(1.0f32), &zero_dim(2.0f64)).dtype(),
        DType::F64
    );
    let mask = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let counted = ops::add(&mask, &zero_dim(3i64));
    assert_eq!(counted.dtype(), DType::I64);
    assert_eq!(counted.to_vec::<i64>(), [4, 3]);
}

// torch.eq(torch.tensor([0.1, 0.2, 0.3]), torch.tensor(0.1, dtype=torch.float64))
//   -> tensor([ True, False, False])
// torch.lt(torch.tensor([0.1, 0.2]), torch.tensor(0.1, dtype=torch.float64))
//   -> tensor([False, False])
#[test]
fn comparisons_with_a_zero_dim_compare_in_the_tensors_dtype() {
    let x = f32s(&[0.1, 0.2, 0.3], &[3]);
    let y = zero_dim(0.1f64);
    assert_eq!(ops::eq(&x, &y).to_vec::<bool>(), [true, false, false]);
    assert_eq!(ops::eq(&y, &x).to_vec::<bool>(), [true, false, false]);
    assert_eq!(ops::lt(&x, &y).to_vec::<bool>(), [false, false, false]);
}

// torch.where(torch.tensor([True, False]), torch.tensor([1., 2.]),
//   torch.tensor(0.1, dtype=torch.float64)) -> tensor([1.0000, 0.1000]) (float32)
#[test]
fn where_with_a_zero_dim_keeps_the_tensors_dtype() {
    let cond = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let result = ops::where_cond(&cond, &f32s(&[1.0, 2.0], &[2]), &zero_dim(0.1f64));
    assert_eq!(result.dtype(), DType::F32);
    assert_eq!(result.to_vec::<f32>(), [1.0, 0.1]);
}

// In-place ops take the same rule: x = torch.tensor([1., 2.]); x.add_(torch.tensor(0.1,
//   dtype=torch.float64)) -> tensor([1.1000, 2.1000]) (float32, computed in f32)
#[test]
fn in_place_ops_follow_the_zero_dim_rule() {
    let mut x = f32s(&[1.0, 2.0], &[2]);
    ops::add_(&mut x, &zero_dim(0.1f64));
    assert_eq!(x.to_vec::<f32>(), [1.0 + 0.1f32, 2.0 + 0.1f32]);
}

// torch.ops.aten.threshold_backward(torch.tensor([1., 2., nan, 4., 5.]),
//   torch.tensor([nan, 0., -1., 5., -inf]), 0) -> tensor([1., 0., 0., 4., 0.])
#[test]
fn relu_backward_passes_the_gradient_where_the_output_is_nan() {
    let grad = f32s(&[1.0, 2.0, f32::NAN, 4.0, 5.0], &[5]);
    let out = f32s(&[f32::NAN, 0.0, -1.0, 5.0, f32::NEG_INFINITY], &[5]);
    let want = [1.0, 0.0, 0.0, 4.0, 0.0];
    let got = ops::relu_backward(&grad, &out).to_vec::<f32>();
    assert_eq!(got, want);
    assert!(got.iter().all(|g| g.is_sign_positive()), "{got:?}");
    // In f64 too (the op's body: no SIMD kernel serves it).
    let got64 = ops::relu_backward(
        &ops::to_dtype(&grad, DType::F64),
        &ops::to_dtype(&out, DType::F64),
    );
    assert_eq!(got64.to_vec::<f64>(), want.map(f64::from));
    // Every length through the SIMD lanes and their tail.
    for n in [1, 7, 8, 9, 17, 33] {
        let grad = Tensor::from_vec(vec![3.0f32; n], &[n]).unwrap();
        let out = Tensor::from_vec(vec![f32::NAN; n], &[n]).unwrap();
        assert_eq!(
            ops::relu_backward(&grad, &out).to_vec::<f32>(),
            vec![3.0; n]
        );
    }
}

// x = torch.tensor([nan, -1., 2.], requires_grad=True); torch.relu(x).sum().backward();
//   x.grad -> tensor([1., 0., 1.])
#[test]
fn relu_gradient_at_nan_is_the_incoming_gradient() {
    let mut x = f32s(&[f32::NAN, -1.0, 2.0], &[3]);
    x.requires_grad_(true);
    ops::sum(&ops::relu(&x)).backward();
    assert_eq!(x.grad().unwrap().to_vec::<f32>(), [1.0, 0.0, 1.0]);
}

// torch.tensor([True]) - torch.tensor([1.]) -> RuntimeError: Subtraction, the `-` operator,
//   with a bool tensor is not supported.
// torch.argmax(torch.tensor([False, True])) -> RuntimeError: "argmax_cpu" not implemented for
//   'Bool'
#[test]
fn bool_subtraction_and_argmax_of_bool_are_refused() {
    let mask = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let x = f32s(&[1.0, 2.0], &[2]);
    for (a, b) in [(&mask, &x), (&x, &mask), (&mask, &mask)] {
        let error = ops::try_sub(a, b).unwrap_err().to_string();
        assert!(
            error.contains("sub") && error.contains("bool operand"),
            "{error}"
        );
    }
    let error = ops::try_argmax(&mask, 0, false).unwrap_err().to_string();
    assert!(
        error.contains("argmax") && error.contains("bool") && error.contains("to_dtype"),
        "{error}"
    );
    // What the errors suggest works.
    assert_eq!(
        ops::argmax(&ops::to_dtype(&mask, DType::U8), 0, false).to_vec::<i64>(),
        [0]
    );
}

// torch.tensor([[1e30, 1.]]) @ torch.tensor([[1e10], [1.]]) -> tensor([[inf]])
// torch.tensor([[-1e30, 1.]]) @ torch.tensor([[1e10], [1.]]) -> tensor([[-inf]])
// torch.tensor([[3e38, 3e38]]) @ torch.tensor([[1.], [1.]]) -> tensor([[inf]])
// torch.tensor([[1e20, 1e20]]) @ torch.tensor([[4e18], [-1e18]]) -> tensor([[inf]]): the first
//   product overflows f32; the exact sum, 3e38, would not.
#[test]
fn matmul_overflows_to_infinity_on_every_cpu_backend() {
    let cases: [(&[f32], &[f32], f32); 5] = [
        (&[1e30, 1.0], &[1e10, 1.0], f32::INFINITY),
        (&[-1e30, 1.0], &[1e10, 1.0], f32::NEG_INFINITY),
        (&[3e38, 3e38], &[1.0, 1.0], f32::INFINITY),
        (&[1e20, 1e20], &[4e18, -1e18], f32::INFINITY),
        (&[-1e20, 1e20], &[4e18, 1e18], f32::NEG_INFINITY),
    ];
    for (x, y, want) in cases {
        let (x, y) = (f32s(x, &[1, 2]), f32s(y, &[2, 1]));
        let naive = matmul::redispatch(DispatchKeySet::CPU_NAIVE, &x, &y).unwrap();
        assert_eq!(naive.to_vec::<f32>(), [want], "naive");
        assert_eq!(ops::matmul(&x, &y).to_vec::<f32>(), [want], "dispatched");
    }
}

/// Equal values with equal signs (`-0.0` is not `0.0`), NaN matching any NaN (its payload and
/// sign are the hardware's).
fn same_bits(got: &[f32], want: &[f32]) -> bool {
    let same = |g: &f32, w: &f32| (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits();
    got.len() == want.len() && got.iter().zip(want).all(|(g, w)| same(g, w))
}

// x = torch.tensor([7, -7, 7, -7, 0, 1]); y = torch.tensor([2, 2, -2, -2, 3, -3])
// torch.div(x, y, rounding_mode="trunc") -> tensor([ 3, -3, -3,  3,  0,  0])
// torch.div(x, y, rounding_mode="floor") -> tensor([ 3, -4, -4,  3,  0, -1])
// torch.div(torch.tensor([7, 200], dtype=torch.uint8), torch.tensor(2), rounding_mode="floor")
//   -> tensor([  3, 100], dtype=torch.uint8)
// torch.div(torch.tensor([1, 2]), torch.tensor([0, 1]), rounding_mode="trunc")
//   -> ZeroDivisionError
#[test]
fn div_rounded_keeps_integers_integer() {
    let x = Tensor::from_vec(vec![7i64, -7, 7, -7, 0, 1], &[6]).unwrap();
    let y = Tensor::from_vec(vec![2i64, 2, -2, -2, 3, -3], &[6]).unwrap();
    let trunc = ops::div_rounded(&x, &y, Rounding::Trunc);
    assert_eq!(trunc.dtype(), DType::I64);
    assert_eq!(trunc.to_vec::<i64>(), [3, -3, -3, 3, 0, 0]);
    let floor = ops::div_rounded(&x, &y, Rounding::Floor);
    assert_eq!(floor.to_vec::<i64>(), [3, -4, -4, 3, 0, -1]);
    let naive =
        div_rounded::redispatch(DispatchKeySet::CPU_NAIVE, &x, &y, Rounding::Floor).unwrap();
    assert_eq!(naive.to_vec::<i64>(), [3, -4, -4, 3, 0, -1]);

    let bytes = Tensor::from_vec(vec![7u8, 200], &[2]).unwrap();
    let r = ops::div_rounded(&bytes, &zero_dim(2i64), Rounding::Floor);
    assert_eq!((r.dtype(), r.to_vec::<u8>()), (DType::U8, vec![3, 100]));

    let zero = Tensor::from_vec(vec![0i64, 1], &[2]).unwrap();
    let error = ops::try_div_rounded(&x.narrow(0, 0, 2), &zero, Rounding::Trunc)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("div_rounded") && error.contains("i64") && error.contains("[2]"),
        "{error}"
    );
    let flags = Tensor::from_vec(vec![true], &[1]).unwrap();
    let error = ops::try_div_rounded(&flags, &flags, Rounding::Floor)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("div_rounded") && error.contains("bool"),
        "{error}"
    );
}

// inf, nan = float("inf"), float("nan")
// x = torch.tensor([7.5, -7.5, 0., -0., 1., -1., inf, nan, 5., -5., 1., 0.])
// y = torch.tensor([2., 2., -3., 3., 0., 0., 2., 1., inf, inf, -3., 0.])
// torch.div(x, y, rounding_mode="trunc")
//   -> tensor([3., -3., -0., -0., inf, -inf, inf, nan, 0., -0., -0., nan])
// torch.div(x, y, rounding_mode="floor")
//   -> tensor([3., -4., -0., -0., inf, -inf, nan, nan, 0., -1., -1., nan])
// torch.div(torch.tensor([7, -7]), torch.tensor([2.]), rounding_mode="floor")
//   -> tensor([ 3., -4.]) (float32)
// torch.div(torch.tensor([7.5]), torch.tensor(2., dtype=torch.float64), rounding_mode="trunc")
//   -> tensor([3.]) (float32: the 0-d rule)
#[test]
fn div_rounded_of_floats_rounds_as_pytorch() {
    let inf = f32::INFINITY;
    let x = [
        7.5,
        -7.5,
        0.0,
        -0.0,
        1.0,
        -1.0,
        inf,
        f32::NAN,
        5.0,
        -5.0,
        1.0,
        0.0,
    ];
    let y = [2.0, 2.0, -3.0, 3.0, 0.0, 0.0, 2.0, 1.0, inf, inf, -3.0, 0.0];
    let (x, y) = (f32s(&x, &[12]), f32s(&y, &[12]));
    let nan = f32::NAN;
    let want_trunc = [
        3.0, -3.0, -0.0, -0.0, inf, -inf, inf, nan, 0.0, -0.0, -0.0, nan,
    ];
    let want_floor = [
        3.0, -4.0, -0.0, -0.0, inf, -inf, nan, nan, 0.0, -1.0, -1.0, nan,
    ];
    for (mode, want) in [(Rounding::Trunc, want_trunc), (Rounding::Floor, want_floor)] {
        let got = ops::div_rounded(&x, &y, mode);
        assert_eq!(got.dtype(), DType::F32);
        assert!(same_bits(&got.to_vec::<f32>(), &want), "{mode:?}: {got:?}");
        let wide = ops::div_rounded(
            &ops::to_dtype(&x, DType::F64),
            &ops::to_dtype(&y, DType::F64),
            mode,
        );
        let wide: Vec<f32> = wide.to_vec::<f64>().iter().map(|&v| v as f32).collect();
        assert!(same_bits(&wide, &want), "{mode:?} f64: {wide:?}");
    }
    let ints = Tensor::from_vec(vec![7i64, -7], &[2]).unwrap();
    let r = ops::div_rounded(&ints, &f32s(&[2.0], &[1]), Rounding::Floor);
    assert_eq!(
        (r.dtype(), r.to_vec::<f32>()),
        (DType::F32, vec![3.0, -4.0])
    );
    let r = ops::div_rounded(&f32s(&[7.5], &[1]), &zero_dim(2.0f64), Rounding::Trunc);
    assert_eq!((r.dtype(), r.to_vec::<f32>()), (DType::F32, vec![3.0]));
}

// x = torch.tensor([7.5, -7.5], requires_grad=True); y = torch.tensor([2., 2.], requires_grad=True)
// torch.div(x, y, rounding_mode="floor").sum().backward()
// x.grad -> tensor([0., 0.]), y.grad -> tensor([0., 0.])
#[test]
fn div_rounded_has_a_zero_gradient() {
    for mode in [Rounding::Trunc, Rounding::Floor] {
        let (mut x, mut y) = (f32s(&[7.5, -7.5], &[2]), f32s(&[2.0, 2.0], &[2]));
        x.requires_grad_(true);
        y.requires_grad_(true);
        let q = ops::div_rounded(&x, &y, mode);
        assert!(q.requires_grad());
        ops::sum(&ops::add(&q, &x)).backward();
        // x's gradient is add's 1 plus div_rounded's 0; y's is div_rounded's 0 alone.
        assert_eq!(x.grad().unwrap().to_vec::<f32>(), [1.0, 1.0]);
        assert_eq!(y.grad().unwrap().to_vec::<f32>(), [0.0, 0.0]);
    }
}
