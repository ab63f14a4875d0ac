
// `where`: `out[i] = cond ? x : y`, each of the three read through its own strided (and
// broadcast) layout: the condition `bool` words, the values any dtype's words (an `i64` value is
// two words: the host gives the layouts an innermost dimension of two words, the condition stride
// 0 along it). A pure selection of bits: NaN payloads and −0 come through.

@group(0) @binding(0) var<storage, read> cond: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> y: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP)
fn where_words(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        // The condition is the first operand (`.x`), the values the second and third.
        let at = offsets3(i);
        out[i] = select(y[at.z], x[at.y], cond[at.x] != 0u);
    }
}
