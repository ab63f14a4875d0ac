//! Meta tensors and fake mode: shapes, dtypes and errors without data; views, in-place ops and
//! autograd on them; fake tensors that report their device; the memory a fake run counts.

use switchyard::fake::{self, FakeMode};
use switchyard::ops;
use switchyard::{DType, Device, DispatchKey, ErrorKind, Tensor, op};
use switchyard_backends as _; // links the CPU and meta kernels

fn meta(shape: &[usize], dtype: DType) -> Tensor {
    Tensor::empty_meta(shape, dtype).unwrap()
}

#[test]
fn meta_ops_compute_shapes_and_dtypes_and_refuse_what_the_cpu_refuses() {
    let x = meta(&[4, 1, 3], DType::F32);
    let y = meta(&[5, 1], DType::F64);
    let z = ops::try_add(&x, &y).unwrap();
    assert_eq!(
        (z.shape(), z.dtype(), z.device()),
        (&[4, 5, 3][..], DType::F64, Device::Meta)
    );
    assert!(z.is_meta() && !z.is_fake());

    let m = ops::try_matmul(&meta(&[7, 2, 3], DType::F32), &meta(&[3, 5], DType::F32)).unwrap();
    assert_eq!(m.shape(), [7, 2, 5]);
    let s = ops::try_sum_dim(&m, &[-1], true).unwrap();
    assert_eq!(s.shape(), [7, 2, 1]);
    assert_eq!(ops::try_argmax(&m, 1, false).unwrap().dtype(), DType::I64);

    // The same refusal, word for word, as the CPU gives for the same shapes.
    let cpu = |shape: &[usize]| ops::try_full(shape, 1.0, DType::F32, Device::Cpu).unwrap();
    let on_cpu = ops::try_matmul(&cpu(&[2, 3]), &cpu(&[4, 5])).unwrap_err();
    let on_meta =
        ops::try_matmul(&meta(&[2, 3], DType::F32), &meta(&[4, 5], DType::F32)).unwrap_err();
    assert_eq!(on_meta.kind(), on_cpu.kind());
    assert_eq!(on_meta.to_string(), on_cpu.to_string());
}

#[test]
fn views_and_in_place_ops_work_on_meta_tensors() {
    let x = meta(&[2, 3, 4], DType::F32);
    let t = x.try_transpose(0, 2).unwrap();
    assert_eq!((t.shape(), t.strides()), (&[4, 3, 2][..], &[1, 4, 12][..]));
    assert!(t.same_storage(&x));
    let c = ops::try_contiguous(&t).unwrap();
    assert!(c.is_contiguous() && !c.same_storage(&x));

    let mut y = meta(&[2, 3, 4], DType::F32);
    let before = y.version();
    ops::try_add_(&mut y, &meta(&[4], DType::F32)).unwrap();
    assert_eq!(y.version(), before + 1, "an in-place op counts one version");
    let err = ops::try_add_(&mut y, &meta(&[5], DType::F32)).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Shape { .. }), "{err}");
}

#[test]
fn meta_tensors_have_no_data_to_read_or_move() {
    let x = meta(&[3], DType::F32);
    let err = x.try_to_vec::<f32>().unwrap_err();
    assert!(err.to_string().contains("no data"), "{err}");
    let err = x.try_to(Device::Cpu).unwrap_err();
    assert!(err.to_string().contains("no data to move to cpu"), "{err}");
    let cpu = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let moved = cpu.try_to(Device::Meta).unwrap();
    assert_eq!((moved.device(), moved.shape()), (Device::Meta, &[2][..]));
}

#[test]
fn backward_of_a_meta_loss_gives_meta_gradients_of_the_parameters_shapes() {
    let mut w = meta(&[3, 4], DType::F32);
    w.requires_grad_(true);
    let x = meta(&[8, 3], DType::F32);
    let loss = ops::try_mean(&ops::try_relu(&ops::try_matmul(&x, &w).unwrap()).unwrap()).unwrap();
    assert_eq!(loss.grad_fn(), Some("mean"));
    loss.try_backward().unwrap();
    let g = w.grad().expect("a gradient");
    assert_eq!(
        (g.shape(), g.dtype(), g.device()),
        (&[3, 4][..], DType::F32, Device::Meta)
    );
}

#[test]
fn fake_mode_makes_fake_tensors_that_report_their_device() {
    let ((y, moved), memory) = fake::fake(|| {
        let w = ops::try_randn(&[1 << 16, 1 << 15], DType::F32, Device::Cpu).unwrap();
        let x = ops::try_full(&[4, 1 << 16], 1.0, DType::F32, Device::Cpu).unwrap();
        assert!(w.is_fake() && w.device() == Device::Cpu);
        let y = ops::try_matmul(&x, &w).unwrap();
        // Moving to the GPU needs no GPU: the fake result reports wgpu.
        let moved = y.try_to(Device::Wgpu).unwrap();
        (y, moved)
    });
    assert!(y.is_fake() && y.device() == Device::Cpu && y.shape() == [4, 1 << 15]);
    assert!(moved.is_fake() && moved.device() == Device::Wgpu);
    assert!(!moved.same_storage(&y), "a move makes a storage of its own");
    let cpu = memory.device(Device::Cpu);
    // The 8 GiB of weights and the activations, never allocated.
    assert!(cpu.peak >= 8 << 30, "{memory:?}");
    assert_eq!(memory.device(Device::Wgpu).total, 4 * (1 << 15) * 4);
}

#[test]
fn real_tensors_meet_fake_ones_as_fake_and_cost_nothing() {
    let real = Tensor::from_vec(vec![1.0f32; 1000], &[1000]).unwrap();
    let mode = FakeMode::enter();
    let out = ops::try_mul(&real, &real).unwrap();
    assert!(out.is_fake());
    let cpu = mode.memory().device(Device::Cpu);
    assert_eq!(cpu.allocations, 1, "only the result: {cpu:?}");
    drop(mode);
    assert_eq!(real.to_vec::<f32>()[0], 1.0, "the real tensor is untouched");
}

#[test]
fn fake_memory_follows_drops() {
    let mode = FakeMode::enter();
    let a = ops::try_full(&[1024], 0.0, DType::F32, Device::Cpu).unwrap();
    let b = ops::try_exp(&a).unwrap();
    let two = mode.memory().device(Device::Cpu);
    assert_eq!((two.live, two.peak, two.allocations), (8192, 8192, 2));
    drop((a, b));
    let none = mode.memory().device(Device::Cpu);
    assert_eq!((none.live, none.peak, none.total), (0, 8192, 8192));
}

/// An op with neither a meta kernel nor a body.
#[op(name = "meta_tests::cpu_only")]
pub fn cpu_only(x: &Tensor) -> Tensor;

#[switchyard::kernel(op = cpu_only, key = CpuNaive)]
fn cpu_only_naive(x: &Tensor) -> Tensor {
    x.clone()
}

#[test]
fn an_op_without_a_meta_kernel_or_body_is_an_error_naming_it() {
    let err = try_cpu_only(&meta(&[2], DType::F32)).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::MissingKernel { .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("meta_tests::cpu_only") && message.contains("Meta"),
        "{message}"
    );
    let _ = DispatchKey::Meta;
}
