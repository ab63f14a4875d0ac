//! Ops on each device run that device's kernels; devices do not mix, except in `to_device`;
//! errors name the devices by the names the library gave them.

use switchyard::{DType, DispatchKey, ErrorKind, FromValue, Stack, ToValue};
use switchyard_example_byo_tensor::{
    ACCEL, Device, HOST, NdTensor, add, exp, mul, sum, take_kernel_log, to_device, try_add,
    try_exp, try_mul,
};

fn pair(device: Device) -> (NdTensor, NdTensor) {
    (
        NdTensor::vector(&[1.0, 2.0, 3.0], device),
        NdTensor::vector(&[4.0, 5.0, 6.0], device),
    )
}

#[test]
fn each_device_runs_its_own_kernels() {
    take_kernel_log();
    for (device, suffix) in [(Device::Host, "host"), (Device::Accel, "accel")] {
        let (x, y) = pair(device);
        let out = sum(&mul(&add(&x, &y), &x));
        assert_eq!(out.to_vec(), [5.0 + 14.0 + 27.0]);
        assert_eq!(out.shape(), [] as [usize; 0]);
        assert_eq!(out.device(), device);
        let expected: Vec<String> = ["add", "mul", "sum"]
            .iter()
            .map(|op| format!("byo::{op}@{suffix}"))
            .collect();
        assert_eq!(take_kernel_log(), expected);
    }
}

#[test]
fn a_boxed_tensor_is_the_same_tensor() {
    let x = NdTensor::vector(&[1.0, 2.0], Device::Accel);
    let boxed = x.to_value();
    assert_eq!(boxed.to_string(), "NdTensor[2]@accel");
    assert_eq!(boxed.dispatch_keys(), ACCEL.set() | DType::F32.key_bit());
    assert!(NdTensor::from_value(boxed).unwrap().same(&x));
    assert_eq!(
        Device::from_value(Device::Host.to_value()),
        Ok(Device::Host)
    );
}

#[test]
fn a_boxed_call_dispatches_like_the_typed_one() {
    take_kernel_log();
    let (x, y) = pair(Device::Accel);
    let mut stack = Stack::new();
    stack.push(x.to_value());
    stack.push(y.to_value());
    switchyard::call_boxed("byo::add", &mut stack).unwrap();
    let out = NdTensor::from_value(stack.pop().unwrap()).unwrap();
    assert_eq!(out.to_vec(), [5.0, 7.0, 9.0]);
    assert_eq!(take_kernel_log(), ["byo::add@accel"]);
}

#[test]
fn to_device_moves_between_the_devices() {
    take_kernel_log();
    let x = NdTensor::vector(&[1.0, 2.0], Device::Host);
    let on_accel = to_device(&x, Device::Accel);
    assert_eq!(
        (on_accel.device(), on_accel.to_vec()),
        (Device::Accel, vec![1.0, 2.0])
    );
    let back = to_device(&on_accel, Device::Host);
    assert_eq!(
        (back.device(), back.to_vec()),
        (Device::Host, vec![1.0, 2.0])
    );
    // Already there: the same tensor, by the host's own kernel.
    assert!(to_device(&x, Device::Host).same(&x));
    // Both directions involve the accelerator's key, the higher of the two: its kernel copies.
    assert_eq!(
        take_kernel_log(),
        [
            "byo::to_device@accel",
            "byo::to_device@accel",
            "byo::to_device@host"
        ]
    );
}

#[test]
fn mixing_the_devices_is_a_device_mismatch_naming_both() {
    let (x, _) = pair(Device::Host);
    let (y, _) = pair(Device::Accel);
    let error = try_add(&x, &y).unwrap_err();
    assert_eq!(
        error.kind(),
        &ErrorKind::DeviceMismatch {
            op: "byo::add",
            families: vec![ACCEL.set(), HOST.set()],
        }
    );
    assert_eq!(
        error.to_string(),
        "op `byo::add`: arguments are on different devices (accel and host); move them to one \
         device first"
    );
    assert!(try_mul(&y, &x).is_err());
    assert_eq!(switchyard::family_name(HOST.set()), "host");
    assert_eq!(switchyard::family_name(ACCEL.set()), "accel");
}

#[test]
fn a_kernel_error_comes_back_as_the_op_error() {
    let x = NdTensor::vector(&[1.0, 2.0], Device::Host);
    let y = NdTensor::vector(&[1.0], Device::Host);
    let error = try_add(&x, &y).unwrap_err();
    assert_eq!(error.to_string(), "op `byo::add`: shape error: [2] vs [1]");
}

/// `exp` has no accelerator kernel: the error names the device. A kernel registered at run time
/// fills the hole until its guard drops. (One test, so no other test sees the registration.)
#[test]
fn a_missing_kernel_names_the_device_until_one_is_registered() {
    let x = NdTensor::vector(&[0.0], Device::Accel);
    let error = try_exp(&x).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::MissingKernel {
            op: "byo::exp",
            key: DispatchKey::PrivateUse1,
            ..
        }
    ));
    let message = error.to_string();
    assert!(
        message.contains("the arguments are on a device (accel) for which no linked backend implements `byo::exp`"),
        "{message}"
    );

    let exp_accel: exp::KernelFn =
        |_keys, x| Ok(NdTensor::new(x.data().mapv(f32::exp), Device::Accel));
    let registration = exp::register(ACCEL, "exp_accel_at_run_time", exp_accel).unwrap();
    assert_eq!(exp(&x).to_vec(), [1.0]);
    assert!(exp::handle().table_dump().contains("exp_accel_at_run_time"));
    drop(registration);
    assert!(try_exp(&x).is_err());
    assert_eq!(exp(&NdTensor::vector(&[0.0], Device::Host)).to_vec(), [1.0]);
}
