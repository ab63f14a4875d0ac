//! Registration across crates: a downstream crate's op and its kernels for ops it does not own
//! are found without any central list.

use switchyard::DTypeColumn;
use switchyard::ops::{add, mul};
use switchyard::{Device, DispatchKey, SlotOrigin, Tensor, find_op};
use switchyard_backends as _;
use switchyard_example_downstream::{scale, to_toy};

#[test]
fn downstream_op_runs_on_cpu_and_toy_device() {
    let x = Tensor::vector(&[1.0, -2.0]);
    assert_eq!(scale(&x, 3.0).to_vec::<f32>(), [3.0, -6.0]);
    let toy = to_toy(&x).unwrap();
    let scaled = scale(&toy, 3.0);
    assert_eq!(scaled.device(), Device::PrivateUse1);
    assert_eq!(scaled.to_vec::<f32>(), [3.0, -6.0]);
}

#[test]
fn downstream_kernels_for_standard_ops_are_found() {
    let toy = to_toy(&Tensor::vector(&[1.0, 2.0])).unwrap();
    let sum = add(&toy, &toy);
    assert_eq!(
        sum.device(),
        Device::PrivateUse1,
        "the toy kernel ran, not a CPU one"
    );
    assert_eq!(mul(&sum, &toy).to_vec::<f32>(), [2.0, 8.0]);

    let registrations = switchyard::ops::add::handle().registrations();
    let toy_kernel = registrations
        .iter()
        .find(|(key, _)| *key == DispatchKey::PrivateUse1)
        .unwrap();
    assert_eq!(toy_kernel.1.name, "add_toy");
    assert_eq!(
        toy_kernel.1.location.crate_name(),
        "switchyard_example_downstream"
    );
    let cpu_kernel = registrations
        .iter()
        .find(|(key, _)| *key == DispatchKey::CpuNaive)
        .unwrap();
    assert_eq!(cpu_kernel.1.location.crate_name(), "switchyard_backends");
}

#[test]
fn ops_are_found_by_name_with_schema_and_table() {
    let scale = find_op("downstream::scale").expect("the downstream op is registered");
    assert_eq!(
        scale.schema(),
        "downstream::scale(x: Tensor, factor: float) -> Tensor"
    );
    assert_eq!(
        scale.location().crate_name(),
        "switchyard_example_downstream"
    );
    assert!(find_op("no_such_op").is_none());

    let mul = find_op("mul").unwrap();
    assert_eq!(
        mul.schema(),
        "switchyard::mul(x: Tensor, y: Tensor) -> Tensor"
    );
    // `mul` has SIMD variants: installed where the CPU runs one, else a fallthrough.
    assert!(
        matches!(
            mul.slot_in(DispatchKey::CpuSimd, DTypeColumn::F32).unwrap(),
            SlotOrigin::Kernel(meta) if switchyard::cpu::detected().contains(meta.cpu)
        ) || mul.slot_in(DispatchKey::CpuSimd, DTypeColumn::F32).unwrap()
            == SlotOrigin::Fallthrough
    );
    assert!(
        matches!(mul.slot(DispatchKey::CpuNaive).unwrap(), SlotOrigin::Kernel(meta) if meta.name == "mul_naive")
    );
    assert!(
        matches!(mul.slot_in(DispatchKey::PrivateUse1, DTypeColumn::F32).unwrap(), SlotOrigin::Kernel(meta) if meta.name == "mul_toy")
    );
    // Missing, unless this build has the wgpu backend (`cargo test --workspace` unifies the
    // `wgpu` feature that `tests-wgpu` turns on).
    assert!(
        matches!(
            mul.slot_in(DispatchKey::Wgpu, DTypeColumn::F32).unwrap(),
            SlotOrigin::Missing
        ) || matches!(mul.slot_in(DispatchKey::Wgpu, DTypeColumn::F32).unwrap(), SlotOrigin::Kernel(meta) if meta.name == "mul_wgpu")
    );
    let table = mul.table_dump();
    let full = find_op("full").unwrap().table_dump();
    assert!(full.contains("CpuSimd              fallthrough"), "{full}");
    assert!(table.contains("backends/src/cpu/naive.rs:"), "{table}");
}

#[test]
fn dump_lists_ops_schemas_and_provenance() {
    let dump = switchyard::dump();
    assert!(
        dump.contains("add(x: Tensor, y: Tensor) -> Tensor"),
        "{dump}"
    );
    assert!(
        dump.contains("full(shape: int[], value: float, dtype: DType, device: Device) -> Tensor"),
        "{dump}"
    );
    assert!(
        dump.contains("add_naive from switchyard_backends at backends/src/cpu/naive.rs:"),
        "{dump}"
    );
    assert!(
        dump.contains(
            "add_toy (dtypes: f32) from switchyard_example_downstream at examples/downstream/src/lib.rs:"
        ),
        "{dump}"
    );
    assert!(dump.contains("fallback CpuSimd"), "{dump}");
    for op in [
        "add", "sub", "mul", "div", "neg", "relu", "exp", "sum", "mean", "matmul", "full",
    ] {
        assert!(find_op(op).is_some(), "standard op {op} is registered");
    }
}

/// The toy crate's fallback at `AutogradPrivateUse1` serves every op that has no derivative of
/// its own (`downstream::scale`); an op with one (the standard ops' `Autograd` kernels, one per
/// op for every backend) keeps it, which runs the toy kernel below autograd.
#[test]
fn a_downstream_fallback_serves_every_op_at_its_key_without_a_derivative() {
    let toy = to_toy(&Tensor::vector(&[1.0, 2.0])).unwrap();
    let _grad = switchyard::include(DispatchKey::AutogradPrivateUse1);
    let err = switchyard_example_downstream::try_scale(&toy, 2.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "op `downstream::scale`: autograd is not implemented on the toy device; register an \
         `Autograd` kernel for this op"
    );
    assert!(matches!(
        find_op("downstream::scale").unwrap().slot(DispatchKey::AutogradPrivateUse1).unwrap(),
        SlotOrigin::Fallback(meta) if meta.name == "toy_autograd_not_implemented"
    ));
    assert!(matches!(
        find_op("add")
            .unwrap()
            .slot(DispatchKey::AutogradPrivateUse1)
            .unwrap(),
        SlotOrigin::AutogradAlias(_)
    ));
    let sum = switchyard::ops::try_add(&toy, &toy).unwrap();
    assert_eq!(sum.device(), Device::PrivateUse1);
    assert_eq!(sum.to_vec::<f32>(), [2.0, 4.0]);
    assert!(switchyard::dump().contains(
        "fallback AutogradPrivateUse1  toy_autograd_not_implemented from switchyard_example_downstream"
    ));
}

/// The toy crate names its device (`name_device!(key = TOY, "toy")`): `Display`, tensor
/// summaries, dumps and errors say `toy`, not `privateuse1`.
#[test]
fn a_named_device_appears_in_display_dumps_and_errors() {
    use switchyard::Device;
    assert_eq!(Device::PrivateUse1.to_string(), "toy");
    assert_eq!(Device::PrivateUse1.name(), "privateuse1");
    // Devices nobody named keep their built-in names.
    assert_eq!(Device::PrivateUse2.to_string(), "privateuse2");
    assert_eq!(Device::Cpu.to_string(), "cpu");

    let toy = to_toy(&Tensor::vector(&[1.0, 2.0])).unwrap();
    assert!(format!("{toy:?}").contains("device=toy"), "{toy:?}");

    let table = add::handle().table_dump();
    assert!(table.contains("PrivateUse1 (toy)"), "{table}");
    let dump = switchyard::dump();
    assert!(
        dump.contains("PrivateUse1 (toy)    add_toy (dtypes: f32)"),
        "{dump}"
    );

    let error = switchyard::ops::try_add(&toy, &Tensor::vector(&[1.0, 2.0])).unwrap_err();
    assert!(error.to_string().contains("toy"), "{error}");
}

/// A downstream crate declares its kernels' dtypes as the standard backends do: `scale` serves
/// `f32` only, and an `f64` call is an error naming the dtype and what is served.
#[test]
fn downstream_kernels_declare_their_dtypes() {
    let doubles = Tensor::from_vec::<f64>(vec![1.0, 2.0], &[2]).unwrap();
    let error = switchyard_example_downstream::try_scale(&doubles, 2.0).unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(error.kind(), switchyard::ErrorKind::MissingKernel { .. }),
        "{text}"
    );
    assert!(
        text.contains("dtype f64") && text.contains("serve f32"),
        "{text}"
    );
    assert_eq!(scale(&Tensor::vector(&[1.5]), 2.0).to_vec::<f32>(), [3.0]);
}
