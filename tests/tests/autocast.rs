//! Autocast: each policy class casts as PyTorch's autocast does, per device, nested guards
//! restore, autograd records the casts (gradients reach `f32` parameters in `f32`), a downstream
//! op declares its own policy and an op without one is untouched.

use switchyard::autocast::{Policy, autocast, autocast_dtype, below_autocast, cast};
use switchyard::ops;
use switchyard::{DType, Device, Result, Tensor, kernel, op};
use switchyard_backends as _; // links the CPU and meta kernels

fn f32s(shape: &[usize]) -> Tensor {
    let n = shape.iter().product::<usize>();
    Tensor::from_vec((0..n).map(|i| i as f32 * 0.25 - 1.0).collect(), shape).unwrap()
}

fn cast_to(x: &Tensor, dtype: DType) -> Tensor {
    ops::try_to_dtype(x, dtype).unwrap()
}

#[test]
fn each_policy_class_casts_as_pytorchs_lists_say() {
    let (x, w) = (f32s(&[4, 3]), f32s(&[3, 5]));
    let _bf16 = autocast(Device::Cpu, DType::BF16).unwrap();
    // Lower: matmul runs in bf16.
    let y = ops::try_matmul(&x, &w).unwrap();
    assert_eq!(y.dtype(), DType::BF16);
    // Float32: sensitive ops take bf16 in and give f32 out.
    for out in [
        ops::try_exp(&y).unwrap(),
        ops::try_log(&y).unwrap(),
        ops::try_sum(&y).unwrap(),
        ops::try_mean(&y).unwrap(),
        ops::try_sum_dim(&y, &[1], false).unwrap(),
        ops::try_softmax(&y, 1).unwrap(),
        ops::try_log_softmax(&y, 1).unwrap(),
        ops::try_cross_entropy(&y, &Tensor::from_vec(vec![0i64, 1, 2, 3], &[4]).unwrap()).unwrap(),
    ] {
        assert_eq!(out.dtype(), DType::F32);
    }
    // Promote: a bf16 and an f32 meet in f32; two bf16 stay bf16.
    assert_eq!(ops::try_add(&y, &f32s(&[5])).unwrap().dtype(), DType::F32);
    assert_eq!(ops::try_mul(&y, &y).unwrap().dtype(), DType::BF16);
    // f16 and bf16 meet in f32, as PyTorch promotes them.
    let h = cast_to(&f32s(&[5]), DType::F16);
    assert_eq!(ops::try_sub(&y, &h).unwrap().dtype(), DType::F32);
    // No policy: untouched.
    assert_eq!(ops::try_relu(&y).unwrap().dtype(), DType::BF16);
    // f64 is never cast.
    let d = cast_to(&x, DType::F64);
    assert_eq!(
        ops::try_matmul(&d, &cast_to(&w, DType::F64))
            .unwrap()
            .dtype(),
        DType::F64
    );
}

#[test]
fn autocast_is_per_device_nests_and_restores() {
    assert_eq!(autocast_dtype(Device::Cpu), None);
    {
        let _f16 = autocast(Device::Cpu, DType::F16).unwrap();
        assert_eq!(autocast_dtype(Device::Cpu), Some(DType::F16));
        {
            let _bf16 = autocast(Device::Cpu, DType::BF16).unwrap();
            let y = ops::try_matmul(&f32s(&[2, 2]), &f32s(&[2, 2])).unwrap();
            assert_eq!(y.dtype(), DType::BF16);
        }
        assert_eq!(autocast_dtype(Device::Cpu), Some(DType::F16));
        // Another device's tensors are not cast.
        let m = ops::try_matmul(
            &Tensor::empty_meta(&[2, 3], DType::F32).unwrap(),
            &Tensor::empty_meta(&[3, 2], DType::F32).unwrap(),
        )
        .unwrap();
        assert_eq!(m.dtype(), DType::F32);
    }
    assert_eq!(autocast_dtype(Device::Cpu), None);
    let y = ops::try_matmul(&f32s(&[2, 2]), &f32s(&[2, 2])).unwrap();
    assert_eq!(y.dtype(), DType::F32, "off again");

    let err = autocast(Device::Cpu, DType::F64).unwrap_err();
    assert!(err.to_string().contains("bf16 or f16"), "{err}");
}

#[test]
fn autograd_records_the_casts_and_gradients_reach_f32_parameters_in_f32() {
    let mut w = f32s(&[3, 5]);
    w.requires_grad_(true);
    let x = f32s(&[4, 3]);
    let loss = {
        let _bf16 = autocast(Device::Cpu, DType::BF16).unwrap();
        let logits = ops::try_matmul(&x, &w).unwrap();
        assert_eq!(logits.grad_fn(), Some("matmul"));
        ops::try_sum(&logits).unwrap()
    };
    assert_eq!(loss.dtype(), DType::F32);
    loss.try_backward().unwrap();
    let g = w.grad().expect("a gradient");
    assert_eq!(g.dtype(), DType::F32);
    // d Σ(x·w) / dw = xᵀ·1: each row of w gets the column sums of x (bf16-rounded products).
    let x_values = x.to_vec::<f32>();
    let column_sums: Vec<f32> = (0..3)
        .map(|k| (0..4).map(|i| x_values[i * 3 + k]).sum())
        .collect();
    for (i, v) in g.to_vec::<f32>().iter().enumerate() {
        let want = column_sums[i / 5];
        assert!(
            (v - want).abs() <= want.abs() / 64.0 + 1e-3,
            "{v} vs {want}"
        );
    }
}

/// A downstream op with its own policy (`Lower`), and one without any.
#[op(name = "autocast_tests::scaled_matmul")]
pub fn scaled_matmul(x: &Tensor, y: &Tensor) -> Tensor {
    ops::try_mul(&ops::try_matmul(x, y)?, &Tensor::scalar(2.0))?
}

#[kernel(op = scaled_matmul, key = Autocast)]
fn scaled_matmul_autocast(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let [x, y] = cast(Policy::Lower, [x, y])?;
    below_autocast(|| try_scaled_matmul(&x, &y))
}

#[op(name = "autocast_tests::plain")]
pub fn plain(x: &Tensor) -> Tensor;

#[kernel(op = plain, key = CpuNaive)]
fn plain_naive(x: &Tensor) -> Tensor {
    x.clone()
}

#[test]
fn a_downstream_op_declares_its_policy_and_an_op_without_one_is_untouched() {
    let _f16 = autocast(Device::Cpu, DType::F16).unwrap();
    let (x, w) = (f32s(&[2, 3]), f32s(&[3, 2]));
    // Below autocast, the body's ops run as they are: matmul of f16 stays f16, and the f32
    // scalar is a 0-d operand, which does not widen a tensor (PyTorch's rule).
    let y = try_scaled_matmul(&x, &w).unwrap();
    assert_eq!(y.dtype(), DType::F16);
    assert_eq!(try_plain(&x).unwrap().dtype(), DType::F32);
}
