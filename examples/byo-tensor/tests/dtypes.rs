//! The library's own dtype, `complex64` (a user dtype slot the engine does not know): its kernels
//! run per dtype, and the engine's dump and errors call it by its declared name.

use switchyard::{DispatchKey, ErrorKind, UserDType};
use switchyard_example_byo_tensor::{
    ACCEL, COMPLEX64, Device, NdTensor, add, mul, sum, take_kernel_log, to_device, try_add,
    try_mul, try_sum,
};

fn complex(device: Device) -> NdTensor {
    NdTensor::complex_vector(&[(1.0, 2.0), (3.0, -1.0)], device)
}

#[test]
fn complex64_runs_its_own_kernels_and_f32_its_own() {
    take_kernel_log();
    let z = complex(Device::Host);
    let w = NdTensor::complex_vector(&[(0.5, 1.0), (2.0, 0.0)], Device::Host);
    // (1+2i)(0.5+i) = 0.5 - 2 + (1 + 1)i; (3-i)(2) = 6 - 2i.
    assert_eq!(mul(&z, &w).to_complex_vec(), [(-1.5, 2.0), (6.0, -2.0)]);
    assert_eq!(add(&z, &w).to_complex_vec(), [(1.5, 3.0), (5.0, -1.0)]);
    let x = NdTensor::vector(&[1.0, 2.0], Device::Host);
    assert_eq!(add(&x, &x).to_vec(), [2.0, 4.0]);
    // On the accelerator too, through `to_device`, which serves every dtype.
    let on_accel = to_device(&z, Device::Accel);
    assert_eq!(on_accel.dtype_name(), "complex64");
    assert_eq!(
        add(&on_accel, &on_accel).to_complex_vec(),
        [(2.0, 4.0), (6.0, -2.0)]
    );
    assert_eq!(
        take_kernel_log(),
        [
            "byo::mul@host complex64",
            "byo::add@host complex64",
            "byo::add@host",
            "byo::to_device@accel",
            "byo::add@accel complex64",
        ]
    );
}

#[test]
fn a_missing_complex64_kernel_names_the_dtype() {
    // The accelerator has an `f32` `mul` only.
    let z = complex(Device::Accel);
    let error = try_mul(&z, &z).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::MissingKernel { op: "byo::mul", key: DispatchKey::PrivateUse1, column, .. }
                if *column == COMPLEX64.column()
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with(
            "op `byo::mul`: no kernel for dtype complex64 at dispatch key `PrivateUse1` (call \
             keys {PrivateUse1; complex64}); kernels at `PrivateUse1` serve f32."
        ),
        "{message}"
    );
    assert!(
        message
            .contains("`dtypes = [MY_DTYPE]` with `MY_DTYPE: UserDType = UserDType::PrivateUse1`"),
        "{message}"
    );
    // No complex `sum` on either device.
    assert!(try_sum(&complex(Device::Host)).is_err());
    assert_eq!(
        sum(&NdTensor::vector(&[1.0, 2.0], Device::Accel)).to_vec(),
        [3.0]
    );
    assert_eq!(ACCEL, DispatchKey::PrivateUse1);
}

/// The engine promotes nothing: `complex64` with `f32` reads the complex64 column, whose kernels
/// (this library's) refuse the `f32` operand; no `f32` kernel ever sees the complex one.
#[test]
fn complex64_with_f32_reaches_the_complex_kernel_and_is_refused() {
    take_kernel_log();
    let z = complex(Device::Host);
    let x = NdTensor::vector(&[1.0, 2.0], Device::Host);
    let message = try_add(&z, &x).unwrap_err().to_string();
    assert_eq!(
        message,
        "op `byo::add`: the host complex64 kernel got a f32 tensor on host"
    );
    assert_eq!(take_kernel_log(), ["byo::add@host complex64"]);
}

#[test]
fn the_dump_names_complex64() {
    assert_eq!(UserDType::from_name("complex64"), Some(COMPLEX64));
    assert_eq!(COMPLEX64.size_of(), Some(8));
    let dump = switchyard::dump();
    assert!(
        dump.lines()
            .any(|line| line.starts_with("dtype PrivateUse1")
                && line.contains("`complex64` (8 bytes, other) declared at")
                && line.contains("src/tensor.rs:")),
        "{dump}"
    );
    assert!(
        dump.lines()
            .any(|line| line.contains("add_host_complex (dtypes: complex64)")),
        "{dump}"
    );
    let table = mul::handle().table_dump();
    assert!(table.contains("complex64 → [kernel]"), "{table}");
    assert!(table.contains("mul_host_complex"), "{table}");
}
