//! The public kernel-writing API of the wgpu backend (`switchyard_backends::wgpu`), as another
//! crate uses it: a downstream op's kernel against its CPU kernel, kernels of two "crates" with
//! the same entry point name, a step-by-step launch, and an error naming the op for every misuse.

use std::sync::{Mutex, MutexGuard, PoisonError};

use switchyard::ops::{expand, narrow};
use switchyard::{DType, Device, ErrorKind, Tensor};
use switchyard_backends::wgpu::{
    Gpu, Kernel, MAX_GROUPS, Operand, PRELUDE, Params, WgpuStorage, elementwise, grid, launch,
    recorded_dispatches, synchronize,
};
use switchyard_example_downstream::scale;
use switchyard_tests_wgpu::{gpu, gpu_or_skip, tensor};

/// `out[i] = x[offsets(i).x] <op> params.scalar`, as `scale.wgsl` is written.
macro_rules! map_wgsl {
    ($entry:literal, $expr:literal) => {
        concat!(
            "@group(0) @binding(0) var<storage, read> x: array<f32>;\n",
            "@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n",
            "@group(0) @binding(2) var<uniform> params: Params;\n",
            "@compute @workgroup_size(WORKGROUP)\n",
            "fn ",
            $entry,
            "(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,\n",
            "    @builtin(local_invocation_index) local: u32) {\n",
            "    let i = index(wg, groups, local);\n",
            "    if i < params.n { let v = x[offsets(i).x]; out[i] = ",
            $expr,
            "; }\n}\n"
        )
    };
}

/// Two kernels with one entry point name, as two crates could declare them.
static PLUS: Kernel = Kernel::new(&[PRELUDE, map_wgsl!("f", "v + params.scalar")], "f", 1);
static TIMES: Kernel = Kernel::new(&[PRELUDE, map_wgsl!("f", "v * params.scalar")], "f", 1);
/// WGSL that does not compile (`undefined_name`).
static BROKEN: Kernel = Kernel::new(&[PRELUDE, map_wgsl!("g", "undefined_name")], "g", 1);

/// The tests of this file take turns: one counts the GPU's recorded dispatches, a number the
/// others' dispatches (and their submissions) would change under it.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    // A test that failed holding the turn says so itself; the others still run.
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

fn with_scalar(scalar: f32) -> Params {
    Params {
        scalar,
        ..Params::default()
    }
}

#[test]
fn a_downstream_op_runs_its_own_gpu_kernel_and_matches_its_cpu_kernel() {
    let _turn = one_at_a_time();
    if !gpu_or_skip("a_downstream_op_runs_its_own_gpu_kernel_and_matches_its_cpu_kernel") {
        return;
    }
    // 70 000 elements: 274 workgroups; views that merge to 1, 2 and 3 dimensions.
    let x = tensor(&[70, 1000], 1, 8.0);
    let on_gpu = gpu(&x);
    let cases = [
        ("contiguous", x.clone(), on_gpu.clone()),
        ("transposed", x.t(), on_gpu.t()),
        (
            "narrowed",
            narrow(&narrow(&x, 0, 3, 50), 1, 7, 900),
            narrow(&narrow(&on_gpu, 0, 3, 50), 1, 7, 900),
        ),
        (
            "broadcast",
            expand(&narrow(&x, 0, 5, 1), &[4, 1000]),
            expand(&narrow(&on_gpu, 0, 5, 1), &[4, 1000]),
        ),
    ];
    for (what, cpu, gpu) in cases {
        let got = scale(&gpu, 0.375);
        assert_eq!(got.device(), Device::Wgpu, "{what}");
        assert_eq!(got.shape(), cpu.shape(), "{what}");
        assert_eq!(
            got.to_vec::<f32>(),
            scale(&cpu, 0.375).to_vec::<f32>(),
            "{what}"
        );
    }
}

#[test]
fn kernels_with_one_entry_point_name_keep_their_own_pipelines() {
    let _turn = one_at_a_time();
    if !gpu_or_skip("kernels_with_one_entry_point_name_keep_their_own_pipelines") {
        return;
    }
    let x = gpu(&Tensor::vector(&[1.0, 2.0, 3.0]));
    for _ in 0..2 {
        let plus = elementwise(
            "test::plus",
            &PLUS,
            &[&x],
            &[3],
            DType::F32,
            with_scalar(10.0),
        );
        let times = elementwise(
            "test::times",
            &TIMES,
            &[&x],
            &[3],
            DType::F32,
            with_scalar(10.0),
        );
        assert_eq!(plus.unwrap().to_vec::<f32>(), [11.0, 12.0, 13.0]);
        assert_eq!(times.unwrap().to_vec::<f32>(), [10.0, 20.0, 30.0]);
    }
}

#[test]
fn a_kernel_launched_step_by_step_reads_uploads_and_writes_pool_buffers() {
    let _turn = one_at_a_time();
    if !gpu_or_skip("a_kernel_launched_step_by_step_reads_uploads_and_writes_pool_buffers") {
        return;
    }
    const OP: &str = "test::steps";
    let gpu = Gpu::get(OP).unwrap();
    assert!(gpu.limits().max_storage_buffers_per_shader_stage >= 4);
    let values = [1.5f32, -2.0, 4.0, 8.0];
    let input = gpu
        .upload(OP, DType::F32, 4, bytemuck_bytes(&values).as_slice())
        .unwrap();
    let out = gpu.alloc(OP, DType::F32, 4).unwrap();
    // The layout of a contiguous vector of 4, as `offsets(i)` reads it.
    let x = gpu_tensor_of(&values);
    let params = Params {
        scalar: -1.0,
        ..Params::strided(OP, &[4], &[Operand::of(&x)]).unwrap()
    };
    gpu.dispatch(OP, &TIMES, &[&input, &out], &params, grid(OP, 1).unwrap())
        .unwrap();
    let y = out.into_tensor(&[2, 2]).unwrap();
    assert_eq!(y.device(), Device::Wgpu);
    assert_eq!(y.to_vec::<f32>(), [-1.5, 2.0, -4.0, -8.0]);
    // `launch` is the same steps, the output allocated only once the plan is accepted.
    let z = launch(OP, DType::F32, &[4], &[&x], |n| {
        assert_eq!(n, 4);
        Ok((
            &PLUS,
            Params {
                scalar: 0.5,
                ..params
            },
            grid(OP, 1)?,
        ))
    })
    .unwrap();
    assert_eq!(z.to_vec::<f32>(), [2.0, -1.5, 4.5, 8.5]);
}

#[test]
fn every_misuse_of_the_kernel_api_is_an_error_naming_the_op() {
    let _turn = one_at_a_time();
    if !gpu_or_skip("every_misuse_of_the_kernel_api_is_an_error_naming_the_op") {
        return;
    }
    const OP: &str = "test::misuse";
    let gpu = Gpu::get(OP).unwrap();
    let x = gpu_tensor_of(&[1.0, 2.0, 3.0]);
    let storage = WgpuStorage::of(OP, &x).unwrap();
    let check = |what: &str, result: switchyard::Result<()>, says: &str| {
        let error = result.expect_err(what);
        let text = error.to_string();
        println!("{what}: {text}");
        assert!(text.contains(OP), "{what}: {text}");
        assert!(text.contains(says), "{what}: {text}");
    };
    synchronize().unwrap();
    let before = recorded_dispatches();

    // WGSL that does not compile: wgpu's message names the unknown identifier, at every launch.
    for _ in 0..2 {
        let error = elementwise(OP, &BROKEN, &[&x], &[3], DType::F32, Params::default());
        check("broken WGSL", error.map(drop), "undefined_name");
    }
    // Bindings that do not match the kernel, or an output that is also an input.
    let out = gpu.alloc(OP, DType::F32, 3).unwrap();
    let params = Params::default();
    check(
        "too few bindings",
        gpu.dispatch(OP, &PLUS, &[&out], &params, [1, 1]),
        "binds 1 input(s) and an output, but 1 tensor(s)",
    );
    check(
        "output is an input",
        gpu.dispatch(OP, &PLUS, &[storage, storage], &params, [1, 1]),
        "also an input's buffer",
    );
    check(
        "grid past the adapter's limit",
        gpu.dispatch(OP, &PLUS, &[storage, &out], &params, [u32::MAX, 1]),
        "workgroups",
    );
    assert_eq!(
        recorded_dispatches(),
        before,
        "a refused dispatch records nothing"
    );

    // A dtype the GPU does not hold, uploads of the wrong length, sizes past 32 bits.
    check("f64 buffer", gpu.alloc(OP, DType::F64, 3).map(drop), "f64");
    check(
        "short upload",
        gpu.upload(OP, DType::F32, 3, &[0; 8]).map(drop),
        "takes 12 bytes",
    );
    check(
        "grid",
        grid(OP, MAX_GROUPS * MAX_GROUPS + 1).map(drop),
        "grid",
    );
    let huge = launch(OP, DType::F32, &[1 << 33], &[], |_| unreachable!());
    check("2^33 elements", huge.map(drop), "32-bit");
    // An input of another shape than the output, and an input on the CPU.
    let wrong_shape = elementwise(OP, &PLUS, &[&x], &[4], DType::F32, params);
    let error = wrong_shape.unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Shape { .. }), "{error}");
    let cpu = Tensor::vector(&[1.0, 2.0, 3.0]);
    check(
        "CPU input",
        elementwise(OP, &PLUS, &[&cpu], &[3], DType::F32, params).map(drop),
        "got a tensor on cpu; its kernels read GPU tensors",
    );
    // Nothing above broke the context: a later launch works.
    let ok = elementwise(OP, &PLUS, &[&x], &[3], DType::F32, with_scalar(1.0)).unwrap();
    assert_eq!(ok.to_vec::<f32>(), [2.0, 3.0, 4.0]);
}

fn gpu_tensor_of(values: &[f32]) -> Tensor {
    gpu(&Tensor::vector(values))
}

fn bytemuck_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
