// Elementwise ops of one operand: `out[i] = f(x[i])`. Same grid as `binary.wgsl`. The pipelines
// prepend `math.wgsl` (`relu_f32`, `log_f32`, `tanh_f32`, `sigmoid_f32`, `sqrt_f32`).

struct Params {
    n: u32,       // elements
    m: u32,       // unused here
    k: u32,       // unused here
    scalar: f32,  // unused here
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

// Must equal `ELEMENTWISE_WORKGROUP` in `pipelines.rs`.
const WORKGROUP: u32 = 256u;

fn index(workgroup: vec3<u32>, groups: vec3<u32>, local: u32) -> u32 {
    return (workgroup.y * groups.x + workgroup.x) * WORKGROUP + local;
}

@compute @workgroup_size(WORKGROUP)
fn neg(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
       @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = -x[i];
    }
}

@compute @workgroup_size(WORKGROUP)
fn relu(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = relu_f32(x[i]); // NaN stays NaN on every driver (`math.wgsl`)
    }
}

@compute @workgroup_size(WORKGROUP)
fn exponential(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = exp(x[i]);
    }
}

@compute @workgroup_size(WORKGROUP)
fn logarithm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = log_f32(x[i]);
    }
}

@compute @workgroup_size(WORKGROUP)
fn hyperbolic_tangent(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = tanh_f32(x[i]);
    }
}

@compute @workgroup_size(WORKGROUP)
fn sigmoid(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = sigmoid_f32(x[i]);
    }
}

@compute @workgroup_size(WORKGROUP)
fn square_root(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = sqrt_f32(x[i]);
    }
}
