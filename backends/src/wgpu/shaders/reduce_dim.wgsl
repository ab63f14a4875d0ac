
// Reductions along dimensions: each row of a contiguous `[rows, n]` matrix of `f32` words (the
// host gathers the input with its reduced dimensions innermost, `rules::reduction_view`) to one
// result. One workgroup per row: each invocation folds the elements `local, local + 256, …` of
// its row in order, then the workgroup combines its 256 partial results as a tree in workgroup
// memory. Rows never hold 0 elements here (the host fills those results itself).

struct Params {
    n: u32,       // elements per row
    m: u32,       // rows (the grid may have a few more workgroups)
    k: u32,       // unused here
    scalar: f32,  // factor on each sum: 1, or 1/n for the mean
}

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

// Must equal `REDUCE_WORKGROUP` in `pipelines.rs`.
const WORKGROUP: u32 = 256u;
// No element yet: loses to every element.
const NONE: u32 = 0xffffffffu;

var<workgroup> sums: array<f32, WORKGROUP>;
var<workgroup> best_bits: array<u32, WORKGROUP>;
var<workgroup> best_at: array<u32, WORKGROUP>;

fn row_of(workgroup: vec3<u32>, groups: vec3<u32>) -> u32 {
    return workgroup.y * groups.x + workgroup.x;
}

@compute @workgroup_size(WORKGROUP)
fn sum_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
            @builtin(local_invocation_index) local: u32) {
    let row = row_of(wg, groups);
    var acc = 0.0;
    if row < params.m {
        let base = row * params.n;
        for (var j = local; j < params.n; j += WORKGROUP) {
            acc += bitcast<f32>(x[base + j]);
        }
    }
    sums[local] = acc;
    workgroupBarrier();
    for (var stride = WORKGROUP / 2u; stride > 0u; stride /= 2u) {
        if local < stride {
            sums[local] += sums[local + stride];
        }
        workgroupBarrier();
    }
    if local == 0u && row < params.m {
        out[row] = bitcast<u32>(sums[0] * params.scalar);
    }
}

// Whether element `a` at index `ia` comes before element `b` at `ib` in the maximum's order (the
// op's docs): a NaN before any number, the first NaN first; a larger number before a smaller;
// of equal numbers (−0 equals +0) the first. A total order, so any tree finds the same winner.
fn beats(a: u32, ia: u32, b: u32, ib: u32) -> bool {
    let a_nan = nan_bits(a);
    if a_nan != nan_bits(b) {
        return a_nan;
    }
    if !a_nan {
        let oa = float_order(a);
        let ob = float_order(b);
        if oa != ob {
            return oa > ob;
        }
    }
    return ia < ib;
}

// Leaves the maximum of row `row` (its bits and index) in `best_bits[0]` and `best_at[0]`.
fn max_of_row(row: u32, local: u32) {
    var bits = 0u;
    var at = NONE;
    if row < params.m {
        let base = row * params.n;
        for (var j = local; j < params.n; j += WORKGROUP) {
            let v = x[base + j];
            if at == NONE || beats(v, j, bits, at) {
                bits = v;
                at = j;
            }
        }
    }
    best_bits[local] = bits;
    best_at[local] = at;
    workgroupBarrier();
    for (var stride = WORKGROUP / 2u; stride > 0u; stride /= 2u) {
        if local < stride {
            let other = local + stride;
            let mine = best_at[local];
            let theirs = best_at[other];
            if theirs != NONE
                && (mine == NONE || beats(best_bits[other], theirs, best_bits[local], mine)) {
                best_bits[local] = best_bits[other];
                best_at[local] = theirs;
            }
        }
        workgroupBarrier();
    }
}

// `max_dim`: the maximum's bits, exactly.
@compute @workgroup_size(WORKGROUP)
fn max_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
            @builtin(local_invocation_index) local: u32) {
    let row = row_of(wg, groups);
    max_of_row(row, local);
    if local == 0u && row < params.m {
        out[row] = best_bits[0];
    }
}

// `argmax`: the maximum's index in its row, an `i64` (two words, low first).
@compute @workgroup_size(WORKGROUP)
fn argmax_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let row = row_of(wg, groups);
    max_of_row(row, local);
    if local == 0u && row < params.m {
        out[2u * row] = best_at[0];
        out[2u * row + 1u] = 0u;
    }
}

// Short rows (`SHORT_ROW` elements or fewer, `reduce_rows` decides): one invocation per row,
// folding it in order, with no workgroup memory or barriers. A workgroup of 256 for a row of a
// few elements would leave most invocations idle and wait at eight barriers (on a CPU adapter,
// such as a browser's software WebGPU, those barriers are most of the time).

// Must equal `DIRECT_WORKGROUP` in `shaders.rs`.
const SHORT_WORKGROUP: u32 = 64u;

fn short_row(wg: vec3<u32>, groups: vec3<u32>, local: u32) -> u32 {
    return (wg.y * groups.x + wg.x) * SHORT_WORKGROUP + local;
}

@compute @workgroup_size(SHORT_WORKGROUP)
fn sum_short_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                  @builtin(local_invocation_index) local: u32) {
    let row = short_row(wg, groups, local);
    if row >= params.m {
        return;
    }
    let base = row * params.n;
    var acc = 0.0;
    for (var j = 0u; j < params.n; j++) {
        acc += bitcast<f32>(x[base + j]);
    }
    out[row] = bitcast<u32>(acc * params.scalar);
}

// The maximum of a short row: its bits and index, in `beats`' order.
fn max_of_short_row(row: u32) -> vec2<u32> {
    let base = row * params.n;
    var bits = x[base];
    var at = 0u;
    for (var j = 1u; j < params.n; j++) {
        let v = x[base + j];
        if beats(v, j, bits, at) {
            bits = v;
            at = j;
        }
    }
    return vec2<u32>(bits, at);
}

@compute @workgroup_size(SHORT_WORKGROUP)
fn max_short_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                  @builtin(local_invocation_index) local: u32) {
    let row = short_row(wg, groups, local);
    if row < params.m {
        out[row] = max_of_short_row(row).x;
    }
}

@compute @workgroup_size(SHORT_WORKGROUP)
fn argmax_short_rows(@builtin(workgroup_id) wg: vec3<u32>,
                     @builtin(num_workgroups) groups: vec3<u32>,
                     @builtin(local_invocation_index) local: u32) {
    let row = short_row(wg, groups, local);
    if row < params.m {
        out[2u * row] = max_of_short_row(row).y;
        out[2u * row + 1u] = 0u;
    }
}
