//! An MLP learns two interleaved spirals: `cargo run --release --example train`.
//!
//! The training code is written once against ops (`switchyard_examples::mlp`); it runs on the
//! CPU and, when a wgpu adapter exists, on the GPU: the same parameters and data, moved there
//! with one `.to(device)`. Each epoch prints its loss, the training accuracy and its time; each
//! device ends with `final training accuracy: 98.7% (device cpu)`. A device that fails (no
//! adapter, a kernel the backend does not have) is reported with its error, and the others
//! still run. The picture (loss curves and the decision boundary) goes to `--out`.
//!
//! Flags: `--epochs N` (default 40), `--device cpu|wgpu|all` (default all: the CPU, and the GPU
//! when there is a hardware adapter; a software one, such as Mesa's llvmpipe, only when asked
//! with `--device wgpu`), `--out PATH` (default `target/train.svg`), `--batch N` (64),
//! `--lr X` (Adam's initial learning rate, 0.01, decayed to a tenth along a cosine).
//!
//! `--autocast bf16|f16` trains in mixed precision: the forward pass under autocast (`matmul` in
//! the low precision, the loss in `f32`), the parameters and their gradients in `f32`; `f16`
//! with a gradient scaler.
//!
//! `--fake` trains nothing: it takes one training step of the model scaled up (hidden layers of
//! `--width N`, default 50,000: 2.5 billion parameters) in fake mode, where tensors have shapes
//! and no data, and prints the parameter count, the activations' shapes and the memory a real
//! step on the CPU would need.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use switchyard::ops::{try_add, try_matmul, try_narrow, try_relu};
use switchyard::optim::Adam;
use switchyard::{DType, Device, DispatchError, Tensor, fake};
use switchyard_backends as _; // links the CPU and GPU kernels: without it the linker drops them
use switchyard_examples::mlp::{Mlp, SPIRALS_WIDTHS, train_step};
use switchyard_examples::plot::Curve;
use switchyard_examples::spirals::{Spirals, SpiralsConfig};
use switchyard_examples::training::{INIT_SEED, Settings, Training, TrainingError};

const WIDTHS: [usize; 4] = SPIRALS_WIDTHS;
/// `--fake`'s hidden width: two layers of 50,000, 2.5 billion parameters.
const FAKE_WIDTH: usize = 50_000;

const USAGE: &str = "usage: cargo run --release --example train -- [--epochs N] \
                     [--device cpu|wgpu|all] [--out PATH] [--batch N] [--lr X] \
                     [--autocast bf16|f16] [--fake [--width N]]";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Which {
    Cpu,
    Wgpu,
    All,
}

#[derive(Debug)]
struct Args {
    epochs: usize,
    device: Which,
    out: PathBuf,
    batch: usize,
    lr: f64,
    /// One fake step of a model with hidden layers this wide, instead of training.
    fake: Option<usize>,
    /// Mixed precision: the forward pass under autocast to this dtype.
    autocast: Option<DType>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        epochs: 40,
        device: Which::All,
        out: PathBuf::from("target/train.svg"),
        batch: 64,
        lr: 0.01,
        fake: None,
        autocast: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--epochs" => args.epochs = number(&flag, &value()?)?,
            "--batch" => args.batch = number(&flag, &value()?)?,
            "--lr" => args.lr = number(&flag, &value()?)?,
            "--out" => args.out = PathBuf::from(value()?),
            "--autocast" => {
                args.autocast = Some(match value()?.as_str() {
                    "bf16" => DType::BF16,
                    "f16" => DType::F16,
                    other => {
                        return Err(format!(
                            "unknown autocast dtype `{other}`; expected bf16 or f16"
                        ));
                    }
                })
            }
            "--fake" => args.fake = Some(args.fake.unwrap_or(FAKE_WIDTH)),
            "--width" => args.fake = Some(number(&flag, &value()?)?),
            "--device" => {
                args.device = match value()?.as_str() {
                    "cpu" => Which::Cpu,
                    "wgpu" => Which::Wgpu,
                    "all" => Which::All,
                    other => {
                        return Err(format!(
                            "unknown device `{other}`; expected cpu, wgpu or all"
                        ));
                    }
                }
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown flag `{other}`")),
        }
    }
    if args.fake == Some(0) {
        return Err("--width must be at least 1".into());
    }
    if args.epochs == 0 || args.batch == 0 {
        return Err("--epochs and --batch must be at least 1".into());
    }
    Ok(args)
}

fn number<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{flag} takes a number, not `{text}`"))
}

/// A finished run: the training (its curve, accuracy and model) and how long it took.
struct Run {
    training: Training,
    time: Duration,
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("train: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let config = SpiralsConfig::default();
    let data = Spirals::generate(config);
    if let Some(width) = args.fake {
        return fake_step(&data, width, args.batch, args.lr);
    }
    println!(
        "two spirals: {} points ({} turns, noise {}), MLP {WIDTHS:?} with ReLU, Adam lr {}, \
         batch {}, {} epochs{}",
        data.len(),
        config.turns,
        config.noise,
        args.lr,
        args.batch,
        args.epochs,
        match args.autocast {
            Some(dtype) => format!(", autocast {dtype}"),
            None => String::new(),
        }
    );

    let mut devices = Vec::new();
    let mut failed = false;
    if args.device != Which::Wgpu {
        devices.push(Device::Cpu);
    }
    if args.device != Which::Cpu {
        match switchyard_backends::wgpu::adapter_info() {
            // A software adapter (Mesa's llvmpipe/lavapipe, on a machine with no GPU) runs
            // the same code correctly but some thirty times slower than the CPU backend: `all`
            // leaves it out, saying so, and `--device wgpu` asks for it.
            Ok(info) if args.device == Which::All && info.device_type == wgpu::DeviceType::Cpu => {
                println!(
                    "GPU: skipped, the adapter is a software one ({} on the {} backend); \
                     `--device wgpu` trains on it anyway",
                    info.name, info.backend
                );
            }
            Ok(info) => {
                println!(
                    "GPU: {} ({:?}) on the {} backend",
                    info.name, info.device_type, info.backend
                );
                devices.push(Device::Wgpu);
            }
            Err(error) if args.device == Which::All => {
                println!("GPU: skipped, no wgpu adapter ({error})");
            }
            Err(error) => {
                println!("GPU: no wgpu adapter: {error}");
                failed = true;
            }
        }
    }

    let mut runs = Vec::new();
    for device in devices {
        println!("\n== training on {device} ==");
        match train(&data, device, &args) {
            Ok(run) => {
                println!(
                    "trained in {:.1} s\nfinal training accuracy: {:.1}% (device {device})",
                    run.time.as_secs_f64(),
                    100.0 * run.training.accuracy()
                );
                runs.push(run);
            }
            Err(error) => {
                // A real failure, reported as such: no result is made up for this device.
                println!("training on {device} failed: {error}");
                failed = true;
            }
        }
    }

    let Some(first) = runs.first() else {
        println!("no device finished training");
        return ExitCode::FAILURE;
    };
    match picture(&data, first, &runs) {
        Ok(svg) => {
            let written = args
                .out
                .parent()
                .filter(|dir| !dir.as_os_str().is_empty())
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&args.out, svg));
            match written {
                Ok(()) => println!("\nwrote {}", args.out.display()),
                Err(error) => {
                    println!("\ncould not write {}: {error}", args.out.display());
                    failed = true;
                }
            }
        }
        Err(error) => {
            println!("\ncould not draw the decision boundary: {error}");
            failed = true;
        }
    }
    // With `--device all`, a GPU that fails is reported above and the CPU's result stands; a
    // device asked for by name must succeed.
    if failed && args.device != Which::All {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Trains a fresh model (the same initial parameters on every device) on `device`, printing a
/// line per epoch.
fn train(data: &Spirals, device: Device, args: &Args) -> Result<Run, TrainingError> {
    let started = Instant::now();
    let settings = Settings {
        epochs: args.epochs,
        batch: args.batch,
        lr: args.lr,
        autocast: args.autocast,
    };
    let mut training = Training::new(data.clone(), device, settings)?;
    for epoch in 1..=args.epochs {
        let epoch_start = Instant::now();
        let loss = training.next_epoch()?;
        println!(
            "{:>4} epoch {epoch:>3}/{}  loss {loss:.4}  accuracy {:5.1}%  {:.2} s",
            device.to_string(),
            args.epochs,
            100.0 * training.accuracy(),
            epoch_start.elapsed().as_secs_f64()
        );
    }
    Ok(Run {
        training,
        time: started.elapsed(),
    })
}

/// The SVG: every run's loss curve, and `boundary_of`'s predictions over the plane.
fn picture(data: &Spirals, boundary_of: &Run, runs: &[Run]) -> Result<String, TrainingError> {
    let curves: Vec<Curve> = runs.iter().map(|r| r.training.curve()).collect();
    let title = format!(
        "MLP {WIDTHS:?} on two spirals ({} points): loss per epoch, and the decision boundary \
         on {}",
        data.len(),
        boundary_of.training.device()
    );
    boundary_of.training.picture(&title, &curves)
}

/// `--fake`: one step of the model with hidden layers of `width`, in fake mode: the parameter
/// count, the activations' shapes and the memory a real step on the CPU would need.
fn fake_step(data: &Spirals, width: usize, batch: usize, lr: f64) -> ExitCode {
    let widths = [2, width, width, 2];
    let started = Instant::now();
    let (result, memory) = fake::fake(|| -> Result<(usize, Vec<Vec<usize>>), DispatchError> {
        let model = Mlp::new(&widths, INIT_SEED)?;
        let parameters = model.parameters().iter().map(Tensor::numel).sum();
        let mut adam = Adam::try_new(model.parameters(), lr)?;
        let (x, y) = data.tensors()?;
        let batch = batch.min(data.len());
        let (x, y) = (try_narrow(&x, 0, 0, batch)?, try_narrow(&y, 0, 0, batch)?);
        let mut shapes = vec![x.shape().to_vec()];
        {
            let _no_grad = switchyard::autograd::no_grad();
            let mut h = x.clone();
            for (i, layer) in model.layers.iter().enumerate() {
                h = try_add(&try_matmul(&h, &layer.weight)?, &layer.bias)?;
                if i + 1 < model.layers.len() {
                    h = try_relu(&h)?;
                }
                shapes.push(h.shape().to_vec());
            }
        }
        train_step(&model, &mut adam, &x, &y)?;
        Ok((parameters, shapes))
    });
    let elapsed = started.elapsed();
    let (parameters, shapes) = match result {
        Ok(found) => found,
        Err(error) => {
            println!("the fake step failed: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "fake mode: one training step of MLP {widths:?} (batch {}), no data",
        shapes[0][0]
    );
    println!(
        "parameters: {parameters} ({:.2} billion)",
        parameters as f64 / 1e9
    );
    for (i, shape) in shapes.iter().enumerate() {
        let what = if i == 0 {
            "input".to_string()
        } else {
            format!("layer {i}")
        };
        println!("  {what:<8} {shape:?}");
    }
    let cpu = memory.device(Device::Cpu);
    let gib = |bytes: usize| bytes as f64 / (1u64 << 30) as f64;
    println!(
        "memory a real step on the CPU needs: peak {} bytes ({:.2} GiB), {} allocations, {:.2} GiB \
         allocated in all",
        cpu.peak,
        gib(cpu.peak),
        cpu.allocations,
        gib(cpu.total)
    );
    println!("fake step took {:.3} s", elapsed.as_secs_f64());
    if let Some(rss) = peak_rss() {
        println!(
            "this process's peak resident memory: {:.1} MiB",
            rss as f64 / (1u64 << 20) as f64
        );
    }
    ExitCode::SUCCESS
}

/// The process's peak resident set (`VmHWM` of `/proc/self/status`), where the system tells it.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
