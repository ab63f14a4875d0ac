// Cargo's runner for wasm32-wasip1 (`.ci/wasm` sets CARGO_TARGET_WASM32_WASIP1_RUNNER to it):
// `node .ci/wasi-runner.mjs <module.wasm> [args…]` runs a WASI command under Node's built-in WASI,
// with this process's environment and the repository's directory visible at its own path (tests
// that read files beside their crate find them where `CARGO_MANIFEST_DIR` says).
//
// A libtest binary (one that answers `--list`) runs each of its tests in a fresh instance of the
// module, because on wasm32-wasip1 libtest runs every test on the one main thread (no threads)
// and a panic aborts the whole module: one instance per test gives each test the fresh
// thread-locals it has natively (its own thread) and lets one failing test leave the others
// running. A failing test's output is printed; the exit status is 101 if any test failed. Any
// other module (an example) runs once, with the given arguments, and exits with its status.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { argv, env, exit, stderr, stdout } from "node:process";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { WASI } from "node:wasi";

// A full garbage collection before each test's instance: without it Node 20.20 crashed (SIGSEGV)
// starting the sixth instance of tests/tests/simd_differential.rs built with simd128.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc");

const [, , modulePath, ...args] = argv;
if (!modulePath) {
  stderr.write("usage: node .ci/wasi-runner.mjs <module.wasm> [args…]\n");
  exit(2);
}
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const module = await WebAssembly.compile(readFileSync(modulePath));
const scratch = mkdtempSync(join(tmpdir(), "wasi-runner-"));

// Runs the module once with `moduleArgs`; with `capture`, its stdout and stderr go to one file,
// whose text is returned. A trap (a panic: wasm32-wasip1 aborts on panic) is status 101.
async function run(moduleArgs, capture) {
  const file = join(scratch, "out");
  const fd = capture ? openSync(file, "w") : undefined;
  const wasi = new WASI({
    version: "preview1",
    args: [modulePath, ...moduleArgs],
    env,
    preopens: { [root]: root },
    returnOnExit: true,
    ...(capture ? { stdout: fd, stderr: fd } : {}),
  });
  const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
  let status;
  try {
    status = wasi.start(instance);
  } catch (error) {
    status = 101;
    if (!capture) stderr.write(`wasi-runner: ${modulePath} trapped: ${error}\n`);
  }
  if (!capture) return { status, output: "" };
  closeSync(fd);
  return { status, output: readFileSync(file, "utf8") };
}

// Asked for libtest's own list or help: run as asked.
const isLibtest = !["--list", "--help", "-h"].some((arg) => args.includes(arg));

let status = 0;
if (!isLibtest) {
  status = (await run(args, false)).status;
} else {
  // Which tests the arguments select (libtest applies the filters), then each in its own instance.
  const names = (output) =>
    output
      .split("\n")
      .filter((line) => line.endsWith(": test"))
      .map((line) => line.slice(0, -": test".length));
  const listed = await run([...args, "--list", "--format", "terse"], true);
  const tests = names(listed.output);
  // `#[ignore]`d tests (on wasm: those that start threads or catch panics) are listed apart.
  const ignored = new Set(
    args.includes("--ignored") || args.includes("--include-ignored")
      ? []
      : names((await run([...args, "--list", "--format", "terse", "--ignored"], true)).output),
  );
  if (listed.status !== 0 || (tests.length === 0 && !/^0 tests/m.test(listed.output))) {
    // Not a libtest binary after all (or its `--list` failed): run it as asked.
    status = (await run(args, false)).status;
  } else {
    const passThrough = ["--ignored", "--include-ignored"];
    // libtest's own capture would lose a panic's message (the module aborts before printing
    // it), so each instance prints straight to the file this runner captures, or to the terminal.
    const flags = [...args.filter((arg) => passThrough.includes(arg)), "--nocapture"];
    const nocapture = args.includes("--nocapture");
    const failed = [];
    const started = Date.now();
    stdout.write(`\nrunning ${tests.length} tests (one WASI instance each)\n`);
    for (const test of tests) {
      if (ignored.has(test)) {
        stdout.write(`test ${test} ... ignored\n`);
        continue;
      }
      collectGarbage();
      const { status: testStatus, output } = await run([test, "--exact", ...flags], !nocapture);
      const ok = testStatus === 0;
      stdout.write(`test ${test} ... ${ok ? "ok" : "FAILED"}\n`);
      if (!ok) {
        failed.push(test);
        stdout.write(output);
      }
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(2);
    const passed = tests.length - ignored.size - failed.length;
    stdout.write(
      `\ntest result: ${failed.length ? "FAILED" : "ok"}. ${passed} passed; ${failed.length} failed; ${ignored.size} ignored; finished in ${seconds}s\n\n`,
    );
    if (failed.length) {
      stdout.write(`failures:\n${failed.map((t) => `    ${t}\n`).join("")}\n`);
      status = 101;
    }
  }
}
rmSync(scratch, { recursive: true, force: true });
exit(status);
