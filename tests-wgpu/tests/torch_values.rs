//! The call forms and answers of `tests/tests/torch_values.rs`, `scalar_operands.rs` and
//! `matmul_batched.rs` on the GPU: numbers as operands, `relu_backward` at NaN, `matmul` of 1-D
//! and batched operands and its gradient, each against the naive CPU backend.

use switchyard::ops;
use switchyard::{DType, Device, Tensor};
use switchyard_tests_wgpu::{gpu, gpu_or_skip, naive, tensor};

fn f32s(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).unwrap()
}

#[test]
fn numbers_as_operands_on_the_gpu() {
    if !gpu_or_skip("numbers_as_operands_on_the_gpu") {
        return;
    }
    let x = gpu(&f32s(&[1.0, 2.0, 0.1], &[3]));
    let r = &x + 1.5;
    assert_eq!((r.device(), r.dtype()), (Device::Wgpu, DType::F32));
    assert_eq!(r.to_vec::<f32>(), [2.5, 3.5, 0.1 + 1.5]);
    assert_eq!((2 * &x).to_vec::<f32>(), [2.0, 4.0, 0.2]);
    assert_eq!((1.0 - &x).to_vec::<f32>(), [0.0, -1.0, 0.9]);
    // WGSL's division is within 2.5 ulp, not correctly rounded.
    let halves = ops::div_scalar(&x, 2).to_vec::<f32>();
    for (h, w) in halves.iter().zip([0.5f32, 1.0, 0.05]) {
        assert!((h - w).abs() <= 3.0 * f32::EPSILON * w, "{h} vs {w}");
    }
    assert_eq!(
        ops::eq_scalar(&x, 0.1).to_vec::<bool>(),
        [false, false, true]
    );
    let c = gpu(&Tensor::from_vec(vec![true, false, true], &[3]).unwrap());
    let w = ops::where_scalar(&c, &x, 0.0);
    assert_eq!(w.device(), Device::Wgpu);
    assert_eq!(w.to_vec::<f32>(), [1.0, 0.0, 0.1]);
}

#[test]
fn relu_backward_passes_the_gradient_where_the_output_is_nan_on_the_gpu() {
    if !gpu_or_skip("relu_backward_passes_the_gradient_where_the_output_is_nan_on_the_gpu") {
        return;
    }
    let grad = f32s(&[1.0, 2.0, f32::NAN, 4.0, 5.0], &[5]);
    let out = f32s(&[f32::NAN, 0.0, -1.0, 5.0, f32::NEG_INFINITY], &[5]);
    let got = ops::relu_backward(&gpu(&grad), &gpu(&out));
    assert_eq!(got.device(), Device::Wgpu);
    assert_eq!(got.to_vec::<f32>(), [1.0, 0.0, 0.0, 4.0, 0.0]);
}

#[test]
fn batched_matmul_on_the_gpu_matches_the_naive_backend() {
    if !gpu_or_skip("batched_matmul_on_the_gpu_matches_the_naive_backend") {
        return;
    }
    let shapes: [(&[usize], &[usize]); 6] = [
        (&[5], &[5]),
        (&[3, 5], &[5]),
        (&[5], &[5, 7]),
        (&[2, 3, 5], &[2, 5, 7]),
        (&[2, 1, 3, 5], &[4, 5, 7]),
        (&[5], &[2, 5, 7]),
    ];
    for (i, (xs, ys)) in shapes.into_iter().enumerate() {
        let (x, y) = (
            tensor(xs, 2 * i as u64, 2.0),
            tensor(ys, 2 * i as u64 + 1, 2.0),
        );
        let want = naive(|| ops::matmul(&x, &y));
        let got = ops::matmul(&gpu(&x), &gpu(&y));
        assert_eq!(got.device(), Device::Wgpu, "{xs:?} @ {ys:?}");
        assert_eq!(got.shape(), want.shape(), "{xs:?} @ {ys:?}");
        for (g, w) in got.to_vec::<f32>().iter().zip(want.to_vec::<f32>()) {
            assert!(
                (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
                "{xs:?} @ {ys:?}: {g} vs {w}"
            );
        }
    }
}

#[test]
fn batched_matmul_gradients_on_the_gpu() {
    if !gpu_or_skip("batched_matmul_gradients_on_the_gpu") {
        return;
    }
    let (x, y) = (tensor(&[2, 1, 3, 5], 7, 1.0), tensor(&[5], 8, 1.0));
    let grads = |x: &Tensor, y: &Tensor| {
        let (mut x, mut y) = (x.clone(), y.clone());
        x.requires_grad_(true);
        y.requires_grad_(true);
        ops::sum(&ops::matmul(&x, &y)).backward();
        (
            x.grad().unwrap().to_vec::<f32>(),
            y.grad().unwrap().to_vec::<f32>(),
        )
    };
    let want = naive(|| grads(&x, &y));
    let got = grads(&gpu(&x), &gpu(&y));
    for (g, w) in got.0.iter().chain(&got.1).zip(want.0.iter().chain(&want.1)) {
        assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} vs {w}");
    }
}
