//! A kernel may return its own error type, and so may an op's body (`#[op(error = MyError)]`):
//! the `try_` call's `DispatchError` names the op and the key, keeps the user's error as its
//! `source()`, and prints the chain.

use std::error::Error;
use std::fmt;

use switchyard::{
    AliasKey, DispatchError, DispatchKeySet, ErrorKind, KernelKey, Tensor, kernel, op,
};
use switchyard_backends as _;

/// A user's error, with a cause of its own.
#[derive(Debug)]
struct MyError {
    value: f32,
    cause: Cause,
}

#[derive(Debug)]
struct Cause;

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the sensor was unplugged")
    }
}

impl Error for Cause {}

impl fmt::Display for MyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is out of range", self.value)
    }
}

impl Error for MyError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.cause)
    }
}

#[op(name = "kernel_errors::checked")]
pub fn checked(x: &Tensor) -> Tensor;

#[kernel(op = checked, key = CpuNaive)]
fn checked_cpu(x: &Tensor) -> Result<Tensor, MyError> {
    match x.to_vec::<f32>().into_iter().find(|v| *v > 1.0) {
        Some(value) => Err(MyError {
            value,
            cause: Cause,
        }),
        None => Ok(x.clone()),
    }
}

#[test]
fn a_kernels_own_error_is_the_source_of_the_try_error() {
    let ok = try_checked(&Tensor::vector(&[0.5])).expect("in range");
    assert_eq!(ok.to_vec::<f32>(), [0.5]);

    let err = try_checked(&Tensor::vector(&[0.5, 3.0])).unwrap_err();
    let ErrorKind::KernelFailed { op, key, .. } = err.kind() else {
        panic!("expected KernelFailed, got {err}");
    };
    assert_eq!(*op, "kernel_errors::checked");
    assert_eq!(*key, KernelKey::from(switchyard::DispatchKey::CpuNaive));
    let mine = err
        .source()
        .and_then(|source| source.downcast_ref::<MyError>())
        .expect("the source is the kernel's own error");
    assert_eq!(mine.value, 3.0);
    assert_eq!(
        err.to_string(),
        "op `kernel_errors::checked`: the kernel at `CpuNaive` failed: 3 is out of range: \
         the sensor was unplugged"
    );
}

// A keyed kernel (it takes the call's keys first) may return its own error too.
#[op(name = "kernel_errors::keyed")]
pub fn keyed(x: &Tensor) -> Tensor;

#[kernel(op = keyed, key = CpuNaive)]
fn keyed_cpu(_keys: DispatchKeySet, x: &Tensor) -> Result<Tensor, std::fmt::Error> {
    if x.numel() == 0 {
        return Err(std::fmt::Error);
    }
    Ok(x.clone())
}

#[test]
fn a_keyed_kernels_own_error_is_kept() {
    let err = try_keyed(&Tensor::vector(&[])).unwrap_err();
    assert!(err.source().unwrap().is::<std::fmt::Error>(), "{err}");
    assert!(try_keyed(&Tensor::vector(&[1.0])).is_ok());
}

// A kernel returning `switchyard::Result` keeps its error as it is.
#[op(name = "kernel_errors::plain")]
pub fn plain(x: &Tensor) -> Tensor;

#[kernel(op = plain, key = CpuNaive)]
fn plain_cpu(x: &Tensor) -> switchyard::Result<Tensor> {
    Err(DispatchError::shape(
        "kernel_errors::plain",
        format!("{:?}", x.shape()),
    ))
}

#[test]
fn a_dispatch_error_is_returned_as_is() {
    let err = try_plain(&Tensor::vector(&[1.0])).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Shape { .. }), "{err}");
    assert!(err.source().is_none());
}

// Without `error = …`, a body turns its own error into a `DispatchError` with `kernel_failed`
// (a body ending in `Ok(…)` could not infer a generic error type), keeping it as the source.
#[op(name = "kernel_errors::body")]
pub fn body(x: &Tensor) -> Tensor {
    if x.numel() > 2 {
        Err(MyError {
            value: x.numel() as f32,
            cause: Cause,
        })
    } else {
        Ok(x.clone())
    }
    .map_err(|e| {
        DispatchError::kernel_failed("kernel_errors::body", AliasKey::CompositeImplicit, e)
    })
}

#[test]
fn an_op_bodys_own_error_is_kept() {
    let err = try_body(&Tensor::vector(&[1.0, 2.0, 3.0])).unwrap_err();
    let ErrorKind::KernelFailed { key, .. } = err.kind() else {
        panic!("expected KernelFailed, got {err}");
    };
    assert_eq!(key.to_string(), "CompositeImplicit");
    assert_eq!(
        err.source()
            .unwrap()
            .downcast_ref::<MyError>()
            .unwrap()
            .value,
        3.0
    );
    assert!(try_body(&Tensor::vector(&[1.0])).is_ok());
}

/// A user's fallible helper, as an op body would call it with `?`.
fn in_range(x: &Tensor) -> Result<(), MyError> {
    match x.to_vec::<f32>().into_iter().find(|v| *v > 1.0) {
        Some(value) => Err(MyError {
            value,
            cause: Cause,
        }),
        None => Ok(()),
    }
}

/// `?` on the engine's errors needs a conversion into the body's error type, as any `?` does.
#[derive(Debug)]
enum BodyError {
    Range(MyError),
    Dispatch(DispatchError),
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::Range(e) => write!(f, "{e}"),
            BodyError::Dispatch(e) => write!(f, "{e}"),
        }
    }
}

impl Error for BodyError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            BodyError::Range(e) => Some(e),
            BodyError::Dispatch(e) => Some(e),
        }
    }
}

impl From<MyError> for BodyError {
    fn from(e: MyError) -> Self {
        BodyError::Range(e)
    }
}

impl From<DispatchError> for BodyError {
    fn from(e: DispatchError) -> Self {
        BodyError::Dispatch(e)
    }
}

// With `error = …` the body ends in `Result<T, MyError>` and uses `?` on its own errors.
#[op(name = "kernel_errors::own_body", error = MyError)]
pub fn own_body(x: &Tensor) -> Tensor {
    in_range(x)?;
    Ok(x.clone())
}

#[test]
fn an_op_body_declared_with_its_error_type_keeps_it_as_the_source() {
    assert_eq!(own_body(&Tensor::vector(&[0.5])).to_vec::<f32>(), [0.5]);
    let err = try_own_body(&Tensor::vector(&[0.5, 4.0])).unwrap_err();
    let ErrorKind::KernelFailed { op, key, .. } = err.kind() else {
        panic!("expected KernelFailed, got {err}");
    };
    assert_eq!(*op, "kernel_errors::own_body");
    assert_eq!(*key, KernelKey::from(AliasKey::CompositeImplicit));
    let mine = err
        .source()
        .and_then(|source| source.downcast_ref::<MyError>())
        .expect("the source is the body's own error");
    assert_eq!(mine.value, 4.0);
    assert_eq!(
        err.to_string(),
        "op `kernel_errors::own_body`: the kernel at `CompositeImplicit` failed: 4 is out of \
         range: the sensor was unplugged"
    );
}

// A body whose error type converts from `DispatchError` uses `?` on other ops' `try_` forms too.
#[op(name = "kernel_errors::mixed_body", error = BodyError)]
pub fn mixed_body(x: &Tensor, y: &Tensor) -> Tensor {
    in_range(x)?;
    Ok(switchyard::ops::try_add(x, y)?)
}

#[test]
fn an_op_body_with_its_error_type_can_use_the_engines_errors() {
    let sum = try_mixed_body(&Tensor::vector(&[0.5]), &Tensor::vector(&[0.25])).unwrap();
    assert_eq!(sum.to_vec::<f32>(), [0.75]);

    let range = try_mixed_body(&Tensor::vector(&[2.0]), &Tensor::vector(&[0.0])).unwrap_err();
    let body = range.source().unwrap().downcast_ref::<BodyError>().unwrap();
    assert!(
        matches!(body, BodyError::Range(e) if e.value == 2.0),
        "{range}"
    );

    let shape = try_mixed_body(
        &Tensor::vector(&[0.5, 0.5]),
        &Tensor::vector(&[1.0, 2.0, 3.0]),
    )
    .unwrap_err();
    let body = shape.source().unwrap().downcast_ref::<BodyError>().unwrap();
    let BodyError::Dispatch(inner) = body else {
        panic!("expected the add's error, got {shape}");
    };
    assert!(matches!(inner.kind(), ErrorKind::Shape { .. }), "{inner}");
}
