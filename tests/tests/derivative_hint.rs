//! The error for an op without a derivative suggests a `#[kernel]` attribute that compiles when
//! pasted: it names the op's Rust item, not its `name` string.

use switchyard::{AliasKey, DispatchKeySet, ErrorKind, Tensor, autograd, kernel, op};
use switchyard_backends as _;

#[op(name = "hint::cube")]
pub fn cube(x: &Tensor) -> Tensor;

#[kernel(op = cube, key = CpuNaive)]
fn cube_cpu(x: &Tensor) -> Tensor {
    x.clone()
}

#[test]
fn the_missing_derivative_error_names_the_item() {
    let mut x = Tensor::vector(&[2.0]);
    x.requires_grad_(true);
    let err = try_cube(&x).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::MissingKernel { .. }),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains(
            "`#[kernel(op = crate::cube, key = Autograd)]` in crate `derivative_hint` (from \
             another crate: `op = derivative_hint::cube`)"
        ),
        "{text}"
    );
}

#[op(name = "hint::square")]
pub fn square(x: &Tensor) -> Tensor;

#[kernel(op = square, key = CpuNaive)]
fn square_cpu(x: &Tensor) -> Tensor {
    x.clone()
}

// Exactly the attribute the error suggests for `square`, pasted: it compiles (this file does).
#[kernel(op = crate::square, key = Autograd)]
fn square_derivative(keys: DispatchKeySet, x: &Tensor) -> switchyard::Result<Tensor> {
    autograd::run_below(|| square::redispatch(keys.below(AliasKey::Autograd), x))
}

#[test]
fn the_suggested_attribute_is_the_one_that_compiles() {
    let suggested = switchyard::__private_v1::derivative_kernel(&square::handle().item_path());
    let attribute = suggested.split('`').nth(1).expect("a quoted attribute");
    assert_eq!(attribute, "#[kernel(op = crate::square, key = Autograd)]");
    assert!(include_str!("derivative_hint.rs").contains(&format!("\n{attribute}\n")));
    let mut x = Tensor::vector(&[2.0]);
    x.requires_grad_(true);
    assert!(try_square(&x).is_ok());
}
