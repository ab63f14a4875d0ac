// Drives the training: on the CPU, then on WebGPU where the browser grants an adapter; one epoch
// per task of the event loop (so the page redraws between epochs), the picture redrawn after
// each. The outcome is kept on <body> for the test: data-state (loading, training, done,
// failed), data-cpu-accuracy and data-webgpu-accuracy (percent), data-webgpu (trained,
// unavailable or failed).
import init, { SpiralsTraining, cpuKernels, initWebGpu } from "./pkg/switchyard_example_web.js";

const body = document.body;
const epochs = Number(new URLSearchParams(location.search).get("epochs")) || undefined;
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

// Trains on `device` ("cpu" or "webgpu"), reporting in the elements `${device}-status` and
// `${device}-picture`; resolves to the final accuracy in percent.
async function train(device) {
  const status = document.getElementById(`${device}-status`);
  const picture = document.getElementById(`${device}-picture`);
  const training = new SpiralsTraining(epochs, device);
  const started = performance.now();
  let loss = NaN;
  while (!training.isOver) {
    await nextTask();
    loss = await training.nextEpoch();
    picture.innerHTML = await training.picture();
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    status.textContent = `Epoch ${training.epoch}: loss ${loss.toFixed(4)}, training accuracy ` +
      `${(100 * training.accuracy).toFixed(1)}% (${seconds} s)…`;
  }
  const accuracy = (100 * training.accuracy).toFixed(1);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  status.textContent = `Trained ${training.epoch} epochs in ${seconds} s: loss ` +
    `${loss.toFixed(4)}, final training accuracy ${accuracy}%.`;
  body.dataset[`${device}Seconds`] = seconds;
  return accuracy;
}

async function webgpu() {
  const status = document.getElementById("webgpu-status");
  if (!("gpu" in navigator)) {
    status.textContent = "This browser does not expose WebGPU: the model trained on the CPU only.";
    body.dataset.webgpu = "unavailable";
    return;
  }
  let adapter;
  try {
    adapter = await initWebGpu();
  } catch (error) {
    status.textContent = `WebGPU is exposed but gave Switchyard no device (${error}): the model ` +
      "trained on the CPU only.";
    body.dataset.webgpu = "unavailable";
    return;
  }
  status.textContent = `Training on ${adapter}…`;
  try {
    body.dataset.webgpuAccuracy = await train("webgpu");
    body.dataset.webgpu = "trained";
    status.textContent += ` Adapter: ${adapter}.`;
  } catch (error) {
    status.textContent = `Training on WebGPU (${adapter}) failed: ${error}`;
    body.dataset.webgpu = "failed";
  }
}

async function main() {
  await init();
  document.getElementById("kernels").textContent = `CPU kernels: ${cpuKernels()}.`;
  body.dataset.state = "training";
  body.dataset.cpuAccuracy = await train("cpu");
  await webgpu();
  body.dataset.state = "done";
}

main().catch((error) => {
  document.getElementById("cpu-status").textContent = `Training failed: ${error}`;
  body.dataset.state = "failed";
});
