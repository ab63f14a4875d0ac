//! The JavaScript side's view of the crate (wasm-bindgen): a training object that the page steps
//! through, the WebGPU start, and a panic hook that reports a panic's message on the console (a
//! wasm32 panic aborts, and the browser would otherwise show only "unreachable executed").
//!
//! The methods that may read a GPU tensor are `async` (a `Promise` in JavaScript): a page cannot
//! wait for its GPU. While one runs, the object is borrowed, and a second call on it throws
//! (wasm-bindgen's "recursive use of an object") instead of interleaving two epochs.

use switchyard::Device;
use switchyard_examples::training::Training;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str);
}

/// Runs when the module is instantiated.
#[wasm_bindgen(start)]
fn start() {
    std::panic::set_hook(Box::new(|info| {
        console_error(&format!("switchyard: {info}"))
    }));
}

/// A training run of the spirals MLP, stepped one epoch at a time.
#[wasm_bindgen]
#[derive(Debug)]
pub struct SpiralsTraining(Training);

#[wasm_bindgen]
impl SpiralsTraining {
    /// A fresh model; `epochs` 0 or absent means [`crate::DEFAULT_EPOCHS`]; `device` is `"cpu"`
    /// (the default) or `"webgpu"` (after [`init_webgpu`] resolved).
    #[wasm_bindgen(constructor)]
    pub fn new(epochs: Option<usize>, device: Option<String>) -> Result<SpiralsTraining, JsError> {
        let epochs = epochs.filter(|&e| e > 0).unwrap_or(crate::DEFAULT_EPOCHS);
        let device = match device.as_deref() {
            None | Some("cpu") => Device::Cpu,
            Some("webgpu") => Device::Wgpu,
            Some(other) => {
                return Err(JsError::new(&format!(
                    "no device `{other}`: the page trains on \"cpu\" or \"webgpu\""
                )));
            }
        };
        Ok(SpiralsTraining(
            crate::new_training(epochs, device).map_err(js)?,
        ))
    }

    /// Trains one epoch; resolves to its mean loss once the device has it.
    #[wasm_bindgen(js_name = nextEpoch)]
    pub async fn next_epoch(&mut self) -> Result<f64, JsError> {
        self.0.next_epoch_async().await.map_err(js)
    }

    /// Epochs trained so far.
    #[wasm_bindgen(getter)]
    pub fn epoch(&self) -> usize {
        self.0.losses().len()
    }

    /// Whether every epoch ran.
    #[wasm_bindgen(getter, js_name = isOver)]
    pub fn is_over(&self) -> bool {
        self.0.is_over()
    }

    /// The training accuracy after the last epoch, in [0, 1].
    #[wasm_bindgen(getter)]
    pub fn accuracy(&self) -> f64 {
        self.0.accuracy()
    }

    /// The loss curve and decision boundary so far, as SVG.
    pub async fn picture(&self) -> Result<String, JsError> {
        crate::picture(&self.0).await.map_err(js)
    }
}

/// Starts the wgpu backend on the browser's WebGPU; resolves to the adapter's description, or
/// rejects with why there is none.
#[wasm_bindgen(js_name = initWebGpu)]
pub async fn init_webgpu() -> Result<String, JsError> {
    crate::init_gpu().await.map_err(js)
}

/// The error a loss gets on WebGPU for a target that is no class: it arrives at the next async
/// read ([`crate::out_of_range_target_error`]). The page's test calls it.
#[wasm_bindgen(js_name = outOfRangeTargetOnWebGpu)]
pub async fn out_of_range_target_on_webgpu() -> Result<String, JsError> {
    crate::out_of_range_target_error(Device::Wgpu)
        .await
        .map_err(|never| JsError::new(&never))
}

/// Which CPU kernels serve this build ([`crate::cpu_kernels`]).
#[wasm_bindgen(js_name = cpuKernels)]
pub fn cpu_kernels() -> String {
    crate::cpu_kernels()
}

fn js(error: impl std::fmt::Display) -> JsError {
    JsError::new(&error.to_string())
}
