// `full`: every element of `out` set to one value. Same grid as `binary.wgsl`.

struct Params {
    n: u32,       // elements
    m: u32,       // unused here
    k: u32,       // unused here
    scalar: f32,  // the value
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;

// Must equal `ELEMENTWISE_WORKGROUP` in `pipelines.rs`.
const WORKGROUP: u32 = 256u;

@compute @workgroup_size(WORKGROUP)
fn full(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let i = (wg.y * groups.x + wg.x) * WORKGROUP + local;
    if i < params.n {
        out[i] = params.scalar;
    }
}
