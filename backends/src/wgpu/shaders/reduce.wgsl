// One pass of a sum: each workgroup adds up a chunk of `x` and writes one partial sum, times
// `scalar`, to `out[group]`. The host repeats passes over the partials until one value is left;
// only the last pass scales (by 1 for `sum`, by 1/len for `mean`).
//
// A chunk is WORKGROUP × PER_THREAD elements. Each invocation first adds PER_THREAD elements
// strided by WORKGROUP (neighbouring invocations read neighbouring elements), then the workgroup
// adds its WORKGROUP values as a tree in workgroup memory.

struct Params {
    n: u32,       // elements of `x`
    m: u32,       // workgroups that write a partial (the grid may have a few more)
    k: u32,       // unused here
    scalar: f32,  // factor applied to each partial
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

// Must equal `REDUCE_WORKGROUP` and `REDUCE_PER_THREAD` in `pipelines.rs`.
const WORKGROUP: u32 = 256u;
const PER_THREAD: u32 = 8u;

var<workgroup> partial: array<f32, WORKGROUP>;

@compute @workgroup_size(WORKGROUP)
fn sum_pass(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
            @builtin(local_invocation_index) local: u32) {
    let group = wg.y * groups.x + wg.x;
    let base = group * WORKGROUP * PER_THREAD;
    var acc = 0.0;
    for (var j = 0u; j < PER_THREAD; j++) {
        let i = base + j * WORKGROUP + local;
        if i < params.n {
            acc += x[i];
        }
    }
    partial[local] = acc;
    workgroupBarrier();
    for (var stride = WORKGROUP / 2u; stride > 0u; stride /= 2u) {
        if local < stride {
            partial[local] += partial[local + stride];
        }
        workgroupBarrier();
    }
    if local == 0u && group < params.m {
        out[group] = partial[0] * params.scalar;
    }
}
