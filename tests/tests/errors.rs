//! What users see when dispatch fails: each error names the op, the keys or devices involved,
//! and what would have worked.

use std::panic::{AssertUnwindSafe, catch_unwind};

use switchyard::ops::{add, try_add, try_mul};
use switchyard::{DispatchKey, DispatchKeySet, ErrorKind, Tensor, kernel, op};
use switchyard_backends as _;
use switchyard_example_downstream::to_toy;

fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the call should panic");
    payload
        .downcast::<String>()
        .map(|s| *s)
        .expect("panics carry a formatted message")
}

// ---- duplicate registration ----

#[op]
pub fn dup_op(x: &Tensor) -> Tensor;

const FIRST_LINE: u32 = line!() + 2;
#[kernel(op = "dup_op", key = CpuNaive)]
fn dup_first(x: &Tensor) -> Tensor {
    x.clone()
}

const SECOND_LINE: u32 = line!() + 2;
#[kernel(op = "dup_op", key = CpuNaive)]
fn dup_second(x: &Tensor) -> Tensor {
    x.clone()
}

#[test]
fn duplicate_registration_names_both_locations() {
    let err = try_dup_op(&Tensor::scalar(1.0)).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::DuplicateKernel {
            key: switchyard::KernelKey::Key(DispatchKey::CpuNaive),
            ..
        }
    ));
    let text = err.to_string();
    let first = format!("`dup_first` at {}:{FIRST_LINE}", file!());
    let second = format!("`dup_second` at {}:{SECOND_LINE}", file!());
    assert!(text.contains(&first), "{text}\nshould contain {first}");
    assert!(text.contains(&second), "{text}\nshould contain {second}");
    assert!(
        text.starts_with("op `errors::dup_op`: two kernels registered for dispatch key `CpuNaive`"),
        "{text}"
    );
    // Every call that reaches the slot reports the same error, and the table dump shows it.
    assert_eq!(try_dup_op(&Tensor::scalar(2.0)).unwrap_err(), err);
    let dump = dup_op::handle().table_dump();
    // (A user dtype declared in a linked crate, `complex64`, is served by neither: its column
    // may print apart.)
    let naive = dump
        .lines()
        .find(|l| l.trim_start().starts_with("CpuNaive"))
        .unwrap();
    assert!(
        naive.contains("[conflict] two kernels at `CpuNaive`"),
        "{dump}"
    );
}

// Two ops of one full name: a compile error in one crate (tests/ui/op-duplicate-full-name.rs),
// a run-time error across crates (tests/duplicate_op_names.rs).

// ---- missing kernels ----

#[op]
pub fn orphan(x: &Tensor) -> Tensor;

#[test]
fn op_without_any_kernel_blames_linking() {
    let err = try_orphan(&Tensor::scalar(1.0)).unwrap_err();
    let ErrorKind::MissingKernel {
        op, key, available, ..
    } = err.kind()
    else {
        panic!("{err}")
    };
    assert_eq!(
        (*op, *key, *available),
        (
            "errors::orphan",
            DispatchKey::CpuNaive,
            DispatchKeySet::EMPTY
        )
    );
    let text = err.to_string();
    assert!(text.contains("no kernels registered at all"), "{text}");
    assert!(text.contains("not linked"), "{text}");
    assert!(text.contains("as _;` (the linker drops crates"), "{text}");
    assert!(switchyard::dump().contains("orphan(x: Tensor) -> Tensor"));
}

#[op]
pub fn toy_only(x: &Tensor) -> Tensor;

#[kernel(op = "toy_only", key = PrivateUse1)]
fn toy_only_kernel(x: &Tensor) -> Tensor {
    x.clone()
}

#[test]
fn missing_backend_kernel_names_key_device_and_alternatives() {
    let err = try_toy_only(&Tensor::vector(&[1.0])).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "op `errors::toy_only`: no kernel for dtype f32 at dispatch key `CpuNaive` (call keys {CpuSimd, \
             CpuNaive; f32})"
        ),
        "{text}"
    );
    assert!(text.contains("kernels exist for: {PrivateUse1}"), "{text}");
    assert!(text.contains("on a device (cpu)"), "{text}");
    // The plain call panics with the same message.
    assert_eq!(
        panic_message(|| drop(toy_only(&Tensor::vector(&[1.0])))),
        text
    );
    // The toy device does have a kernel.
    let toy = to_toy(&Tensor::vector(&[1.0])).unwrap();
    assert_eq!(toy_only(&toy).to_vec::<f32>(), [1.0]);
}

#[test]
fn active_key_without_kernel_says_so() {
    let _custom = switchyard::include(DispatchKey::Custom2);
    let err = try_mul(&Tensor::scalar(1.0), &Tensor::scalar(2.0)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("no kernel for dtype f32 at dispatch key `Custom2`"),
        "{text}"
    );
    assert!(text.contains("`Custom2` is active"), "{text}");
}

// ---- device mismatch ----

#[test]
fn device_mismatch_names_op_and_both_devices() {
    let cpu = Tensor::vector(&[1.0, 2.0]);
    let toy = to_toy(&cpu).unwrap();
    let err = try_add(&cpu, &toy).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::DeviceMismatch {
            op: "switchyard::add",
            families: vec![DispatchKeySet::PRIVATE_USE1, DispatchKeySet::CPU]
        }
    );
    let text = err.to_string();
    assert_eq!(
        text,
        "op `switchyard::add`: arguments are on different devices (toy and cpu); move them to \
         one device first"
    );
    assert_eq!(panic_message(|| drop(add(&toy, &cpu))), text);
    // One device is fine on either side.
    assert_eq!(add(&toy, &toy).to_vec::<f32>(), [2.0, 4.0]);
    assert_eq!(add(&cpu, &cpu).to_vec::<f32>(), [2.0, 4.0]);
}

/// A user's host value that reports only `CpuNaive` (not both CPU keys, as our tensors do).
#[derive(Clone, Debug)]
pub struct NaiveOnly;

impl switchyard::DispatchArg for NaiveOnly {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::CPU_NAIVE
    }
}
switchyard::boxable!(NaiveOnly);

#[switchyard::op(name = "errors::with_host_value")]
pub fn with_host_value(x: &Tensor, host: &NaiveOnly) -> Tensor;

#[switchyard::kernel(op = with_host_value, key = CpuNaive)]
fn with_host_value_cpu(x: &Tensor, _host: &NaiveOnly) -> Tensor {
    x.clone()
}

/// The rule is on device families derived from the keys: one CPU key is the CPU, so a value
/// reporting only `CpuNaive` beside a tensor on another device is a mismatch, not a silent
/// call of that device's kernel (or a missing-kernel error blaming it).
#[test]
fn a_value_with_one_cpu_key_is_on_the_cpu() {
    let toy = to_toy(&Tensor::vector(&[1.0])).unwrap();
    let err = try_with_host_value(&toy, &NaiveOnly).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::DeviceMismatch {
            op: "errors::with_host_value",
            families: vec![DispatchKeySet::PRIVATE_USE1, DispatchKeySet::CPU]
        }
    );
    let cpu = Tensor::vector(&[3.0]);
    assert_eq!(with_host_value(&cpu, &NaiveOnly).to_vec::<f32>(), [3.0]);
}

#[test]
fn device_mismatch_is_checked_before_exclusion() {
    // Excluding the CPU keys does not hide that a CPU tensor was passed with a toy one.
    let _g = switchyard::exclude(DispatchKeySet::CPU);
    let err = try_mul(&Tensor::scalar(1.0), &to_toy(&Tensor::scalar(1.0)).unwrap()).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::DeviceMismatch { .. }),
        "{err}"
    );
}

// ---- nothing to dispatch on ----

#[op]
pub fn scalars_only(a: f32, b: i64) -> Tensor;

#[test]
fn no_dispatchable_arguments_is_an_error() {
    let err = try_scalars_only(1.0, 2).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::NoDispatchKeys {
                op: "errors::scalars_only",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("no dispatchable arguments"),
        "{err}"
    );
}

#[test]
fn excluding_every_key_is_an_error() {
    let _g = switchyard::exclude(DispatchKeySet::CPU);
    let err = try_mul(&Tensor::scalar(1.0), &Tensor::scalar(2.0)).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::NoDispatchKeys {
                op: "switchyard::mul",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn errors_are_std_errors_and_debug_shows_the_message() {
    let err: Box<dyn std::error::Error> = Box::new(try_orphan(&Tensor::scalar(1.0)).unwrap_err());
    assert!(format!("{err:?}").starts_with("DispatchError(op `errors::orphan`"));
}
