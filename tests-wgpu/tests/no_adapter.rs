//! Without an adapter, GPU calls are errors that say so (and `try_` forms never panic), while the
//! rest of the library works. The test runs itself again in a child process whose `WGPU_BACKEND`
//! names a backend that is not compiled in, since the context is made once per process.

use std::process::Command;

use switchyard::ops::{add, try_full, try_to};
use switchyard::{DType, Device, ErrorKind, Tensor};
use switchyard_backends as _;

const CHILD: &str = "SWITCHYARD_NO_ADAPTER_CHILD";
const TEST: &str = "gpu_calls_without_an_adapter_are_errors_and_the_cpu_still_works";

/// A kernel that never compiles here: every launch fails first for want of an adapter.
static UNUSED: switchyard_backends::wgpu::Kernel =
    switchyard_backends::wgpu::Kernel::new(&["not WGSL"], "unused", 1);

/// A wgpu backend that this platform does not have.
const ABSENT_BACKEND: &str = if cfg!(target_os = "macos") {
    "dx12"
} else {
    "metal"
};

#[test]
fn gpu_calls_without_an_adapter_are_errors_and_the_cpu_still_works() {
    if std::env::var_os(CHILD).is_none() {
        let exe = std::env::current_exe().unwrap();
        let output = Command::new(exe)
            .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("WGPU_BACKEND", ABSENT_BACKEND)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "the child failed:\n{text}");
        assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
        return;
    }
    let cpu = Tensor::vector(&[1.0, 2.0]);
    for error in [
        try_full(&[2], 1.0, DType::F32, Device::Wgpu).unwrap_err(),
        try_to(&cpu, Device::Wgpu).unwrap_err(),
        switchyard_backends::wgpu::adapter_info().unwrap_err(),
        // The kernel API: the context, and a downstream crate's kernel.
        switchyard_backends::wgpu::Gpu::get("test::no_adapter").unwrap_err(),
        switchyard_backends::wgpu::elementwise(
            "test::no_adapter",
            &UNUSED,
            &[&cpu],
            &[2],
            DType::F32,
            Default::default(),
        )
        .unwrap_err(),
    ] {
        assert!(matches!(error.kind(), ErrorKind::Kernel { .. }), "{error}");
        assert!(error.to_string().contains("no wgpu adapter: "), "{error}");
        println!("{error}");
    }
    assert!(switchyard_backends::wgpu::synchronize().is_err());
    assert_eq!(switchyard_backends::wgpu::pool_stats(), None);
    assert_eq!(add(&cpu, &cpu).to_vec::<f32>(), [2.0, 4.0]);
}
