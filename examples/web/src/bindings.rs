//! The JavaScript side's view of the crate (wasm-bindgen): a training object that the page steps
//! through, and a panic hook that reports a panic's message on the console (a wasm32 panic
//! aborts, and the browser would otherwise show only "unreachable executed").

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

/// A training run of the spirals MLP on the CPU, stepped one epoch at a time.
#[wasm_bindgen]
#[derive(Debug)]
pub struct SpiralsTraining(Training);

#[wasm_bindgen]
impl SpiralsTraining {
    /// A fresh model; `epochs` 0 or absent means [`crate::DEFAULT_EPOCHS`].
    #[wasm_bindgen(constructor)]
    pub fn new(epochs: Option<usize>) -> Result<SpiralsTraining, JsError> {
        let epochs = epochs.filter(|&e| e > 0).unwrap_or(crate::DEFAULT_EPOCHS);
        Ok(SpiralsTraining(crate::new_training(epochs).map_err(js)?))
    }

    /// Trains one epoch; returns its mean loss.
    #[wasm_bindgen(js_name = nextEpoch)]
    pub fn next_epoch(&mut self) -> Result<f64, JsError> {
        self.0.next_epoch().map_err(js)
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
    pub fn picture(&self) -> Result<String, JsError> {
        crate::picture(&self.0).map_err(js)
    }
}

/// Which CPU kernels serve this build ([`crate::cpu_kernels`]).
#[wasm_bindgen(js_name = cpuKernels)]
pub fn cpu_kernels() -> String {
    crate::cpu_kernels()
}

fn js(error: impl std::fmt::Display) -> JsError {
    JsError::new(&error.to_string())
}
