// Drives the training: one epoch per task of the event loop (so the page redraws between
// epochs), the picture redrawn after each. The outcome is kept on <body> for the test:
// data-state (loading, training, done, failed) and data-accuracy (percent).
import init, { SpiralsTraining, cpuKernels } from "./pkg/switchyard_example_web.js";

const status = document.getElementById("status");
const picture = document.getElementById("picture");

function fail(error) {
  status.textContent = `Training failed: ${error}`;
  document.body.dataset.state = "failed";
}

// WebGPU: said, not used. The wgpu backend reads results back by blocking until the GPU is done,
// which a browser's main thread cannot do, so it is not built for WebAssembly.
async function describeWebGpu() {
  const line = document.getElementById("webgpu");
  if (!("gpu" in navigator)) {
    line.textContent = "WebGPU: this browser does not expose it. The page trains on the CPU.";
    return;
  }
  const adapter = await navigator.gpu.requestAdapter().catch(() => null);
  const about = adapter
    ? `an adapter is available (${adapter.info?.vendor || "vendor unknown"} ${adapter.info?.architecture || ""})`.trim()
    : "no adapter was granted";
  line.textContent = `WebGPU: ${about}. The page trains on the CPU: Switchyard's wgpu backend is ` +
    "not built for WebAssembly yet (it waits for the GPU synchronously, which a browser forbids).";
  document.body.dataset.webgpu = adapter ? "adapter" : "no-adapter";
}

async function main() {
  await init();
  document.getElementById("kernels").textContent = `Kernels: ${cpuKernels()}.`;
  describeWebGpu();
  const epochs = Number(new URLSearchParams(location.search).get("epochs")) || undefined;
  const training = new SpiralsTraining(epochs);
  document.body.dataset.state = "training";
  const started = performance.now();
  const step = () => {
    try {
      const loss = training.nextEpoch();
      const accuracy = 100 * training.accuracy;
      picture.innerHTML = training.picture();
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (training.isOver) {
        status.textContent = `Trained ${training.epoch} epochs in ${seconds} s: loss ` +
          `${loss.toFixed(4)}, final training accuracy ${accuracy.toFixed(1)}%.`;
        document.body.dataset.accuracy = accuracy.toFixed(1);
        document.body.dataset.seconds = seconds;
        document.body.dataset.state = "done";
      } else {
        status.textContent = `Epoch ${training.epoch}: loss ${loss.toFixed(4)}, training ` +
          `accuracy ${accuracy.toFixed(1)}% (${seconds} s)…`;
        setTimeout(step, 0);
      }
    } catch (error) {
      fail(error);
    }
  };
  setTimeout(step, 0);
}

main().catch(fail);
