
// Word kernels of one operand, over any strided layout: gathers and scatters of 32-bit words
// (`bool` tensors, and `i64` tensors as views of their words: the host adds an innermost
// dimension of two words), and `to_dtype` between `f32`, `bool` and `i64`, decided on the bits.

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP)
fn gather_words(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = x[offsets(i).x];
    }
}

// `copy_` (see `scatter_strided` in `strided_unary.wgsl`): word `i` of the source view to word `i`
// of the destination view, the second operand's layout in the buffer bound as `out`.
@compute @workgroup_size(WORKGROUP)
fn scatter_words(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                 @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = offsets(i);
        out[at.y] = x[at.x];
    }
}

// Non-zero (NaN included) is true; ±0 is false.
@compute @workgroup_size(WORKGROUP)
fn f32_to_bool(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = select(0u, 1u, (x[offsets(i).x] & 0x7fffffffu) != 0u);
    }
}

// 1.0 or 0.0.
@compute @workgroup_size(WORKGROUP)
fn bool_to_f32(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = select(0u, 0x3f800000u, x[offsets(i).x] != 0u);
    }
}

// 1 or 0, as two words (low first) per element.
@compute @workgroup_size(WORKGROUP)
fn bool_to_i64(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[2u * i] = select(0u, 1u, x[offsets(i).x] != 0u);
        out[2u * i + 1u] = 0u;
    }
}

// Non-zero is true. The operand's layout is in elements; its words are at twice its offsets.
@compute @workgroup_size(WORKGROUP)
fn i64_to_bool(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = 2u * offsets(i).x;
        out[i] = select(0u, 1u, (x[at] | x[at + 1u]) != 0u);
    }
}

// Rust's `f as i64`: toward zero, saturating at the ends, NaN to 0. Two words (low first) per
// element.
@compute @workgroup_size(WORKGROUP)
fn f32_to_i64(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
              @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i >= params.n {
        return;
    }
    let bits = x[offsets(i).x];
    let negative = (bits & 0x80000000u) != 0u;
    let exponent = i32((bits >> 23u) & 0xffu) - 127;
    var lo = 0u;
    var hi = 0u;
    if nan_bits(bits) || exponent < 0 {
        // NaN, and |x| < 1, are 0.
    } else if exponent >= 63 {
        // |x| ≥ 2⁶³ (infinities too): the end of x's sign (−2⁶³ itself is exact there).
        lo = select(0xffffffffu, 0u, negative);
        hi = select(0x7fffffffu, 0x80000000u, negative);
    } else {
        // The 24-bit significand, shifted to its place (the truncated bits fall off).
        let significand = (bits & 0x7fffffu) | 0x800000u;
        if exponent <= 23 {
            lo = significand >> u32(23 - exponent);
        } else {
            let shift = u32(exponent - 23); // 1 ..= 39
            if shift < 32u {
                lo = significand << shift;
                hi = significand >> (32u - shift);
            } else {
                hi = significand << (shift - 32u);
            }
        }
        if negative {
            // Two's complement over both words: invert, add one, carry into the high word.
            lo = ~lo + 1u;
            hi = ~hi + select(0u, 1u, lo == 0u);
        }
    }
    out[2u * i] = lo;
    out[2u * i + 1u] = hi;
}
