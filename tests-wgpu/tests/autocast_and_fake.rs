//! Autocast and fake tensors on the GPU's device: the backend holds `f32`, `bool` and `i64`
//! only, so autocast to a 16-bit type there is refused with an error that says so, and nothing
//! half-done is left behind; fake tensors report `wgpu` and need no adapter at all.

use switchyard::autocast::autocast;
use switchyard::{DType, Device, Tensor, fake, ops};
use switchyard_tests_wgpu::gpu_or_skip;

#[test]
fn autocast_to_16_bits_on_the_gpu_is_a_clear_error() {
    if !gpu_or_skip("autocast_to_16_bits_on_the_gpu_is_a_clear_error") {
        return;
    }
    let x = Tensor::from_vec(vec![1.0f32; 6], &[2, 3])
        .unwrap()
        .try_to(Device::Wgpu)
        .unwrap();
    let w = Tensor::from_vec(vec![0.5f32; 12], &[3, 4])
        .unwrap()
        .try_to(Device::Wgpu)
        .unwrap();
    let _bf16 = autocast(Device::Wgpu, DType::BF16).unwrap();
    let err = ops::try_matmul(&x, &w).unwrap_err().to_string();
    assert!(err.contains("bf16") && err.contains("wgpu"), "{err}");
    // Ops without a policy still run.
    assert_eq!(ops::try_relu(&x).unwrap().device(), Device::Wgpu);
}

#[test]
fn fake_gpu_tensors_need_no_adapter() {
    let (y, memory) = fake::fake(|| {
        let x = ops::try_full(&[256, 1024], 0.0, DType::F32, Device::Wgpu).unwrap();
        let w = ops::try_randn(&[1024, 512], DType::F32, Device::Wgpu).unwrap();
        ops::try_relu(&ops::try_matmul(&x, &w).unwrap()).unwrap()
    });
    assert!(y.is_fake() && y.device() == Device::Wgpu && y.shape() == [256, 512]);
    let gpu = memory.device(Device::Wgpu);
    assert_eq!(
        gpu.peak,
        (256 * 1024 + 1024 * 512 + 2 * 256 * 512) * 4,
        "{memory:?}"
    );
}
