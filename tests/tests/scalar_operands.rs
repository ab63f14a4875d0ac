//! Rust numbers as operands (`&x + 1.5`, `ops::add_scalar(&x, 2)`, `ops::where_scalar(&c, &x,
//! 0.0)`), against PyTorch's answers held as data (each computed with PyTorch 2.x, written above
//! its test).

use switchyard::ops;
use switchyard::{DType, Tensor};
use switchyard_backends as _; // links the CPU kernels

fn f32s(values: &[f32]) -> Tensor {
    Tensor::from_vec(values.to_vec(), &[values.len()]).unwrap()
}

// torch.tensor([1., 2.]) + 1.5 -> tensor([2.5000, 3.5000])
// 1.0 - torch.tensor([0.25, 2.]) -> tensor([ 0.7500, -1.0000])
// 2 / torch.tensor([4., 8.]) -> tensor([0.5000, 0.2500])
// torch.tensor([1., 2.]) * 2 -> tensor([2., 4.])
#[test]
fn numbers_on_either_side_of_an_operator() {
    let x = f32s(&[1.0, 2.0]);
    assert_eq!((&x + 1.5).to_vec::<f32>(), [2.5, 3.5]);
    assert_eq!((x.clone() * 2).to_vec::<f32>(), [2.0, 4.0]);
    assert_eq!((1.0 - f32s(&[0.25, 2.0])).to_vec::<f32>(), [0.75, -1.0]);
    assert_eq!((2 / &f32s(&[4.0, 8.0])).to_vec::<f32>(), [0.5, 0.25]);
    assert_eq!(ops::add_scalar(&x, 2.0).to_vec::<f32>(), [3.0, 4.0]);
    assert_eq!(ops::sub_scalar(&x, 1).to_vec::<f32>(), [0.0, 1.0]);
    assert_eq!(ops::div_scalar(&x, 4).to_vec::<f32>(), [0.25, 0.5]);
}

// torch.tensor([1, 2], dtype=torch.int32) * 2 -> tensor([2, 4], dtype=torch.int32)
// torch.tensor([1, 2], dtype=torch.int32) + 1.5 -> tensor([2.5000, 3.5000]) (float32)
// torch.tensor([250], dtype=torch.uint8) + 10 -> tensor([4], dtype=torch.uint8)
// torch.tensor([True, False]) + 2 -> tensor([3, 2]) (int64)
// torch.tensor([1., 2.], dtype=torch.float64) + 0.1 -> tensor([1.1000, 2.1000],
//   dtype=torch.float64), 0.1 exact in f64
// (torch.tensor([1., 2.], dtype=torch.float16) + 0.5).dtype -> torch.float16
#[test]
fn a_number_never_raises_a_tensors_dtype_within_its_category() {
    let ints = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    let doubled = &ints * 2;
    assert_eq!(doubled.dtype(), DType::I32);
    assert_eq!(doubled.to_vec::<i32>(), [2, 4]);
    let halves = &ints + 1.5;
    assert_eq!(halves.dtype(), DType::F32);
    assert_eq!(halves.to_vec::<f32>(), [2.5, 3.5]);
    let bytes = Tensor::from_vec(vec![250u8], &[1]).unwrap();
    assert_eq!((&bytes + 10).to_vec::<u8>(), [4]);
    let mask = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let counted = &mask + 2;
    assert_eq!(counted.dtype(), DType::I64);
    assert_eq!(counted.to_vec::<i64>(), [3, 2]);
    let doubles = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    assert_eq!((&doubles + 0.1).to_vec::<f64>(), [1.0 + 0.1, 2.0 + 0.1]);
    let halfs = ops::to_dtype(&f32s(&[1.0, 2.0]), DType::F16);
    let sum = &halfs + 0.5;
    assert_eq!(sum.dtype(), DType::F16);
    assert_eq!(ops::to_dtype(&sum, DType::F32).to_vec::<f32>(), [1.5, 2.5]);
}

// torch.eq(torch.tensor([0.1, 0.2]), 0.1) -> tensor([ True, False])
// torch.gt(torch.tensor([1, 5]), 2.5) -> tensor([False,  True])
#[test]
fn comparisons_with_a_number() {
    assert_eq!(
        ops::eq_scalar(&f32s(&[0.1, 0.2]), 0.1).to_vec::<bool>(),
        [true, false]
    );
    let ints = Tensor::from_vec(vec![1i64, 5], &[2]).unwrap();
    assert_eq!(ops::gt_scalar(&ints, 2.5).to_vec::<bool>(), [false, true]);
    assert_eq!(ops::le_scalar(&ints, 1).to_vec::<bool>(), [true, false]);
}

// c = torch.tensor([True, False])
// torch.where(c, torch.tensor([1., 2.]), 0.0) -> tensor([1., 0.])
// torch.where(c, torch.tensor([1, 2]), 0.5) -> tensor([1.0000, 0.5000]) (float32)
// torch.where(c, 1.0, 0.0) -> tensor([1., 0.]) (float32)
// torch.where(c, torch.tensor([1, 2], dtype=torch.int32), 7) -> tensor([1, 7], dtype=int32)
#[test]
fn where_with_numbers() {
    let c = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let x = f32s(&[1.0, 2.0]);
    let r = ops::where_scalar(&c, &x, 0.0);
    assert_eq!((r.dtype(), r.to_vec::<f32>()), (DType::F32, vec![1.0, 0.0]));
    let longs = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
    let r = ops::where_scalar(&c, &longs, 0.5);
    assert_eq!((r.dtype(), r.to_vec::<f32>()), (DType::F32, vec![1.0, 0.5]));
    let r = ops::where_scalar(&c, 1.0, 0.0);
    assert_eq!((r.dtype(), r.to_vec::<f32>()), (DType::F32, vec![1.0, 0.0]));
    let ints = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    let r = ops::where_scalar(&c, ints, 7i64);
    assert_eq!((r.dtype(), r.to_vec::<i32>()), (DType::I32, vec![1, 7]));
}

// x = torch.tensor([1., 2.], requires_grad=True); (x * 3 + 1).sum().backward(); x.grad
//   -> tensor([3., 3.])
// x.grad = None; (1 / x).sum().backward(); x.grad -> tensor([-1.0000, -0.2500])
#[test]
fn numbers_are_constants_to_autograd() {
    let mut x = f32s(&[1.0, 2.0]);
    x.requires_grad_(true);
    ops::sum(&(&x * 3 + 1)).backward();
    assert_eq!(x.grad().unwrap().to_vec::<f32>(), [3.0, 3.0]);
    let mut x = f32s(&[1.0, 2.0]);
    x.requires_grad_(true);
    ops::sum(&(1 / &x)).backward();
    assert_eq!(x.grad().unwrap().to_vec::<f32>(), [-1.0, -0.25]);
}

// torch.tensor([1.]) - True -> RuntimeError (subtraction with a bool)
#[test]
fn number_errors_name_the_op() {
    let error = ops::try_sub_scalar(&f32s(&[1.0]), true)
        .unwrap_err()
        .to_string();
    assert!(error.contains("sub") && error.contains("bool"), "{error}");
}

// torch.add(torch.tensor([1., 2.]), torch.tensor([10., 20.]), alpha=0.5) -> tensor([ 6., 12.])
// torch.sub(torch.tensor([1, 2]), torch.tensor([1, 1]), alpha=3) -> tensor([-2, -1])
// torch.add(torch.tensor([1, 2], dtype=torch.int32), torch.tensor([0.5, 1.]), alpha=2)
//   -> tensor([2., 4.])
// torch.add(torch.tensor([1, 2]), torch.tensor([1, 1]), alpha=0.5) -> RuntimeError: For
//   integral input tensors, argument alpha must not be a floating point number.
#[test]
fn add_and_sub_with_alpha() {
    let r = ops::add_alpha(&f32s(&[1.0, 2.0]), &f32s(&[10.0, 20.0]), 0.5);
    assert_eq!(r.to_vec::<f32>(), [6.0, 12.0]);
    let ints = |v: Vec<i64>| Tensor::from_vec(v, &[2]).unwrap();
    let r = ops::sub_alpha(&ints(vec![1, 2]), &ints(vec![1, 1]), 3);
    assert_eq!((r.dtype(), r.to_vec::<i64>()), (DType::I64, vec![-2, -1]));
    let i32s = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    let r = ops::add_alpha(&i32s, &f32s(&[0.5, 1.0]), 2);
    assert_eq!((r.dtype(), r.to_vec::<f32>()), (DType::F32, vec![2.0, 4.0]));
    let error = ops::try_add_alpha(&ints(vec![1, 2]), &ints(vec![1, 1]), 0.5)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("add") && error.contains("alpha") && error.contains("i64"),
        "{error}"
    );
    // x = torch.tensor([1., 2.], requires_grad=True); y = ...; torch.add(x, y,
    //   alpha=3).sum().backward(); y.grad -> tensor([3., 3.]), x.grad -> tensor([1., 1.])
    let (mut x, mut y) = (f32s(&[1.0, 2.0]), f32s(&[3.0, 4.0]));
    x.requires_grad_(true);
    y.requires_grad_(true);
    ops::sum(&ops::add_alpha(&x, &y, 3)).backward();
    assert_eq!(x.grad().unwrap().to_vec::<f32>(), [1.0, 1.0]);
    assert_eq!(y.grad().unwrap().to_vec::<f32>(), [3.0, 3.0]);
}
