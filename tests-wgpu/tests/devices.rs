//! Tensors across devices: `to` in every direction, the device-mismatch error for a CPU and a GPU
//! tensor in one call, and the wgpu kernels' registration.

use std::panic::{AssertUnwindSafe, catch_unwind};

use switchyard::ops::{add, to, try_add, try_matmul, try_to};
use switchyard::{
    DType, DTypeColumn, Device, DispatchKey, DispatchKeySet, ErrorKind, SlotOrigin, Tensor, find_op,
};
use switchyard_example_downstream::to_toy;
use switchyard_tests_wgpu::{WGPU_KERNEL_OPS, gpu_or_skip};

/// Every op of [`WGPU_KERNEL_OPS`] has a kernel at `Wgpu` in the `f32` column and none in the
/// `f64` column (the GPU does not hold `f64`), except `to`, `copy_` and `to_dtype`, which serve
/// every column: they convert (a CPU source of `copy_`) or refuse other dtypes with their own
/// error.
#[test]
fn every_standard_op_has_a_wgpu_kernel() {
    for op in WGPU_KERNEL_OPS {
        let handle = find_op(op).expect("a standard op");
        match handle.slot_in(DispatchKey::Wgpu, DTypeColumn::F32).unwrap() {
            SlotOrigin::Kernel(meta) => {
                // `copy_` → `copy_wgpu`: one underscore between the op and the backend.
                assert_eq!(meta.name, format!("{}_wgpu", op.trim_end_matches('_')));
                assert!(
                    meta.location.file.ends_with("wgpu/kernels.rs")
                        || meta.location.file.ends_with("wgpu/kernels_nn.rs"),
                    "{meta:?}"
                );
            }
            other => panic!("{op}: the Wgpu slot is {other}"),
        }
        let f64_slot = handle.slot_in(DispatchKey::Wgpu, DTypeColumn::F64).unwrap();
        assert_eq!(
            matches!(f64_slot, SlotOrigin::Kernel(_)),
            matches!(op, "to" | "copy_" | "to_dtype"),
            "{op}: the Wgpu slot for f64 is {f64_slot}"
        );
    }
}

#[test]
fn a_cpu_and_a_gpu_tensor_in_one_call_is_a_device_mismatch() {
    if !gpu_or_skip("a_cpu_and_a_gpu_tensor_in_one_call_is_a_device_mismatch") {
        return;
    }
    let cpu = Tensor::vector(&[1.0, 2.0]);
    let gpu = cpu.to(Device::Wgpu);
    for error in [
        try_add(&cpu, &gpu).unwrap_err(),
        try_add(&gpu, &cpu).unwrap_err(),
        try_matmul(
            &gpu,
            &Tensor::from_vec::<f32>(vec![1.0; 2], &[2, 1]).unwrap(),
        )
        .unwrap_err(),
    ] {
        match error.kind() {
            ErrorKind::DeviceMismatch { families, .. } => {
                assert_eq!(
                    families,
                    &[Device::Wgpu.keys(), Device::Cpu.keys()],
                    "{error}"
                );
            }
            other => panic!("expected a device mismatch, got {other:?}"),
        }
        assert!(
            error
                .to_string()
                .contains("different devices (wgpu and cpu)"),
            "{error}"
        );
    }
    // The plain call panics with the same message.
    let expected = try_add(&cpu, &gpu).unwrap_err().to_string();
    let payload = catch_unwind(AssertUnwindSafe(|| add(&cpu, &gpu))).unwrap_err();
    assert_eq!(payload.downcast_ref::<String>(), Some(&expected));
}

#[test]
fn to_copies_between_cpu_gpu_and_a_downstream_device() {
    if !gpu_or_skip("to_copies_between_cpu_gpu_and_a_downstream_device") {
        return;
    }
    let x = Tensor::from_vec::<f32>(vec![1.0, -2.0, 3.5, 4.0, 0.0, -0.0], &[2, 3]).unwrap();
    let gpu = to(&x, Device::Wgpu);
    assert_eq!(gpu.device(), Device::Wgpu);
    // The device's keys and the dtype's bit.
    assert_eq!(gpu.keys(), DispatchKeySet::WGPU | DType::F32.key_bit());
    assert_eq!(gpu.shape(), &[2, 3]);
    assert!(gpu.as_slice::<f32>().is_err());
    // The values read back directly, and through `to(Cpu)`.
    assert_eq!(gpu.to_vec::<f32>(), x.to_vec::<f32>());
    assert_eq!(gpu.to(Device::Cpu).to_vec::<f32>(), x.to_vec::<f32>());
    assert_eq!(gpu.to_string(), "[[1, -2, 3.5], [4, 0, -0]]");
    assert!(format!("{gpu:?}").contains("device=wgpu"));
    // From a downstream device whose storage reads back to the host.
    let toy = to_toy(&x).unwrap();
    assert_eq!(toy.to(Device::Wgpu).to_vec::<f32>(), x.to_vec::<f32>());
    // To it, the wgpu backend cannot go; the error says so, naming the device as its crate
    // does, and `try_` forms do not panic.
    let error = try_to(&gpu, Device::PrivateUse1).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("copies to the CPU and to the GPU, not from wgpu to toy"),
        "{error}"
    );
    assert!(x.try_to(Device::PrivateUse1).is_err());
}

#[test]
fn to_on_one_device_returns_the_same_tensor() {
    let x = Tensor::vector(&[1.0]);
    assert!(x.to(Device::Cpu).same_storage(&x));
    if gpu_or_skip("to_on_one_device_returns_the_same_tensor") {
        let gpu = x.to(Device::Wgpu);
        assert!(gpu.to(Device::Wgpu).same_storage(&gpu));
        assert!(
            !gpu.to(Device::Cpu).same_storage(&x),
            "a copy back is a new tensor"
        );
    }
}

/// Eight threads record into the one batch at once; each gets its own results.
#[test]
fn ops_from_many_threads_share_the_batch() {
    if !gpu_or_skip("ops_from_many_threads_share_the_batch") {
        return;
    }
    let threads: Vec<_> = (0..8)
        .map(|k| {
            std::thread::spawn(move || {
                let x = Tensor::from_fn(&[3001], |i| (i % 13) as f32 + k as f32);
                let gpu_x = x.to(Device::Wgpu);
                let (mut on_gpu, mut on_cpu) = (gpu_x.clone(), x.clone());
                for _ in 0..50 {
                    on_gpu = add(&on_gpu, &gpu_x);
                    on_cpu = add(&on_cpu, &x);
                }
                assert_eq!(on_gpu.to_vec::<f32>(), on_cpu.to_vec::<f32>(), "thread {k}");
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
}

/// The async reads (how a web page reads GPU tensors) give what the blocking ones give: every
/// dtype the GPU holds, a strided view, a single item; and their errors are `try_to_vec`'s.
/// Natively they wait in place, so `block_on` returns at the first poll. `init` gives the
/// adapter the first GPU call made.
#[test]
fn async_reads_give_what_blocking_reads_give() {
    if !gpu_or_skip("async_reads_give_what_blocking_reads_give") {
        return;
    }
    let adapter = pollster::block_on(switchyard_backends::wgpu::init()).unwrap();
    assert_eq!(
        adapter.name,
        switchyard_backends::wgpu::adapter_info().unwrap().name
    );
    let x = Tensor::from_fn(&[3, 4], |i| i as f32 - 5.0).to(Device::Wgpu);
    let t = switchyard::ops::transpose(&x, 0, 1); // strided: read through the view's strides
    assert_eq!(
        pollster::block_on(t.try_to_vec_async::<f32>()).unwrap(),
        t.to_vec::<f32>()
    );
    let positive = switchyard::ops::gt(&x, &Tensor::scalar(0.0).to(Device::Wgpu));
    assert_eq!(
        pollster::block_on(positive.try_to_vec_async::<bool>()).unwrap(),
        positive.to_vec::<bool>()
    );
    let wide = Tensor::from_slice(&[i64::MIN, -1, 0, i64::MAX], &[4])
        .unwrap()
        .to(Device::Wgpu);
    assert_eq!(
        pollster::block_on(wide.try_to_vec_async::<i64>()).unwrap(),
        [i64::MIN, -1, 0, i64::MAX]
    );
    let total = switchyard::ops::sum(&x);
    let item = pollster::block_on(total.try_item_async()).unwrap();
    assert_eq!(item.as_f64(), f64::from(total.to_vec::<f32>()[0]));
    // Errors: the blocking reads' own, naming the async op.
    let wrong_dtype = pollster::block_on(x.try_to_vec_async::<i64>()).unwrap_err();
    assert_eq!(
        wrong_dtype.to_string(),
        x.try_to_vec::<i64>()
            .unwrap_err()
            .to_string()
            .replace("Tensor::to_vec", "Tensor::to_vec_async")
    );
    let not_one = pollster::block_on(x.try_item_async()).unwrap_err();
    assert_eq!(not_one.to_string(), x.try_item().unwrap_err().to_string());
}
