// `scale` on the GPU: `out[i] = x[i] · factor`, element `i` of `x` found through its offset and
// strides (`offsets`, from the wgpu backend's `PRELUDE`, which is prepended), so views are read in
// place. Bindings: the input, the output, then the parameters (`params.scalar` is the factor).

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP)
fn scale(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
         @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = x[offsets(i).x] * params.scalar;
    }
}
