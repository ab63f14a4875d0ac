//! `scale`'s GPU kernel (feature `wgpu`) against its CPU kernel, on whatever adapter wgpu finds
//! (CI: Mesa's software Vulkan driver here, its GL driver through `switchyard-tests-wgpu`). Skips,
//! saying so, without an adapter, unless `REQUIRE_GPU=1`.
#![cfg(feature = "wgpu")]

use switchyard::ops::{expand, narrow, select};
use switchyard::{Device, ErrorKind, Tensor};
use switchyard_example_downstream::scale;

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
