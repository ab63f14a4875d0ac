//! Dimensions and shapes as PyTorch takes them: each test holds PyTorch's answer (computed with
//! PyTorch, kept here as data; the tests do not need PyTorch to run) and checks ours against it.

use switchyard::ops;
use switchyard::{ErrorKind, Tensor};
use switchyard_backends as _; // links the CPU kernels

/// `[0, 1, …, n − 1]` as `f32` of `shape`.
fn iota(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<_>>(), shape).unwrap()
}

/// The error is a shape error of `op` whose message contains every piece of `names`.
#[track_caller]
fn shape_error(result: switchyard::Result<Tensor>, op: &str, names: &[&str]) {
    let error = result.expect_err("the call must be refused");
    assert!(
        matches!(error.kind(), ErrorKind::Shape { .. }),
        "expected a shape error, got {error}"
    );
    assert_eq!(error.op(), op, "{error}");
    let text = error.to_string();
    for name in names {
        assert!(text.contains(name), "`{name}` missing from: {text}");
    }
}

// ---- narrow ----

#[test]
fn narrow_past_the_end_is_an_error() {
    // PyTorch: torch.arange(20.).view(5, 4).narrow(0, 4, 2)
    //   RuntimeError: start (4) + length (2) exceeds dimension size (5).
    let x = iota(&[5, 4]);
    shape_error(
        ops::try_narrow(&x, 0, 4, 2),
        "narrow",
        &["[5, 4]", "4", "2"],
    );
    // The last row, exactly: torch.arange(20.).view(5, 4).narrow(0, 4, 1) == [[16, 17, 18, 19]]
    let last = ops::narrow(&x, 0, 4, 1);
    assert_eq!(last.shape(), [1, 4]);
    assert_eq!(last.to_vec::<f32>(), [16.0, 17.0, 18.0, 19.0]);
    // Empty at the end is allowed: narrow(0, 5, 0) has shape [0, 4].
    assert_eq!(ops::narrow(&x, 0, 5, 0).shape(), [0, 4]);
}

// ---- negative dims and positions ----

#[test]
fn reductions_and_softmax_take_negative_dims() {
    let x = iota(&[2, 3]);
    // torch.arange(6.).view(2, 3).sum(-1) == [3, 12]; .sum((-1, -2)) == 15; .mean(-2) == [1.5, 2.5, 3.5]
    assert_eq!(ops::sum_dim(&x, &[-1], false).to_vec::<f32>(), [3.0, 12.0]);
    assert_eq!(ops::sum_dim(&x, &[-1, -2], false).to_vec::<f32>(), [15.0]);
    assert_eq!(
        ops::mean_dim(&x, &[-2], true).shape(),
        [1, 3],
        "keepdim keeps the wrapped dim"
    );
    assert_eq!(
        ops::mean_dim(&x, &[-2], false).to_vec::<f32>(),
        [1.5, 2.5, 3.5]
    );
    // .max(-1).values == [2, 5]; .argmax(-2) == [1, 1, 1]
    assert_eq!(ops::max_dim(&x, -1, false).to_vec::<f32>(), [2.0, 5.0]);
    assert_eq!(ops::argmax(&x, -2, false).to_vec::<i64>(), [1, 1, 1]);
    // softmax(x, -1) is softmax(x, 1), bit for bit.
    assert_eq!(
        ops::softmax(&x, -1).to_vec::<f32>(),
        ops::softmax(&x, 1).to_vec::<f32>()
    );
    assert_eq!(
        ops::log_softmax(&x, -2).to_vec::<f32>(),
        ops::log_softmax(&x, 0).to_vec::<f32>()
    );
    // PyTorch: IndexError: Dimension out of range (expected to be in range of [-2, 1], but got -3)
    shape_error(
        ops::try_sum_dim(&x, &[-3], false),
        "sum_dim",
        &["-3", "[2, 3]", "-2..=1"],
    );
    shape_error(ops::try_softmax(&x, 2), "softmax", &["dim 2", "[2, 3]"]);
    // The same dim twice, once negative: PyTorch: "dim 1 appears multiple times in the list of dims"
    shape_error(ops::try_sum_dim(&x, &[1, -1], false), "sum_dim", &["twice"]);
}

#[test]
fn views_take_negative_dims_and_positions() {
    let x = iota(&[5, 4]);
    // torch.arange(20.).view(5, 4).narrow(0, -2, 2) == rows 3 and 4
    let rows = ops::narrow(&x, 0, -2, 2);
    assert_eq!(
        rows.to_vec::<f32>(),
        (12..20).map(|v| v as f32).collect::<Vec<_>>()
    );
    // .select(0, -1) == [16, 17, 18, 19]; .select(-1, -1) == [3, 7, 11, 15, 19]
    assert_eq!(
        ops::select(&x, 0, -1).to_vec::<f32>(),
        [16.0, 17.0, 18.0, 19.0]
    );
    assert_eq!(
        ops::select(&x, -1, -1).to_vec::<f32>(),
        [3.0, 7.0, 11.0, 15.0, 19.0]
    );
    // .select(0, -6): IndexError: index -6 is out of bounds for dimension 0 with size 5
    shape_error(ops::try_select(&x, 0, -6), "select", &["-6", "[5, 4]"]);
    // .unsqueeze(-1).shape == [5, 4, 1]; .unsqueeze(-3).shape == [1, 5, 4]
    assert_eq!(ops::unsqueeze(&x, -1).shape(), [5, 4, 1]);
    assert_eq!(ops::unsqueeze(&x, -3).shape(), [1, 5, 4]);
    shape_error(
        ops::try_unsqueeze(&x, -4),
        "unsqueeze",
        &["-4", "[5, 4]", "-3..=2"],
    );
    // .transpose(-2, -1) of a [2, 3, 4]: shape [2, 4, 3], element [1, 3, 2] is x[1, 2, 3] = 23
    let y = iota(&[2, 3, 4]);
    let t = ops::transpose(&y, -2, -1);
    assert_eq!(t.shape(), [2, 4, 3]);
    assert_eq!(ops::contiguous(&t).to_vec::<f32>()[12 + 3 * 3 + 2], 23.0);
    // .permute(-1, 0, -2).shape == [4, 2, 3]
    assert_eq!(ops::permute(&y, &[-1, 0, -2]).shape(), [4, 2, 3]);
}

#[test]
fn slice_follows_python_slicing() {
    let x = iota(&[10]);
    // torch.arange(10.)[-3:] == [7, 8, 9]; [2:-2:3] == [2, 5]; [7:2] is empty; [-20:2] == [0, 1]
    assert_eq!(
        ops::slice(&x, 0, -3, isize::MAX, 1).to_vec::<f32>(),
        [7.0, 8.0, 9.0]
    );
    assert_eq!(ops::slice(&x, -1, 2, -2, 3).to_vec::<f32>(), [2.0, 5.0]);
    assert_eq!(ops::slice(&x, 0, 7, 2, 1).shape(), [0]);
    assert_eq!(ops::slice(&x, 0, -20, 2, 1).to_vec::<f32>(), [0.0, 1.0]);
    // PyTorch: "slice step must be positive"
    shape_error(ops::try_slice(&x, 0, 0, 5, 0), "slice", &["step"]);
}

#[test]
fn expand_keeps_extents_given_as_minus_one() {
    let x = iota(&[3, 1]);
    // torch.arange(3.).view(3, 1).expand(2, -1, 4).shape == [2, 3, 4]
    let e = ops::expand(&x, &[2, -1, 4]);
    assert_eq!(e.shape(), [2, 3, 4]);
    assert_eq!(ops::contiguous(&e).to_vec::<f32>()[4..8], [1.0; 4]);
    // .expand(-1, 3, 4): RuntimeError: The expanded size of the tensor (-1) isn't allowed in a
    // leading, non-existing dimension 0
    shape_error(
        ops::try_expand(&x, &[-1, 3, 4]),
        "expand",
        &["-1", "[3, 1]"],
    );
    shape_error(ops::try_expand(&x, &[3, -2]), "expand", &["[3, 1]"]);
}

#[test]
fn squeeze_several_dims() {
    let x = iota(&[1, 3, 1, 1]);
    // torch.zeros(1, 3, 1, 1).squeeze((0, -1)).shape == [3, 1]; .squeeze((1,)) keeps the 3
    assert_eq!(ops::squeeze_dims(&x, &[0, -1]).shape(), [3, 1]);
    assert_eq!(ops::squeeze_dims(&x, &[1]).shape(), [1, 3, 1, 1]);
    assert_eq!(ops::squeeze(&x, Some(-2)).shape(), [1, 3, 1]);
    shape_error(ops::try_squeeze_dims(&x, &[4]), "squeeze_dims", &["dim 4"]);
}

// ---- cat and stack ----

#[test]
fn cat_joins_along_any_dim_and_promotes() {
    let a = iota(&[2, 3]);
    let b = Tensor::from_vec(vec![10.0f64, 11.0], &[2, 1]).unwrap();
    // torch.cat([torch.arange(6.).view(2, 3), torch.tensor([[10.], [11.]], dtype=torch.float64)], -1)
    //   == [[0, 1, 2, 10], [3, 4, 5, 11]], dtype float64
    let joined = ops::cat(&[a.clone(), b.clone()], -1);
    assert_eq!(joined.dtype(), switchyard::DType::F64);
    assert_eq!(joined.shape(), [2, 4]);
    assert_eq!(
        joined.to_vec::<f64>(),
        [0.0, 1.0, 2.0, 10.0, 3.0, 4.0, 5.0, 11.0]
    );
    // torch.cat([a, a[:0]], 0) == a; a transposed view joins like its values
    let empty = ops::narrow(&a, 0, 0, 0);
    assert_eq!(
        ops::cat(&[a.clone(), empty], 0).to_vec::<f32>(),
        a.to_vec::<f32>()
    );
    let t = ops::transpose(&a, 0, 1);
    assert_eq!(
        ops::cat(&[t.clone(), t], 0).to_vec::<f32>(),
        [0.0, 3.0, 1.0, 4.0, 2.0, 5.0, 0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    );
    // RuntimeError: Sizes of tensors must match except in dimension 0. Expected size 3 but got
    // size 1 for tensor number 1 in the list.
    shape_error(
        ops::try_cat(&[a.clone(), b], 0),
        "cat",
        &["[2, 3]", "[2, 1]"],
    );
    // RuntimeError: zero-dimensional tensor (at position 0) cannot be concatenated
    let s = Tensor::scalar(1.0);
    shape_error(ops::try_cat(&[s.clone(), s], 0), "cat", &["0-dimensional"]);
    // RuntimeError: torch.cat(): expected a non-empty list of Tensors
    shape_error(ops::try_cat(&[], 0), "cat", &["no tensors"]);
    shape_error(ops::try_cat(&[a], 2), "cat", &["dim 2", "[2, 3]"]);
}

#[test]
fn stack_adds_a_dim() {
    let a = Tensor::vector(&[1.0, 2.0]);
    let b = Tensor::vector(&[3.0, 4.0]);
    // torch.stack([a, b]) == [[1, 2], [3, 4]]; torch.stack([a, b], -1) == [[1, 3], [2, 4]]
    let rows = ops::stack(&[a.clone(), b.clone()], 0);
    assert_eq!(rows.shape(), [2, 2]);
    assert_eq!(rows.to_vec::<f32>(), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        ops::stack(&[a.clone(), b.clone()], -1).to_vec::<f32>(),
        [1.0, 3.0, 2.0, 4.0]
    );
    // torch.stack of 0-d tensors: shape [2]
    let s = ops::stack(&[Tensor::scalar(5.0), Tensor::scalar(6.0)], 0);
    assert_eq!(s.shape(), [2]);
    // RuntimeError: stack expects each tensor to be equal size
    let c = Tensor::vector(&[1.0, 2.0, 3.0]);
    shape_error(ops::try_stack(&[a.clone(), c], 0), "stack", &["[2]", "[3]"]);
    shape_error(ops::try_stack(&[a, b], 2), "stack", &["dim 2", "-2..=1"]);
}

#[test]
fn cat_hands_each_input_its_slice_of_the_gradient() {
    let (mut a, mut b) = (iota(&[2, 2]), iota(&[2, 1]));
    a.requires_grad_(true);
    b.requires_grad_(true);
    let weights = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    // (torch.cat([a, b], 1) * w).sum().backward(): a.grad == [[1, 2], [4, 5]], b.grad == [[3], [6]]
    let joined = ops::cat(&[a.clone(), b.clone()], 1);
    ops::sum(&ops::mul(&joined, &weights)).backward();
    assert_eq!(a.grad().unwrap().to_vec::<f32>(), [1.0, 2.0, 4.0, 5.0]);
    assert_eq!(b.grad().unwrap().to_vec::<f32>(), [3.0, 6.0]);
}

// ---- reductions with keyword arguments ----

#[test]
fn reductions_over_every_dim_keep_dims_and_convert() {
    use switchyard::DType;
    use switchyard::ops::Reduce;
    let x = iota(&[2, 3]);
    // torch.arange(6.).view(2, 3).sum(dim=None, keepdim=True) == [[15]]
    let total = ops::sum_with(&x, &Reduce::all().keepdim(true));
    assert_eq!(total.shape(), [1, 1]);
    assert_eq!(total.to_vec::<f32>(), [15.0]);
    // .sum() is 0-d; .mean(-1, dtype=torch.float64) == [1., 4.] in float64
    assert_eq!(ops::sum_with(&x, &Reduce::all()).shape(), [] as [usize; 0]);
    let means = ops::mean_with(&x, &Reduce::along(&[-1]).dtype(DType::F64));
    assert_eq!(means.dtype(), DType::F64);
    assert_eq!(means.to_vec::<f64>(), [1.0, 4.0]);
    // torch.tensor([1, 2, 3], dtype=torch.int32).mean(dtype=torch.float32) == 2.
    let ints = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    let mean = ops::mean_with(&ints, &Reduce::all().dtype(DType::F32));
    assert_eq!(
        (mean.dtype(), mean.to_vec::<f32>()),
        (DType::F32, vec![2.0])
    );
    // torch.tensor([200, 100], dtype=torch.uint8).sum(dtype=torch.uint8) == 44 (wraps)
    let bytes = Tensor::from_vec(vec![200u8, 100], &[2]).unwrap();
    let sum = ops::sum_with(&bytes, &Reduce::all().dtype(DType::U8));
    assert_eq!(
        sum.dtype(),
        DType::I64,
        "integer sums are i64 here: a departure"
    );
    // torch.softmax(torch.tensor([0., 1.], dtype=torch.float16), -1, dtype=torch.float32)
    let halves = ops::to_dtype(&Tensor::vector(&[0.0, 1.0]), DType::F16);
    let p = ops::softmax_in(&halves, -1, DType::F32);
    assert_eq!(p.dtype(), DType::F32);
    let e = 1f32.exp();
    assert_eq!(
        p.to_vec::<f32>(),
        ops::softmax(&Tensor::vector(&[0.0, 1.0]), -1).to_vec::<f32>()
    );
    assert!((p.to_vec::<f32>()[1] - e / (1.0 + e)).abs() < 1e-6);
    let lp = ops::log_softmax_in(&halves, 0, DType::F64);
    assert_eq!(lp.dtype(), DType::F64);
}

#[test]
fn argmax_without_a_dim_and_max_with_indices() {
    let x = Tensor::from_vec(vec![1.0f32, 9.0, 3.0, 9.0, 0.0, 2.0], &[2, 3]).unwrap();
    // torch.argmax(x) == 1 (the first of the ties, row-major); keepdim=True: shape [1, 1]
    let at = ops::argmax_all(&x, false);
    assert_eq!((at.shape(), at.to_vec::<i64>()), (&[][..], vec![1]));
    assert_eq!(ops::argmax_all(&x, true).shape(), [1, 1]);
    // torch.max(x, -1) == (values=[9, 9], indices=[1, 0])
    let (values, indices) = ops::max_dim_with_indices(&x, -1, false);
    assert_eq!(values.to_vec::<f32>(), [9.0, 9.0]);
    assert_eq!(indices.to_vec::<i64>(), [1, 0]);
    // torch.argmax(torch.zeros(0)): RuntimeError (the maximum of nothing)
    assert!(ops::try_argmax_all(&iota(&[0]), false).is_err());
}

#[test]
fn arange_with_a_step() {
    use switchyard::{DType, Device};
    // torch.arange(0, 10, 3) == [0, 3, 6, 9]; torch.arange(1, 2, 0.25) == [1, 1.25, 1.5, 1.75]
    let r = ops::arange_step(0.0, 10.0, 3.0, DType::I64, Device::Cpu);
    assert_eq!(r.to_vec::<i64>(), [0, 3, 6, 9]);
    let r = ops::arange_step(1.0, 2.0, 0.25, DType::F32, Device::Cpu);
    assert_eq!(r.to_vec::<f32>(), [1.0, 1.25, 1.5, 1.75]);
    // torch.arange(0, 1, 0.1).shape == [10]; element 3 is 0.30000000000000004 in float64
    let r = ops::arange_step(0.0, 1.0, 0.1, DType::F64, Device::Cpu);
    assert_eq!(r.shape(), [10]);
    assert_eq!(r.to_vec::<f64>()[3], 0.30000000000000004);
    // torch.arange(5, 0, -2) == [5, 3, 1]
    let r = ops::arange_step(5.0, 0.0, -2.0, DType::I32, Device::Cpu);
    assert_eq!(r.to_vec::<i32>(), [5, 3, 1]);
    // RuntimeError: step must be nonzero; upper bound and larger bound inconsistent with step sign
    for (start, end, step) in [(0.0, 1.0, 0.0), (0.0, 1.0, -1.0), (0.0, f64::NAN, 1.0)] {
        let e = ops::try_arange_step(start, end, step, DType::F32, Device::Cpu).unwrap_err();
        assert!(e.to_string().contains("arange_step"), "{e}");
    }
    // A u8 range past 255 is refused, not saturated.
    assert!(ops::try_arange_step(250.0, 260.0, 1.0, DType::U8, Device::Cpu).is_err());
}
