//! In-place ops (`copy_`, `fill_`, `zero_`, `add_`, `sub_`, `mul_`, `div_`, `neg_`, `relu_`,
//! `exp_`): values, writes through views seen by the base and by other views, the version
//! counter (one more per write, shared by views, unchanged by a refused call), and each refusal
//! of the "bad input" list as a clear error that wrote nothing.

use switchyard::ops::{
    add_, copy_, exp_, fill_, try_add_, try_copy_, try_div_, try_exp_, try_fill_, try_mul_,
    try_neg_, try_relu_, zero_,
};
use switchyard::{DType, Device, DispatchError, ErrorKind, Tensor};
use switchyard_backends as _; // links the CPU kernels

fn f32s(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec::<f32>(values.to_vec(), shape).unwrap()
}

fn message(error: &DispatchError) -> String {
    error.to_string()
}

/// A refused call: an error mentioning each of `words`, and `x`'s values and version unchanged.
#[track_caller]
fn refused(
    x: &Tensor,
    call: impl FnOnce(&mut Tensor) -> Result<(), DispatchError>,
    words: &[&str],
) {
    let (before, version) = (x.try_to_f64_vec().unwrap(), x.version());
    let mut handle = x.clone();
    let error = call(&mut handle).expect_err("the call must be refused");
    let text = message(&error);
    for word in words {
        assert!(text.contains(word), "{word:?} missing from: {text}");
    }
    assert!(handle.same(x), "a refused call replaced the handle");
    assert_eq!(
        x.try_to_f64_vec().unwrap(),
        before,
        "a refused call wrote: {text}"
    );
    assert_eq!(
        x.version(),
        version,
        "a refused call counted a version: {text}"
    );
}

#[test]
fn add_writes_the_destination_and_counts_one_version() {
    let mut x = f32s(&[1.0, 2.0, 3.0], &[3]);
    let y = f32s(&[10.0, 20.0, 30.0], &[3]);
    assert_eq!(x.version(), 0);
    add_(&mut x, &y);
    assert_eq!(x.to_vec::<f32>(), [11.0, 22.0, 33.0]);
    assert_eq!(x.version(), 1);
    x.mul_(&y);
    x.sub_(&f32s(&[1.0], &[1]));
    x.div_(&f32s(&[2.0], &[]));
    assert_eq!(x.to_vec::<f32>(), [54.5, 219.5, 494.5]);
    assert_eq!(x.version(), 4);
    // `y` was only read.
    assert_eq!(
        (y.to_vec::<f32>(), y.version()),
        (vec![10.0, 20.0, 30.0], 0)
    );
}

#[test]
fn writes_through_a_view_are_seen_by_the_base_and_by_other_views() {
    let base = Tensor::from_fn::<f32>(&[2, 3], |i| i as f32);
    let mut column = base.select(1, 1); // [1, 4]
    let row = base.select(0, 1); // [3, 4, 5]
    let transposed = base.t();
    column.add_(&f32s(&[100.0], &[1]));
    assert_eq!(base.to_vec::<f32>(), [0.0, 101.0, 2.0, 3.0, 104.0, 5.0]);
    assert_eq!(row.to_vec::<f32>(), [3.0, 104.0, 5.0]);
    assert_eq!(
        transposed.to_vec::<f32>(),
        [0.0, 3.0, 101.0, 104.0, 2.0, 5.0]
    );
    // One version counter, shared by every view of the storage.
    assert_eq!((base.version(), row.version(), column.version()), (1, 1, 1));

    // A strided, stepped view: every other element of the flat storage.
    let mut stepped = base.view(&[6]).slice(0, 0, 6, 2);
    stepped.fill_(-1.0);
    assert_eq!(base.to_vec::<f32>(), [-1.0, 101.0, -1.0, 3.0, -1.0, 5.0]);
    zero_(&mut base.narrow(1, 2, 1));
    assert_eq!(base.to_vec::<f32>(), [-1.0, 101.0, 0.0, 3.0, -1.0, 0.0]);
    assert_eq!(base.version(), 3);
}

#[test]
fn the_other_operand_broadcasts_to_the_destination() {
    let mut x = Tensor::from_fn::<f32>(&[2, 3], |i| i as f32);
    x.add_(&f32s(&[10.0, 20.0, 30.0], &[3]));
    x.mul_(&f32s(&[1.0, -1.0], &[2, 1]));
    assert_eq!(x.to_vec::<f32>(), [10.0, 21.0, 32.0, -13.0, -24.0, -35.0]);
}

#[test]
fn a_broadcast_that_would_grow_the_destination_is_refused() {
    let x = f32s(&[1.0], &[1]);
    let y = f32s(&[1.0, 2.0, 3.0], &[3]);
    refused(
        &x,
        |x| try_add_(x, &y),
        &["add_", "[1]", "[3]", "never resizes"],
    );
    refused(&x, |x| try_copy_(x, &y), &["copy_", "[1]", "[3]"]);
    let z = f32s(&[1.0, 2.0], &[2]);
    refused(&y, |y| try_mul_(y, &z), &["mul_", "[3]", "[2]"]);
}

#[test]
fn a_result_whose_dtype_does_not_fit_the_destination_is_refused() {
    let ints = Tensor::from_vec::<i32>(vec![1, 2], &[2]).unwrap();
    let doubles = Tensor::from_vec::<f64>(vec![0.5, 0.5], &[2]).unwrap();
    refused(&ints, |x| try_add_(x, &doubles), &["add_", "f64", "i32"]);
    // True division of integers gives f32: no `div_` into an integer tensor.
    refused(
        &ints,
        |x| try_div_(x, &ints.clone()),
        &["div_", "f32", "i32"],
    );
    refused(&ints, try_exp_, &["exp_", "f32", "i32"]);
    let flags = Tensor::from_vec::<bool>(vec![true, false], &[2]).unwrap();
    refused(&flags, |x| try_add_(x, &ints), &["add_", "i32", "bool"]);
    refused(&flags, try_neg_, &["neg", "bool"]);

    // Within a kind, the result is stored as `to_dtype` would: an f64 into f32 rounds.
    let mut floats = f32s(&[1.0, 2.0], &[2]);
    floats.add_(&Tensor::from_vec::<f64>(vec![0.1, 1e-9], &[2]).unwrap());
    assert_eq!(floats.to_vec::<f32>(), [1.1, 2.0]);
    // bool into bool: `add` is logical or.
    let mut flags = flags;
    flags.add_(&Tensor::from_vec::<bool>(vec![false, true], &[2]).unwrap());
    assert_eq!(flags.to_vec::<bool>(), [true, true]);
}

#[test]
fn a_write_into_an_expanded_view_is_refused() {
    let x = f32s(&[1.0, 2.0], &[2, 1]).expand(&[2, 3]);
    let y = f32s(&[1.0; 6], &[2, 3]);
    refused(
        &x,
        |x| try_add_(x, &y),
        &["add_", "overlap", "[2, 3]", "[1, 0]"],
    );
    refused(&x, |x| try_fill_(x, 0.0), &["fill_", "overlap"]);
    refused(&x, |x| try_copy_(x, &y), &["copy_", "overlap"]);
}

#[test]
fn copy_converts_dtypes_and_reads_any_layout() {
    let mut ints = Tensor::from_vec::<i64>(vec![0; 6], &[2, 3]).unwrap();
    let source = Tensor::from_fn::<f64>(&[3, 2], |i| i as f64 + 0.75).t();
    copy_(&mut ints, &source);
    assert_eq!(ints.to_vec::<i64>(), [0, 2, 4, 1, 3, 5]);
    let mut halves =
        Tensor::from_vec::<switchyard::half::f16>(vec![Default::default(); 2], &[2]).unwrap();
    halves.copy_(&Tensor::from_vec::<u8>(vec![7, 255], &[2]).unwrap());
    assert_eq!(halves.try_to_f64_vec().unwrap(), [7.0, 255.0]);
}

#[test]
fn copy_from_an_overlapping_view_of_the_same_storage_reads_before_it_writes() {
    let base = Tensor::from_fn::<i32>(&[6], |i| i as i32);
    // dst = base[1..6], src = base[0..5]: a forward loop reading as it writes would smear base[0].
    let mut dst = base.narrow(0, 1, 5);
    dst.copy_(&base.narrow(0, 0, 5));
    assert_eq!(base.to_vec::<i32>(), [0, 0, 1, 2, 3, 4]);
    // A tensor into itself, and `x += x`.
    let mut x = f32s(&[1.0, 2.0], &[2]);
    let same = x.clone();
    x.copy_(&same);
    x.add_(&same);
    assert_eq!(x.to_vec::<f32>(), [2.0, 4.0]);
}

#[test]
fn fill_and_the_unary_forms() {
    let mut x = f32s(&[-1.0, 0.5, -0.0, 2.0], &[4]);
    x.relu_();
    assert_eq!(x.to_vec::<f32>(), [0.0, 0.5, 0.0, 2.0]);
    x.neg_();
    exp_(&mut x);
    assert_eq!(
        x.to_vec::<f32>(),
        [1.0, (-0.5f32).exp(), 1.0, (-2.0f32).exp()]
    );
    let mut ints = Tensor::from_vec::<i32>(vec![1, 2, 3], &[3]).unwrap();
    fill_(&mut ints, -2.9);
    assert_eq!(ints.to_vec::<i32>(), [-2, -2, -2]);
    let mut flags = Tensor::from_vec::<bool>(vec![false; 2], &[2]).unwrap();
    flags.fill_(0.5);
    assert_eq!(flags.to_vec::<bool>(), [true, true]);
    // An empty destination: nothing to write, and no error.
    let mut empty = Tensor::from_vec::<f32>(vec![], &[0, 3]).unwrap();
    empty.fill_(1.0);
    empty.add_(&f32s(&[1.0, 2.0, 3.0], &[3]));
    assert_eq!(empty.shape(), [0, 3]);
}

#[test]
fn a_write_while_a_slice_of_the_storage_is_alive_is_refused() {
    let x = f32s(&[1.0, 2.0], &[2]);
    let view = x.clone();
    let slice = view.as_slice::<f32>().unwrap();
    // The write itself is `copy_`'s (fill_ is full + copy_); the error names the op called, and
    // says the write failed.
    refused(&x, |x| try_fill_(x, 0.0), &["fill_", "copy_", "borrowed"]);
    refused(&x, |x| try_add_(x, &view), &["add_", "copy_", "borrowed"]);
    let error = try_fill_(&mut x.clone(), 0.0).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Kernel { op: "fill_", .. }),
        "{error:?}"
    );
    let error = try_relu_(&mut x.clone()).unwrap_err();
    assert_eq!(error.op(), "relu_", "{error}");
    // `copy_` called directly still names itself.
    assert_eq!(try_copy_(&mut x.clone(), &view).unwrap_err().op(), "copy_");
    assert_eq!(*slice, [1.0, 2.0]);
}

#[test]
fn errors_are_of_the_right_kind() {
    let mut x = f32s(&[1.0], &[1]);
    let error = try_add_(&mut x, &f32s(&[1.0, 2.0], &[2])).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Shape { op: "add_", .. }),
        "{error:?}"
    );
    assert_eq!(error.op(), "add_");
    let mut ints = Tensor::from_vec::<i32>(vec![1], &[1]).unwrap();
    let error = try_add_(&mut ints, &x).unwrap_err();
    assert_eq!(error.op(), "add_");
    assert_eq!(x.device(), Device::Cpu);
    assert_eq!(ints.dtype(), DType::I32);
}

#[test]
#[should_panic(expected = "add_")]
fn the_plain_form_panics_with_the_error() {
    let mut x = f32s(&[1.0], &[1]);
    add_(&mut x, &f32s(&[1.0, 2.0], &[2]));
}
