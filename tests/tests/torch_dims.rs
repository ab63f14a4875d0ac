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
    shape_error(ops::try_narrow(&x, 0, 4, 2), "narrow", &["[5, 4]", "4", "2"]);
    // The last row, exactly: torch.arange(20.).view(5, 4).narrow(0, 4, 1) == [[16, 17, 18, 19]]
    let last = ops::narrow(&x, 0, 4, 1);
    assert_eq!(last.shape(), [1, 4]);
    assert_eq!(last.to_vec::<f32>(), [16.0, 17.0, 18.0, 19.0]);
    // Empty at the end is allowed: narrow(0, 5, 0) has shape [0, 4].
    assert_eq!(ops::narrow(&x, 0, 5, 0).shape(), [0, 4]);
}
