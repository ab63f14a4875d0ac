// `complex64` on the GPU: each element is two words, the real part's `f32` bits then the
// imaginary part's (an `i64` storage's layout), so element `e` of an operand is at words `2e` and
// `2e + 1`. `offsets(i)` (the prelude's) finds element `i` of `x` and `y` through their strides;
// the output is contiguous. Bindings: `x`, `y`, the output, then the parameters.

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP)
fn complex_add(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = 2u * offsets(i);
        out[2u * i] = x[at.x] + y[at.y];
        out[2u * i + 1u] = x[at.x + 1u] + y[at.y + 1u];
    }
}

@compute @workgroup_size(WORKGROUP)
fn complex_mul(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = 2u * offsets(i);
        let a = x[at.x];
        let b = x[at.x + 1u];
        let c = y[at.y];
        let d = y[at.y + 1u];
        out[2u * i] = a * c - b * d;
        out[2u * i + 1u] = a * d + b * c;
    }
}
