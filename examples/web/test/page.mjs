// Opens the spirals page in headless Chromium, waits for its training to end, checks the final
// training accuracy and keeps a screenshot. Usage: node page.mjs URL SCREENSHOT [MIN_ACCURACY]
// (.ci/web serves target/web and calls it). Exits 1 with the page's own words when training
// fails or stays below MIN_ACCURACY percent (97 by default).
import { chromium } from "playwright-core";

const [url, screenshot, minimum = "97"] = process.argv.slice(2);
if (!url || !screenshot) {
  console.error("usage: node page.mjs URL SCREENSHOT [MIN_ACCURACY]");
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
  await page.waitForFunction(
    () => ["done", "failed"].includes(document.body.dataset.state),
    null,
    { timeout: 600_000, polling: 500 },
  );
  const state = await page.evaluate(() => ({ ...document.body.dataset }));
  const text = (id) => page.locator(`#${id}`).innerText();
  console.log(await text("status"));
  console.log(await text("kernels"));
  console.log(await text("webgpu"));
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot}`);
  const accuracy = Number(state.accuracy);
  if (state.state !== "done") {
    console.error("page test: the page's training failed");
    failed = true;
  } else if (!(accuracy >= Number(minimum))) {
    console.error(`page test: final training accuracy ${state.accuracy}% is below ${minimum}%`);
    failed = true;
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
