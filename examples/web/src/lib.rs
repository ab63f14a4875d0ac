//! The spirals MLP of `examples/train.rs`, trained in the browser: the same training code
//! (`switchyard_examples::training`) compiled for `wasm32-unknown-unknown` and bound to
//! JavaScript with wasm-bindgen (`bindings.rs`, on wasm32 only). The page (`www/index.html`,
//! `www/main.js`) trains on the CPU backend, then, where the browser grants a WebGPU adapter, on
//! the wgpu backend through WebGPU; one epoch per task of the browser's event loop, the loss curve
//! and the decision boundary redrawn after each. On WebGPU it reads results back with the async
//! reads (`try_to_vec_async`), since a page cannot wait for its GPU. `.ci/web` builds it and
//! checks it in headless Chromium.
//!
//! Natively this crate is the same functions, which its tests call.

use switchyard::{DTypeColumn, Device, DispatchKey, SlotOrigin};
use switchyard_examples::mlp::SPIRALS_WIDTHS;
use switchyard_examples::spirals::{Spirals, SpiralsConfig};
use switchyard_examples::training::{Settings, Training, TrainingError};

#[cfg(target_arch = "wasm32")]
mod bindings;

/// The page's default number of epochs: 97% training accuracy or more (98.3% natively).
pub const DEFAULT_EPOCHS: usize = 20;

/// The page's batches: larger than `train`'s 64, because a GPU's time per step goes to launching
/// some two hundred small kernels, whatever the batch (on a software WebGPU adapter, most of a
/// second), so fewer, larger steps train in a quarter of the time.
pub const BATCH: usize = 256;

/// Adam's initial learning rate for [`BATCH`]-point steps (`train`'s 0.01 suits its 64).
pub const LEARNING_RATE: f64 = 0.04;

/// A fresh training of the spirals MLP on `device` over `epochs` epochs of [`BATCH`]-point
/// steps (2 × 1,500 points, Adam from [`LEARNING_RATE`] along a cosine, as in `train`). For
/// `Device::Wgpu` on the web, await [`init_gpu`] first.
pub fn new_training(epochs: usize, device: Device) -> Result<Training, TrainingError> {
    let settings = Settings {
        epochs,
        batch: BATCH,
        lr: LEARNING_RATE,
        autocast: None,
    };
    Training::new(
        Spirals::generate(SpiralsConfig::default()),
        device,
        settings,
    )
}

/// Starts the wgpu backend without blocking (what a page must do before its first GPU op) and
/// describes its adapter; or why there is none.
pub async fn init_gpu() -> Result<String, TrainingError> {
    let info = switchyard_backends::wgpu::init().await?;
    // A browser does not name its adapter to a page.
    Ok(if info.name.is_empty() {
        format!("the browser's adapter ({})", info.backend)
    } else {
        format!("{} ({})", info.name, info.backend)
    })
}

/// The picture of `training` so far: its loss curve and its decision boundary, as SVG, read back
/// without blocking (on the CPU it is ready at once).
pub async fn picture(training: &Training) -> Result<String, TrainingError> {
    let on = match training.device() {
        Device::Cpu => "the CPU".to_owned(),
        Device::Wgpu if cfg!(target_arch = "wasm32") => "WebGPU".to_owned(),
        Device::Wgpu => "the GPU (wgpu)".to_owned(),
        other => other.to_string(),
    };
    let title = format!(
        "MLP {SPIRALS_WIDTHS:?} on two spirals ({} points), epoch {} on {on}: loss per epoch, \
         and the decision boundary",
        training.data().len(),
        training.losses().len(),
    );
    training.picture_async(&title, &[training.curve()]).await
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

/// The error a loss gets for a target that is no class, on `device`, wherever it arrives: at the
/// call where the targets can be read then (the CPU, a native GPU), or at the next async read on
/// the web, where the check runs on the GPU (`switchyard`'s deferred checks). The page's test
/// calls it on WebGPU; `Ok` is the error's message, `Err` says it never came.
pub async fn out_of_range_target_error(device: Device) -> Result<String, String> {
    use switchyard::Tensor;
    use switchyard::ops::try_cross_entropy;
    let on = |t: Tensor| t.try_to(device).map_err(|e| e.to_string());
    let logits = on(Tensor::from_vec(vec![0.5f32, -0.5, 1.0, 2.0], &[2, 2]).unwrap())?;
    let targets = on(Tensor::from_vec(vec![0i64, 5], &[2]).unwrap())?;
    let loss = match try_cross_entropy(&logits, &targets) {
        Ok(loss) => loss,
        Err(error) => return Ok(error.to_string()),
    };
    match loss.try_item_async().await {
        Err(error) => Ok(error.to_string()),
        Ok(value) => Err(format!(
            "target 5 of 2 classes gave a loss ({}) and no error",
            value.as_f64()
        )),
    }
}
