//! What the page calls, natively: a training that learns epoch by epoch, refuses to go past its
//! last epoch, draws its picture, and says which kernels serve; on the GPU, the same training
//! through the async reads the page uses on WebGPU. (`.ci/web` runs the page itself, compiled
//! for wasm32, in headless Chromium.)

use std::sync::{Mutex, MutexGuard, PoisonError};

use switchyard::Device;
use switchyard_example_web::{
    cpu_kernels, init_gpu, new_training, out_of_range_target_error, picture,
};
use switchyard_examples::training::TrainingError;

/// A new model seeds the CPU's generator and draws from it (as PyTorch's init does), and that
/// generator is the process's: tests that make models take turns, or one's draws would land in
/// the other's parameters.
fn models() -> MutexGuard<'static, ()> {
    static MODELS: Mutex<()> = Mutex::new(());
    MODELS.lock().unwrap_or_else(PoisonError::into_inner)
}

#[test]
fn the_page_trains_epoch_by_epoch_and_stops_after_the_last() {
    let mut training = {
        let _turn = models();
        new_training(2, Device::Cpu).unwrap()
    };
    let first = training.next_epoch().unwrap();
    let second = training.next_epoch().unwrap();
    assert!(
        second < first,
        "the loss did not fall: {first} then {second}"
    );
    assert!(training.is_over());
    assert!(
        training.accuracy() > 0.5,
        "accuracy {}",
        training.accuracy()
    );
    assert_eq!(
        training.next_epoch(),
        Err(TrainingError::Over { epochs: 2 }),
        "a third epoch of two"
    );
    let svg = pollster::block_on(picture(&training)).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("epoch 2 on the CPU"),
        "{svg:.200}"
    );
}

/// The GPU training the page runs on WebGPU, natively (Vulkan or GL here): epochs read back
/// with the async reads give the CPU's losses and accuracy, up to the GPU's rounding.
#[test]
fn on_the_gpu_the_async_epochs_follow_the_cpus() {
    if !switchyard_tests_wgpu::gpu_or_skip("on_the_gpu_the_async_epochs_follow_the_cpus") {
        return;
    }
    let adapter = pollster::block_on(init_gpu()).unwrap();
    assert!(adapter.contains('('), "{adapter}");
    let (mut cpu, mut gpu) = {
        let _turn = models();
        (
            new_training(2, Device::Cpu).unwrap(),
            new_training(2, Device::Wgpu).unwrap(),
        )
    };
    for epoch in 1..=2 {
        let on_cpu = cpu.next_epoch().unwrap();
        let on_gpu = pollster::block_on(gpu.next_epoch_async()).unwrap();
        assert!(
            (on_cpu - on_gpu).abs() < 1e-3 * on_cpu,
            "epoch {epoch}: loss {on_cpu} on the CPU, {on_gpu} on the GPU"
        );
        assert!(
            (cpu.accuracy() - gpu.accuracy()).abs() < 0.01,
            "epoch {epoch}: accuracy {} on the CPU, {} on the GPU",
            cpu.accuracy(),
            gpu.accuracy()
        );
    }
    let svg = pollster::block_on(picture(&gpu)).unwrap();
    assert!(svg.contains("epoch 2 on the GPU (wgpu)"), "{svg:.200}");
    assert_eq!(
        pollster::block_on(gpu.next_epoch_async()),
        Err(TrainingError::Over { epochs: 2 })
    );
}

#[test]
fn no_epochs_is_an_error_not_a_page_that_never_ends() {
    let error = new_training(0, Device::Cpu).unwrap_err();
    assert!(
        matches!(&error, TrainingError::Settings(message) if message.contains("0 epochs")),
        "{error}"
    );
}

#[test]
fn the_page_says_which_cpu_kernels_serve() {
    let said = cpu_kernels();
    // The CPU SIMD kernels' add needs AVX2 and FMA on x86_64, NEON (always there) on aarch64.
    #[cfg(target_arch = "x86_64")]
    let simd_here =
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
    #[cfg(target_arch = "aarch64")]
    let simd_here = true;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let simd_here = false;
    assert_eq!(said.contains("SIMD kernels"), simd_here, "{said}");
}

#[test]
fn a_target_that_is_no_class_is_an_error_on_every_device() {
    let on_cpu = pollster::block_on(out_of_range_target_error(Device::Cpu)).unwrap();
    assert!(on_cpu.contains("not a class index in 0..2"), "{on_cpu}");
    if switchyard_tests_wgpu::gpu_or_skip("a_target_that_is_no_class_is_an_error_on_every_device") {
        let on_gpu = pollster::block_on(out_of_range_target_error(Device::Wgpu)).unwrap();
        assert!(on_gpu.contains("not a class index in 0..2"), "{on_gpu}");
    }
}
