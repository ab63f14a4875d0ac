// `out[m, n] = x[m, k] · y[k, n]`, tiled: each 16×16 workgroup computes a 16×16 block of `out`,
// stepping along `k` one tile at a time. Per step the workgroup stages a tile of `x` and a tile of
// `y` in workgroup memory (each invocation loads one element of each), so every global element is
// read once per tile instead of once per product. Out-of-range tile elements are zeros, which
// handles sizes that are not multiples of 16 (and `k = 0`, which leaves every output 0).
//
// The operands may be any strided views (a transposed `x`, a column slice of `y`, an expanded
// row): each is read at its offset plus `row · stride.x + column · stride.y`, so a transpose costs
// no copy. The output is contiguous.

struct Params {
    n: u32,                           // columns of `y` and `out`
    m: u32,                           // rows of `x` and `out`
    k: u32,                           // columns of `x`, rows of `y`
    scalar: f32,                      // unused here
    rank: u32,                        // unused here
    x_offset: u32,                    // where `x[0, 0]` lies in its buffer
    y_offset: u32,                    // where `y[0, 0]` lies in its buffer
    unused: u32,
    sizes: array<vec4<u32>, 2>,       // unused here
    x_strides: array<vec4<u32>, 2>,   // `x`'s row and column steps, in `x_strides[0].xy`
    y_strides: array<vec4<u32>, 2>,   // `y`'s, in `y_strides[0].xy`
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

// Must equal `MATMUL_TILE` in `pipelines.rs`.
const TILE: u32 = 16u;

var<workgroup> x_tile: array<array<f32, TILE>, TILE>;
var<workgroup> y_tile: array<array<f32, TILE>, TILE>;

@compute @workgroup_size(TILE, TILE)
fn matmul(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let row = wg.y * TILE + local.y;
    let col = wg.x * TILE + local.x;
    let m = params.m;
    let n = params.n;
    let k = params.k;
    let xs = params.x_strides[0].xy;
    let ys = params.y_strides[0].xy;
    var acc = 0.0;
    let steps = (k + TILE - 1u) / TILE;
    for (var t = 0u; t < steps; t++) {
        let x_col = t * TILE + local.x;
        var a = 0.0;
        if row < m && x_col < k {
            a = x[params.x_offset + row * xs.x + x_col * xs.y];
        }
        x_tile[local.y][local.x] = a;
        let y_row = t * TILE + local.y;
        var b = 0.0;
        if y_row < k && col < n {
            b = y[params.y_offset + y_row * ys.x + col * ys.y];
        }
        y_tile[local.y][local.x] = b;
        workgroupBarrier();
        for (var i = 0u; i < TILE; i++) {
            acc += x_tile[local.y][i] * y_tile[i][local.x];
        }
        workgroupBarrier();
    }
    if row < m && col < n {
        out[row * n + col] = acc;
    }
}

// Must equal `DIRECT_WORKGROUP` in `shaders.rs`.
const DIRECT_WORKGROUP: u32 = 64u;

// The same product without workgroup memory or barriers: one invocation per output element,
// reading its row of `x` and its column of `y` directly. For small products, where the tiles'
// barriers cost more than the loads they save (on a CPU adapter, such as a browser's software
// WebGPU, they cost most of the time), `matmul_wgpu` picks it. The grid is flat (`grid`), folded
// into rows of workgroups.
@compute @workgroup_size(DIRECT_WORKGROUP)
fn matmul_direct(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                 @builtin(local_invocation_index) local: u32) {
    let i = (wg.y * groups.x + wg.x) * DIRECT_WORKGROUP + local;
    let m = params.m;
    let n = params.n;
    if i >= m * n {
        return;
    }
    let row = i / n;
    let col = i % n;
    let xs = params.x_strides[0].xy;
    let ys = params.y_strides[0].xy;
    var at_x = params.x_offset + row * xs.x;
    var at_y = params.y_offset + col * ys.y;
    var acc = 0.0;
    for (var j = 0u; j < params.k; j++) {
        acc += x[at_x] * y[at_y];
        at_x += xs.y;
        at_y += ys.x;
    }
    out[i] = acc;
}
