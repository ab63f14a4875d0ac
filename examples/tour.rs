//! A tour of switchyard: `cargo run --release --example tour`.
//!
//! Runs an algorithm written once against ops, changes which kernels run with a guard, uses an op
//! and a device from a downstream crate, runs the algorithm on the GPU when there is one, traces
//! and profiles it (writing the graph as Graphviz DOT and the profile as Chrome trace JSON for
//! Perfetto), calls an op boxed by name, adds a kernel at run time, prints what is
//! registered, and shows the errors users see.

use switchyard::DType;
use switchyard::ops::{
    add, exp, full, matmul, mean, mul, relu, sum, try_add, try_full, try_matmul,
};
use switchyard::{
    Device, DispatchKey, DispatchKeySet, Stack, Tensor, Value, call_boxed, find_op, profile, trace,
};
use switchyard_backends as _; // links the CPU and GPU kernels: without it the linker drops them
use switchyard_example_downstream::{scale, to_toy};

/// An algorithm written once, against ops; which kernels run is decided per call.
fn loss(x: &Tensor, y: &Tensor) -> Tensor {
    mean(&mul(x, y))
}

fn section(title: &str) {
    println!("\n== {title} ==");
}

fn main() {
    section("an algorithm written once: loss(x, y) = mean(mul(x, y))");
    let x = Tensor::from_vec::<f32>(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])
        .expect("6 values fill [2, 3]");
    let y = Tensor::from_fn(&[2, 3], |i| 0.5 * i as f32);
    println!("x = {x}\ny = {y}");
    println!("loss(x, y) = {}", loss(&x, &y));

    section("more standard ops");
    println!("add(x, y)      = {}", add(&x, &y));
    println!(
        "relu(x - 3)    = {}",
        relu(&add(&x, &full(&[2, 3], -3.0, DType::F32, Device::Cpu)))
    );
    println!("exp(y)         = {}", exp(&y));
    println!("sum(x)         = {}", sum(&x));
    let w = Tensor::from_fn(&[3, 2], |i| if i % 3 == 0 { 1.0f32 } else { 0.0 });
    println!("matmul(x, w)   = {}   (w = {w})", matmul(&x, &w));

    section("which kernel ran? the computed table of `mul`");
    print!(
        "{}",
        find_op("mul").expect("mul is a standard op").table_dump()
    );
    println!(
        "(CpuSimd holds the best variant this CPU runs; ops without one fall through to CpuNaive)"
    );

    section("a guard changes what runs: exclude(CpuSimd) forces the naive backend");
    {
        let _naive = switchyard::exclude(DispatchKey::CpuSimd);
        println!("thread-local sets: {:?}", switchyard::local_keys());
        println!("loss(x, y) = {}", loss(&x, &y));
    }
    println!("after the guard:   {:?}", switchyard::local_keys());

    section("a downstream crate: its own op, its own device, kernels for ops it does not own");
    let toy_x = to_toy(&x).expect("copying to the toy device");
    println!("scale(x, 10) on cpu          = {}", scale(&x, 10.0));
    let on_toy = add(&toy_x, &toy_x);
    println!(
        "add(x, x) on {}     = {on_toy}   (kernel from the downstream crate)",
        on_toy.device()
    );
    println!(
        "scale(x, 10) on {}  = {}",
        toy_x.device(),
        scale(&toy_x, 10.0)
    );

    section("the same algorithm on the GPU (wgpu), when there is one");
    match switchyard_backends::wgpu::adapter_info() {
        Ok(info) => {
            println!(
                "ran on the {} backend, adapter {} ({:?}); WGPU_BACKEND=vulkan|gl|metal|dx12 \
                 and WGPU_ADAPTER_NAME choose another",
                info.backend, info.name, info.device_type
            );
            let (gpu_x, gpu_y) = (x.to(Device::Wgpu), y.to(Device::Wgpu));
            // Recorded on the GPU and not waited for; printing reads the value back, and waits.
            let on_gpu = loss(&gpu_x, &gpu_y);
            println!("loss(x, y) on {}  = {on_gpu}", on_gpu.device());
            println!(
                "matmul(x, w) on wgpu = {}",
                matmul(&gpu_x, &w.to(Device::Wgpu))
            );
        }
        Err(error) => println!("loss ran on the CPU only: {error}"),
    }

    section("trace(|| loss(x, y)): the graph of the top-level ops called");
    let (_, graph) = trace(|| loss(&x, &y));
    print!("{graph}");
    let out = std::env::temp_dir().join("switchyard-tour");
    let written = std::fs::create_dir_all(&out)
        .and_then(|()| std::fs::write(out.join("loss.dot"), graph.to_dot()));
    match written {
        Ok(()) => println!(
            "wrote {}: render it with `dot -Tsvg {0} -o loss.svg`",
            out.join("loss.dot").display()
        ),
        Err(error) => println!("could not write the graph under {}: {error}", out.display()),
    }

    section("profile(|| …): per-op call counts and times");
    let (_, profile) = profile(|| {
        for _ in 0..100 {
            loss(&x, &y);
        }
        matmul(&x, &w)
    });
    print!("{profile}");
    let written = std::fs::File::create(out.join("profile.json"))
        .and_then(|file| profile.write_chrome_trace(std::io::BufWriter::new(file)));
    match written {
        Ok(()) => println!(
            "wrote {}: open it in https://ui.perfetto.dev (\"Open trace file\") or chrome://tracing",
            out.join("profile.json").display()
        ),
        Err(error) => println!(
            "could not write the profile under {}: {error}",
            out.display()
        ),
    }

    section("a boxed call by name: what tools and fallbacks use");
    let mut stack: Stack<'_> = [Value::from(&x), Value::from(&y)].into_iter().collect();
    call_boxed("mul", &mut stack).expect("mul(x, y) boxed");
    println!("call_boxed(\"mul\", [x, y]) left {}", stack.values()[0]);

    section("autograd: a layer of the dispatcher");
    {
        // A leaf that requires grad carries the autograd key of its device (AutogradCpu), so
        // its ops first meet their derivative kernels (key = Autograd), which run the backend
        // kernel below and record a backward node.
        let mut w = Tensor::from_vec::<f32>(vec![0.5, -1.0, 2.0], &[3, 1]).expect("3 values");
        w.requires_grad_(true);
        let prediction = matmul(&x, &w); // [2, 3] · [3, 1]
        let loss = mean(&mul(&prediction, &prediction));
        println!(
            "loss = mean((x·w)²) = {loss}  (made by `{}`)",
            loss.grad_fn().unwrap_or("?")
        );
        loss.backward();
        println!("d loss / d w = {}", w.grad().expect("a gradient"));
        let _no_grad = switchyard::autograd::no_grad();
        println!(
            "under no_grad, x·w requires grad: {}",
            matmul(&x, &w).requires_grad()
        );
    }

    section("a kernel registered at run time, undone when its guard drops");
    fn mul_layer(keys: DispatchKeySet, x: &Tensor, y: &Tensor) -> switchyard::Result<Tensor> {
        println!("  (a layer at Custom1 ran for mul, then continued below itself)");
        mul::redispatch(keys.below(DispatchKey::Custom1), x, y)
    }
    {
        let _registered = mul::register(DispatchKey::Custom1, "mul_layer", mul_layer)
            .expect("no other Custom1 kernel for mul");
        let _layer = switchyard::include(DispatchKey::Custom1);
        // Only `mul` has a kernel at Custom1; other ops fall through it (a missing kernel at a
        // layer key with no fallback is an error naming the op and the key).
        println!("mul(x, y) with Custom1 on = {}", mul(&x, &y));
        let table = find_op("mul").expect("mul").table_dump();
        let layer_line = table.lines().find(|l| l.contains("Custom1")).unwrap_or("");
        println!("mul's table now has: {}", layer_line.trim());
    }
    let table = find_op("mul").expect("mul").table_dump();
    let layer_line = table.lines().find(|l| l.contains("Custom1")).unwrap_or("");
    println!("after the guard:     {}", layer_line.trim());
    println!("(set SWITCHYARD_TRACE=1 to see every dispatch: op, keys, chosen key, kernel)");

    section("what is registered: dump()");
    print!("{}", switchyard::dump());

    section("what users see when a call cannot run");
    let errors = [
        try_add(&x, &toy_x).map(drop),
        // A CPU and a GPU tensor in one call (or, without a GPU, the error that says so).
        x.try_to(Device::Wgpu)
            .and_then(|gpu_x| try_add(&x, &gpu_x))
            .map(drop),
        try_full(&[2], 1.0, DType::F32, Device::PrivateUse2).map(drop),
        try_add(&x, &Tensor::vector(&[1.0, 2.0])).map(drop),
        try_matmul(&x, &x).map(drop),
    ];
    for error in errors.into_iter().filter_map(Result::err) {
        println!("error: {error}");
    }
    println!(
        "\n(plain calls such as `add(&x, &toy_x)` panic with the same message; `try_` forms return it)"
    );
}
