
// Strided elementwise ops of one operand: `out[i] = f(x[offset(i)])` (the math of `math.wgsl`,
// prepended), and `copy`, which gathers a view into a contiguous tensor (the GPU's `contiguous`,
// and the first step of a reduction or a read-back of a strided view).

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP)
fn copy_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = x[offsets(i).x];
    }
}

// `copy_`: element `i` of the source view (`x`'s layout) to element `i` of the destination view
// (the second operand's layout, in the buffer bound as `out`). The host refuses a destination
// whose elements overlap, so no two invocations write one place.
@compute @workgroup_size(WORKGROUP)
fn scatter_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                   @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = offsets(i);
        out[at.y] = x[at.x];
    }
}

@compute @workgroup_size(WORKGROUP)
fn neg_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = -x[offsets(i).x];
    }
}

@compute @workgroup_size(WORKGROUP)
fn relu_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = relu_f32(x[offsets(i).x]); // NaN stays NaN on every driver (`math.wgsl`)
    }
}

@compute @workgroup_size(WORKGROUP)
fn exp_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = exp(x[offsets(i).x]);
    }
}

@compute @workgroup_size(WORKGROUP)
fn log_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = log_f32(x[offsets(i).x]);
    }
}

@compute @workgroup_size(WORKGROUP)
fn tanh_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = tanh_f32(x[offsets(i).x]);
    }
}

@compute @workgroup_size(WORKGROUP)
fn sigmoid_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = sigmoid_f32(x[offsets(i).x]);
    }
}

@compute @workgroup_size(WORKGROUP)
fn sqrt_strided(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = sqrt_f32(x[offsets(i).x]);
    }
}
