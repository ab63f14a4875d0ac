// Elementwise ops of two operands of one shape: `out[i] = x[i] ∘ y[i]`.
//
// One invocation per element. The grid may be two-dimensional (a dimension holds at most 65535
// workgroups), so the flat index folds the workgroup's y coordinate in; invocations past the end
// do nothing.

struct Params {
    n: u32,       // elements
    m: u32,       // unused here
    k: u32,       // unused here
    scalar: f32,  // unused here
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

// Must equal `ELEMENTWISE_WORKGROUP` in `pipelines.rs`.
const WORKGROUP: u32 = 256u;

fn index(workgroup: vec3<u32>, groups: vec3<u32>, local: u32) -> u32 {
    return (workgroup.y * groups.x + workgroup.x) * WORKGROUP + local;
}

@compute @workgroup_size(WORKGROUP)
fn add(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
       @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = x[i] + y[i];
    }
}

@compute @workgroup_size(WORKGROUP)
fn sub(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
       @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = x[i] - y[i];
    }
}

@compute @workgroup_size(WORKGROUP)
fn mul(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
       @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = x[i] * y[i];
    }
}

@compute @workgroup_size(WORKGROUP)
fn div(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
       @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = x[i] / y[i];
    }
}
