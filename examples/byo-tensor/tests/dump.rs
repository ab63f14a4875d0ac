//! `switchyard::dump()` and the per-op table dump list the library's ops, kernels and fallback,
//! with their provenance; nothing else is linked.

use switchyard::{DTypeColumn, DispatchKey, SlotOrigin};
use switchyard_example_byo_tensor::{ACCEL, COMPLEX64, HOST, add, exp};

#[test]
fn dump_lists_the_ops_kernels_and_fallback() {
    let dump = switchyard::dump();
    let lines: Vec<&str> = dump.lines().collect();
    let has = |wanted: &[&str]| {
        lines
            .iter()
            .any(|line| wanted.iter().all(|w| line.contains(w)))
    };
    for schema in [
        "byo::add(x: NdTensor, y: NdTensor) -> NdTensor",
        "byo::mul(x: NdTensor, y: NdTensor) -> NdTensor",
        "byo::sum(x: NdTensor) -> NdTensor",
        "byo::exp(x: NdTensor) -> NdTensor",
        "byo::to_device(x: NdTensor, device: Device) -> NdTensor",
    ] {
        assert!(
            has(&[schema, "declared in switchyard_example_byo_tensor"]),
            "{schema} in\n{dump}"
        );
    }
    for (key, kernel) in [
        ("PrivateUse1", "add_accel"),
        ("PrivateUse2", "add_host"),
        ("PrivateUse1", "to_device_accel"),
        ("PrivateUse2", "exp_host"),
    ] {
        assert!(
            has(&[
                key,
                kernel,
                "from switchyard_example_byo_tensor",
                "src/kernels.rs:"
            ]),
            "{kernel} at {key} in\n{dump}"
        );
    }
    assert!(
        has(&[
            "fallback Mode1",
            "log_call from switchyard_example_byo_tensor"
        ]),
        "{dump}"
    );
    // Only this library's ops are linked: no tensor or op of switchyard's own.
    assert!(dump.starts_with("switchyard: 5 ops, "), "{dump}");
    assert!(dump.contains("conflicts: none"), "{dump}");
}

/// Per dtype: the `f32` column's slots hold the `f32` kernels, `complex64`'s the complex ones.
#[test]
fn a_table_shows_which_kernel_serves_each_device() {
    let add = add::handle();
    let f32 = DTypeColumn::F32;
    let kernel = |key, column| match add.slot_in(key, column) {
        Ok(SlotOrigin::Kernel(meta)) => meta.name,
        other => panic!("{other:?}"),
    };
    assert_eq!(kernel(ACCEL, f32), "add_accel");
    assert_eq!(kernel(HOST, f32), "add_host");
    assert_eq!(kernel(ACCEL, COMPLEX64.column()), "add_accel_complex");
    assert_eq!(kernel(HOST, COMPLEX64.column()), "add_host_complex");
    // A column no kernel of the key serves: as if nothing were registered there.
    assert!(matches!(
        add.slot_in(HOST, DTypeColumn::F64),
        Ok(SlotOrigin::Missing)
    ));
    assert!(
        matches!(add.slot(DispatchKey::Mode1), Ok(SlotOrigin::Fallback(meta)) if meta.name == "log_call")
    );
    assert!(matches!(exp::handle().slot(ACCEL), Ok(SlotOrigin::Missing)));
}
