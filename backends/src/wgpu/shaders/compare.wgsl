
// The comparisons `eq ne lt le gt ge` of two operands of one dtype, over any strided (and
// broadcast) layout, writing `bool` words (0 or 1). `params.k` picks the comparison (0 `eq`,
// 1 `ne`, 2 `lt`, 3 `le`, 4 `gt`, 5 `ge`: `Comparison` in `kernels_nn.rs`). Values are compared on
// their bits (`words.wgsl`), so NaN, −0 and subnormals get IEEE's answers on every GPU.

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> y: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

// Whether the comparison holds of two values whose order is `order` (−1, 0, 1); a NaN among them
// (`unordered`) makes every comparison false but `ne`.
fn holds(order: i32, unordered: bool) -> u32 {
    var result = false;
    switch params.k {
        case 0u: { result = order == 0; }
        case 1u: { result = order != 0; }
        case 2u: { result = order < 0; }
        case 3u: { result = order <= 0; }
        case 4u: { result = order > 0; }
        default: { result = order >= 0; }
    }
    if unordered {
        result = params.k == 1u;
    }
    return select(0u, 1u, result);
}

fn order_i32(a: i32, b: i32) -> i32 {
    return select(select(0, 1, a > b), -1, a < b);
}

fn order_u32(a: u32, b: u32) -> i32 {
    return select(select(0, 1, a > b), -1, a < b);
}

@compute @workgroup_size(WORKGROUP)
fn compare_f32(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = offsets(i);
        let a = x[at.x];
        let b = y[at.y];
        out[i] = holds(order_i32(float_order(a), float_order(b)), nan_bits(a) || nan_bits(b));
    }
}

// `bool` words are 0 or 1: false < true.
@compute @workgroup_size(WORKGROUP)
fn compare_bool(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = offsets(i);
        out[i] = holds(order_u32(x[at.x], y[at.y]), false);
    }
}

// Two words per element, low first (the layouts are in elements: words at twice the offsets): the
// signed high words decide, equal ones leave it to the unsigned low words.
@compute @workgroup_size(WORKGROUP)
fn compare_i64(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = 2u * offsets(i);
        var order = order_i32(bitcast<i32>(x[at.x + 1u]), bitcast<i32>(y[at.y + 1u]));
        if order == 0 {
            order = order_u32(x[at.x], y[at.y]);
        }
        out[i] = holds(order, false);
    }
}
