//! Which adapter the GPU backend takes: `WGPU_ADAPTER_NAME` by name (an error naming the
//! adapters found when none matches), and, on a machine without a Vulkan driver, the GL backend
//! through EGL. Each case runs in a child process, since the context is made once per process.

use std::process::Command;

use switchyard::ops::try_to;
use switchyard::{Device, Tensor};
use switchyard_tests_wgpu::gpu_or_skip;

const CHILD: &str = "SWITCHYARD_ADAPTER_CHILD";

/// Runs the child half of this file in a process with `env`; returns its stdout (the adapter
/// line it printed, or the error).
fn child(env: &[(&str, &str)]) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "child_reports_its_adapter",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env_remove("WGPU_BACKEND")
        .env_remove("WGPU_ADAPTER_NAME");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout
        .lines()
        .find_map(|l| l.split_once("adapter: ").map(|(_, reported)| reported))
        .unwrap_or_else(|| panic!("no adapter line in {stdout}"))
        .to_owned()
}

/// The child half: prints `adapter: <name> (<backend>)` or `adapter: error: <error>`, and checks
/// that a GPU call without an adapter is an error, not a panic.
#[test]
fn child_reports_its_adapter() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    match switchyard_backends::wgpu::adapter_info() {
        Ok(info) => println!("adapter: {} ({})", info.name, info.backend),
        Err(error) => {
            let moved = try_to(&Tensor::vector(&[1.0]), Device::Wgpu);
            assert!(moved.unwrap_err().to_string().contains("no wgpu adapter"));
            println!("adapter: error: {error}");
        }
    }
}

#[test]
fn an_adapter_name_that_matches_nothing_is_an_error_naming_the_adapters() {
    let reported = child(&[("WGPU_ADAPTER_NAME", "no such adapter")]);
    assert!(
        reported.starts_with(
            "error: op `wgpu::adapter_info`: no wgpu adapter: WGPU_ADAPTER_NAME=no such adapter \
             matches no adapter; found: "
        ),
        "{reported}"
    );
}

#[test]
fn an_adapter_name_picks_the_adapter_ignoring_case() {
    if !gpu_or_skip("an_adapter_name_picks_the_adapter_ignoring_case") {
        return;
    }
    let info = switchyard_backends::wgpu::adapter_info().unwrap();
    let part = info.name.chars().take(6).collect::<String>().to_uppercase();
    for backend in ["vulkan", "gl"] {
        let reported = child(&[("WGPU_ADAPTER_NAME", &part), ("WGPU_BACKEND", backend)]);
        if reported.starts_with("error:") {
            // This machine has no such backend (or no adapter of that name on it).
            assert!(reported.contains("matches no adapter"), "{reported}");
            continue;
        }
        assert!(reported.to_uppercase().starts_with(&part), "{reported}");
        assert!(reported.ends_with(&format!("({backend})")), "{reported}");
    }
}

/// A fresh Linux machine with Mesa but no Vulkan driver: the Vulkan loader finds no driver (here,
/// because its driver list points nowhere), and the GL backend serves through EGL. With
/// `REQUIRE_GPU=1` (CI installs Mesa's EGL) it must; elsewhere a missing EGL skips.
#[cfg(target_os = "linux")]
#[test]
fn without_a_vulkan_driver_the_gl_backend_serves() {
    let reported = child(&[
        ("VK_ICD_FILENAMES", "/nonexistent/icd.json"),
        ("VK_DRIVER_FILES", "/nonexistent/icd.json"),
    ]);
    if reported.starts_with("error:") && std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1") {
        panic!("REQUIRE_GPU=1 but without Vulkan drivers: {reported}");
    }
    if !reported.starts_with("error:") {
        assert!(reported.ends_with("(gl)"), "{reported}");
    }
}
