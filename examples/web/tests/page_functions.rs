//! What the page calls, natively: a training that learns epoch by epoch, refuses to go past its
//! last epoch, draws its picture, and says which kernels serve. (`.ci/web` runs the page itself,
//! compiled for wasm32, in headless Chromium.)

use switchyard_example_web::{cpu_kernels, new_training, picture};
use switchyard_examples::training::TrainingError;

#[test]
fn the_page_trains_epoch_by_epoch_and_stops_after_the_last() {
    let mut training = new_training(2).unwrap();
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
    let svg = picture(&training).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("epoch 2 on the CPU"),
        "{svg:.200}"
    );
}

#[test]
fn no_epochs_is_an_error_not_a_page_that_never_ends() {
    let error = new_training(0).unwrap_err();
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
