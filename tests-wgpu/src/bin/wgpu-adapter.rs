//! Prints the wgpu adapter the GPU backend would use, or why there is none (then exits with 1):
//! what `.ci/run` shows before the GPU tests.

use std::process::ExitCode;

fn main() -> ExitCode {
    match switchyard_backends::wgpu::adapter_info() {
        Ok(info) => {
            println!(
                "wgpu adapter: {} ({:?}, {:?}; driver: {} {})",
                info.name, info.backend, info.device_type, info.driver, info.driver_info
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
