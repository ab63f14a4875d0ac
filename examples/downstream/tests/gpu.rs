//! `scale`'s and `complex64`'s GPU kernels (feature `wgpu`) against their CPU kernels, on whatever adapter wgpu finds
//! (CI: Mesa's software Vulkan driver here, its GL driver through `switchyard-tests-wgpu`). Skips,
//! saying so, without an adapter, unless `REQUIRE_GPU=1`.
#![cfg(feature = "wgpu")]

use switchyard::ops::{add, expand, mul, narrow, select};
use switchyard::{Device, ErrorKind, Tensor};
use switchyard_example_downstream::{COMPLEX64, complex, complex_values, scale};

/// Whether a GPU adapter exists; if not, says the test is skipped, or panics with `REQUIRE_GPU=1`.
fn gpu_or_skip(test: &str) -> bool {
    match switchyard_backends::wgpu::adapter_info() {
        Ok(_) => true,
        Err(error) if std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("{test}: REQUIRE_GPU=1 but {error}")
        }
        Err(error) => {
            eprintln!("skipping {test}: {error}");
            false
        }
    }
}

#[test]
fn scale_on_the_gpu_matches_the_cpu_for_every_layout() {
    if !gpu_or_skip("scale_on_the_gpu_matches_the_cpu_for_every_layout") {
        return;
    }
    // 1000 elements: four workgroups, the last one partly past the end.
    let x = Tensor::from_fn(&[40, 25], |i| (i as f32 - 500.0) * 0.37);
    let on_gpu = x.to(Device::Wgpu);
    let views: [(&str, Tensor, Tensor); 5] = [
        ("contiguous", x.clone(), on_gpu.clone()),
        ("transposed", x.t(), on_gpu.t()),
        ("narrowed", narrow(&x, 1, 3, 7), narrow(&on_gpu, 1, 3, 7)),
        (
            "broadcast",
            expand(&select(&x, 0, 2), &[3, 25]),
            expand(&select(&on_gpu, 0, 2), &[3, 25]),
        ),
        ("empty", narrow(&x, 0, 0, 0), narrow(&on_gpu, 0, 0, 0)),
    ];
    for (what, cpu, gpu) in views {
        let got = scale(&gpu, -1.5);
        assert_eq!(got.device(), Device::Wgpu, "{what}");
        assert!(got.is_contiguous(), "{what}");
        assert_eq!(got.shape(), cpu.shape(), "{what}");
        // One product per element, correctly rounded on both sides.
        assert_eq!(
            got.to_vec::<f32>(),
            scale(&cpu, -1.5).to_vec::<f32>(),
            "{what}"
        );
    }
}

#[test]
fn scale_on_the_gpu_serves_f32_only_and_says_so() {
    if !gpu_or_skip("scale_on_the_gpu_serves_f32_only_and_says_so") {
        return;
    }
    let ints = Tensor::from_vec::<i64>(vec![1, 2, 3], &[3])
        .unwrap()
        .to(Device::Wgpu);
    let error = switchyard_example_downstream::try_scale(&ints, 2.0).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::MissingKernel { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("i64"), "{error}");
}

/// A `complex64` tensor moved to the GPU: its storage's `i64` words moved, seen as complex64
/// again there (`to` copies built-in dtypes; a user dtype's view is taken on each side).
fn complex_on_gpu(z: &Tensor) -> Tensor {
    z.as_storage_dtype()
        .to(Device::Wgpu)
        .as_user_dtype(COMPLEX64)
        .unwrap()
}

#[test]
fn complex64_add_and_mul_on_the_gpu_match_the_cpu() {
    if !gpu_or_skip("complex64_add_and_mul_on_the_gpu_match_the_cpu") {
        return;
    }
    // 300 elements: two workgroups; values with cancellation in `ac − bd`.
    let pairs = |seed: f32| -> Vec<(f32, f32)> {
        (0..300)
            .map(|i| {
                let t = i as f32 * 0.73 + seed;
                (t.sin() * 40.0, (t * 1.9).cos() * 3.0)
            })
            .collect()
    };
    let x = complex(&pairs(0.0), &[20, 15]).unwrap();
    let y = complex(&pairs(5.0), &[20, 15]).unwrap();
    let row = complex(&pairs(9.0)[..15], &[15]).unwrap();
    let (gx, gy, grow) = (complex_on_gpu(&x), complex_on_gpu(&y), complex_on_gpu(&row));
    let cases: [(&str, Tensor, Tensor, Tensor, Tensor); 3] = [
        ("contiguous", x.clone(), y.clone(), gx.clone(), gy.clone()),
        ("transposed", x.t(), y.t(), gx.t(), gy.t()),
        ("broadcast row", x.clone(), row, gx.clone(), grow),
    ];
    for (what, a, b, ga, gb) in cases {
        let sum = add(&ga, &gb);
        assert_eq!(sum.device(), Device::Wgpu, "{what}");
        assert_eq!(sum.user_dtype(), Some(COMPLEX64), "{what}");
        // One rounding per part, on both sides: exact.
        assert_eq!(
            complex_values(&sum).unwrap(),
            complex_values(&add(&a, &b)).unwrap(),
            "{what}"
        );
        // `ac − bd`: a GPU may fuse one product into the subtraction (one rounding fewer), so
        // parts agree to a few ulps of the products' size, not bit for bit.
        let (got, want) = (
            complex_values(&mul(&ga, &gb)).unwrap(),
            complex_values(&mul(&a, &b)).unwrap(),
        );
        for (i, ((gr, gi), (wr, wi))) in got.iter().zip(&want).enumerate() {
            let scale = 40.0 * 40.0 * f32::EPSILON * 4.0;
            assert!(
                (gr - wr).abs() <= scale && (gi - wi).abs() <= scale,
                "{what}: element {i}: GPU ({gr}, {gi}), CPU ({wr}, {wi})"
            );
        }
    }
}

#[test]
fn complex64_on_the_gpu_refuses_what_it_does_not_serve() {
    if !gpu_or_skip("complex64_on_the_gpu_refuses_what_it_does_not_serve") {
        return;
    }
    let z = complex_on_gpu(&complex(&[(1.0, 2.0)], &[1]).unwrap());
    let err = switchyard::ops::try_neg(&z).unwrap_err().to_string();
    assert!(err.contains("complex64") && err.contains("Wgpu"), "{err}");
    let real = Tensor::vector(&[1.0]).to(Device::Wgpu);
    let err = switchyard::ops::try_mul(&z, &real).unwrap_err().to_string();
    assert!(
        err.contains("complex64 is computed with complex64 only"),
        "{err}"
    );
}
