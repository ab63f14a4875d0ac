// Opens the spirals page in headless Chromium, waits for its trainings (CPU, then WebGPU) to
// end, checks their final training accuracy and keeps a screenshot. Usage:
//   node page.mjs URL SCREENSHOT [MIN_ACCURACY] [WEBGPU]
// (.ci/web serves target/web and calls it). Exits 1 with the page's own words when a training
// fails or stays below MIN_ACCURACY percent (97 by default), or, with WEBGPU `required` (the
// default; `optional` accepts a browser without it), when the page could not train on WebGPU.
import { chromium } from "playwright-core";

const [url, screenshot, minimum = "97", webgpu = "required"] = process.argv.slice(2);
if (!url || !screenshot || !["required", "optional"].includes(webgpu)) {
  console.error("usage: node page.mjs URL SCREENSHOT [MIN_ACCURACY] [required|optional]");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  // This machine's network is closed: without these, Chromium's background connections are
  // refused over and over. WebGPU is asked for (the page says whether an adapter came).
  args: [
    "--no-sandbox", "--disable-gpu-sandbox", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-unsafe-webgpu", "--enable-features=Vulkan", "--use-webgpu-adapter=swiftshader",
  ],
});
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 960, height: 720 } });
  page.on("console", (message) => console.log(`page console (${message.type()}): ${message.text()}`));
  page.on("pageerror", (error) => console.log(`page error: ${error}`));
  await page.goto(url);
  // Progress while it trains: the status lines, when they changed, every 15 s.
  let said = "";
  const progress = setInterval(async () => {
    const now = await page.evaluate(() =>
      ["cpu-status", "webgpu-status"].map((id) => document.getElementById(id)?.textContent).join(" | "),
    ).catch(() => said);
    if (now !== said) console.log(`page: ${now}`);
    said = now;
  }, 15_000);
  await page.waitForFunction(
    () => ["done", "failed"].includes(document.body.dataset.state),
    null,
    { timeout: 600_000, polling: 500 },
  );
  clearInterval(progress);
  const state = await page.evaluate(() => ({ ...document.body.dataset }));
  const text = (id) => page.locator(`#${id}`).innerText();
  console.log(`CPU: ${await text("cpu-status")}`);
  console.log(await text("kernels"));
  console.log(`WebGPU: ${await text("webgpu-status")}`);
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot}`);
  const check = (device, accuracy) => {
    if (!(Number(accuracy) >= Number(minimum))) {
      console.error(`page test: ${device}: final training accuracy ${accuracy}% is below ${minimum}%`);
      failed = true;
    }
  };
  if (state.state !== "done") {
    console.error("page test: the page's training failed");
    failed = true;
  } else {
    check("CPU", state.cpuAccuracy);
    if (state.webgpu === "trained") {
      check("WebGPU", state.webgpuAccuracy);
      // A loss given a target that is no class: on WebGPU the check runs on the GPU and its
      // error arrives at the next async read; it must arrive.
      const error = await page.evaluate(async () => {
        const module = await import("./pkg/switchyard_example_web.js");
        try {
          return { said: await module.outOfRangeTargetOnWebGpu() };
        } catch (never) {
          return { never: String(never) };
        }
      });
      console.log(`WebGPU, a target that is no class: ${error.said ?? error.never}`);
      if (!error.said?.includes("not a class index")) {
        console.error("page test: WebGPU: the out-of-range target was not reported");
        failed = true;
      }
    } else if (state.webgpu === "failed" || webgpu === "required") {
      console.error(`page test: the page did not train on WebGPU (${state.webgpu})`);
      failed = true;
    }
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
