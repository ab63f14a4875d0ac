
// Strided (and broadcast) elementwise ops of two operands: `out[i] = x[offset_x(i)] ∘
// y[offset_y(i)]`.

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP)
fn add_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = offsets(i);
        out[i] = x[at.x] + y[at.y];
    }
}

@compute @workgroup_size(WORKGROUP)
fn sub_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = offsets(i);
        out[i] = x[at.x] - y[at.y];
    }
}

@compute @workgroup_size(WORKGROUP)
fn mul_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = offsets(i);
        out[i] = x[at.x] * y[at.y];
    }
}

@compute @workgroup_size(WORKGROUP)
fn div_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = offsets(i);
        out[i] = x[at.x] / y[at.y];
    }
}
