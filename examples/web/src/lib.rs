//! The spirals MLP of `examples/train.rs`, trained in the browser: the same training code
//! (`switchyard_examples::training`) on the CPU backend, compiled for `wasm32-unknown-unknown`
//! and bound to JavaScript with wasm-bindgen (`bindings.rs`, on wasm32 only). The page
//! (`www/index.html`, `www/main.js`) runs one epoch per task of the browser's event loop and
//! redraws the loss curve and the decision boundary after each; `.ci/web` builds it and checks
//! it in headless Chromium.
//!
//! Natively this crate is the same functions, which its tests call.

use switchyard::{DTypeColumn, Device, DispatchKey, SlotOrigin};
use switchyard_examples::mlp::SPIRALS_WIDTHS;
use switchyard_examples::spirals::{Spirals, SpiralsConfig};
use switchyard_examples::training::{Settings, Training, TrainingError};

#[cfg(target_arch = "wasm32")]
mod bindings;

/// The page's default number of epochs: 97% training accuracy or more (98.9% natively).
pub const DEFAULT_EPOCHS: usize = 20;

/// A fresh training of the spirals MLP on the CPU over `epochs` epochs, with `train`'s
/// defaults otherwise (2 × 1,500 points, batches of 64, Adam from 0.01 along a cosine).
pub fn new_training(epochs: usize) -> Result<Training, TrainingError> {
    let settings = Settings {
        epochs,
        ..Settings::default()
    };
    Training::new(
        Spirals::generate(SpiralsConfig::default()),
        Device::Cpu,
        settings,
    )
}

/// The picture of `training` so far: its loss curve and its decision boundary, as SVG.
pub fn picture(training: &Training) -> Result<String, TrainingError> {
    let title = format!(
        "MLP {SPIRALS_WIDTHS:?} on two spirals ({} points), epoch {} on the CPU: loss per \
         epoch, and the decision boundary",
        training.data().len(),
        training.losses().len(),
    );
    training.picture(&title, &[training.curve()])
}

/// Which CPU kernels serve `f32` arithmetic in this build, as the dispatch table of `add` says:
/// SIMD kernels where the target has them (`simd128` on wasm32 when enabled at compile time),
/// else the naive ones.
pub fn cpu_kernels() -> String {
    let simd = switchyard::op_named("switchyard::add").is_ok_and(|add| {
        matches!(
            add.slot_in(DispatchKey::CpuSimd, DTypeColumn::F32),
            Ok(SlotOrigin::Kernel(_))
        )
    });
    let target = if cfg!(target_arch = "wasm32") {
        if cfg!(target_feature = "simd128") {
            "WebAssembly with simd128"
        } else {
            "WebAssembly without simd128"
        }
    } else {
        std::env::consts::ARCH
    };
    // A call into the backends crate, not only its name: in a WebAssembly library module
    // (wasm-bindgen's), even LTO leaves out a crate that nothing calls, kernels and all.
    let threads = switchyard_backends::num_threads();
    let on = if threads == 1 {
        "on the calling thread".to_string()
    } else {
        format!("on {threads} threads")
    };
    if simd {
        format!("the CPU backend's SIMD kernels where it has them ({target}), {on}")
    } else {
        format!("the CPU backend's naive kernels ({target}: no SIMD kernel is compiled in), {on}")
    }
}
