//! `switchyard::dump()` and the per-op table dump list the library's ops, kernels and fallback,
//! with their provenance; nothing else is linked.

use switchyard::{DispatchKey, SlotOrigin};
use switchyard_example_byo_tensor::{ACCEL, HOST, add, exp};

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

#[test]
fn a_table_shows_which_kernel_serves_each_device() {
    let add = add::handle();
    assert!(matches!(add.slot(ACCEL), Ok(SlotOrigin::Kernel(meta)) if meta.name == "add_accel"));
    assert!(matches!(add.slot(HOST), Ok(SlotOrigin::Kernel(meta)) if meta.name == "add_host"));
    assert!(
        matches!(add.slot(DispatchKey::Mode1), Ok(SlotOrigin::Fallback(meta)) if meta.name == "log_call")
    );
    assert!(matches!(exp::handle().slot(ACCEL), Ok(SlotOrigin::Missing)));
}
