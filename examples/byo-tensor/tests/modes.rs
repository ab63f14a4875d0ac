//! What the engine gives a library's own tensor for free: `trace` (with `%n` links between its
//! tensors) and `profile`; and the library's own mode, a logging fallback.

use switchyard_example_byo_tensor::{
    Device, NdTensor, add, logged, mul, sum, take_kernel_log, to_device, try_add,
};

#[test]
fn trace_links_the_tensors_an_op_made_to_the_ops_that_read_them() {
    let x = NdTensor::vector(&[1.0, 2.0], Device::Host);
    let y = NdTensor::vector(&[3.0, 4.0], Device::Host);
    let (out, graph) = switchyard::trace(|| {
        let on_accel = to_device(&add(&x, &y), Device::Accel);
        sum(&mul(&on_accel, &on_accel))
    });
    assert_eq!(out.to_vec(), [16.0 + 36.0]);
    assert_eq!(
        graph.to_string(),
        "%0 = byo::add(NdTensor[2]@host, NdTensor[2]@host) -> NdTensor[2]@host\n\
         %1 = byo::to_device(%0, Accel) -> NdTensor[2]@accel\n\
         %2 = byo::mul(%1, %1) -> NdTensor[2]@accel\n\
         %3 = byo::sum(%2) -> NdTensor[]@accel\n"
    );
}

#[test]
fn profile_counts_each_op() {
    let x = NdTensor::vector(&[1.0, 2.0], Device::Accel);
    let (_, profile) = switchyard::profile(|| {
        for _ in 0..3 {
            let _ = sum(&add(&x, &x));
        }
    });
    assert_eq!(profile.row("byo::add").map(|row| row.calls), Some(3));
    assert_eq!(profile.row("byo::sum").map(|row| row.calls), Some(3));
    assert!(profile.row("byo::mul").is_none());
}

#[test]
fn the_logging_fallback_sees_each_call_and_the_result_is_right() {
    take_kernel_log();
    let x = NdTensor::vector(&[1.0, 2.0], Device::Host);
    let short = NdTensor::vector(&[1.0], Device::Host);
    let accel = NdTensor::vector(&[1.0, 2.0], Device::Accel);
    let (out, log) = logged(|| {
        // A device mismatch fails before any kernel or fallback is chosen: no mode sees it.
        assert!(try_add(&x, &accel).is_err());
        // A kernel's error reaches the fallback, which logs it and passes it on.
        assert!(try_add(&x, &short).is_err());
        sum(&mul(&add(&x, &x), &x))
    });
    assert_eq!(out.to_vec(), [2.0 + 8.0]);
    assert_eq!(
        log,
        [
            "byo::add(NdTensor[2]@host, NdTensor[1]@host) -> error: op `byo::add`: shape error: \
             [2] vs [1]",
            "byo::add(NdTensor[2]@host, NdTensor[2]@host) -> NdTensor[2]@host",
            "byo::mul(NdTensor[2]@host, NdTensor[2]@host) -> NdTensor[2]@host",
            "byo::sum(NdTensor[2]@host) -> NdTensor[]@host",
        ]
    );
    // The fallback redispatched to the kernels a plain call runs.
    assert_eq!(
        take_kernel_log(),
        [
            "byo::add@host",
            "byo::add@host",
            "byo::mul@host",
            "byo::sum@host"
        ]
    );
    // Outside `logged` the key is off again: the fallback is not in the call.
    let _ = add(&x, &x);
    assert!(
        !switchyard::local_keys()
            .included
            .contains(switchyard_example_byo_tensor::LOGGING.set())
    );
}
