
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

// The 64-bit helpers of `i64_to_f32`: a pair `(low, high)` as one unsigned number.

// 2^shift, for shift < 64.
fn power_of_two(shift: u32) -> vec2<u32> {
    if shift < 32u {
        return vec2<u32>(1u << shift, 0u);
    }
    return vec2<u32>(0u, 1u << (shift - 32u));
}

fn add_wide(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn less_wide(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

// Significant bits of `v` (0 for 0).
fn bit_length(v: vec2<u32>) -> u32 {
    if v.y != 0u {
        return 33u + firstLeadingBit(v.y);
    }
    if v.x != 0u {
        return 1u + firstLeadingBit(v.x);
    }
    return 0u;
}

// `v` rounded to `keep` significant bits, to nearest, ties to even (a carry may lengthen it to a
// power of two, which still has one significant bit).
fn round_to_bits(v: vec2<u32>, keep: u32) -> vec2<u32> {
    let length = bit_length(v);
    if length <= keep {
        return v;
    }
    let unit = power_of_two(length - keep);
    let half = power_of_two(length - keep - 1u);
    // unit − 1: the dropped bits' mask.
    let mask = vec2<u32>(unit.x - 1u, unit.y - select(0u, 1u, unit.x == 0u));
    let rest = v & mask;
    var kept = v & ~mask;
    let odd = any((kept & unit) != vec2<u32>(0u));
    if less_wide(half, rest) || (all(rest == half) && odd) {
        kept = add_wide(kept, unit);
    }
    return kept;
}

// As the CPU converts (`(i as f64) as f32`): rounded to `f64`'s 53 bits first, then to `f32`'s 24,
// each to nearest, ties to even (the double rounding differs from one rounding past 2⁵³). The
// magnitude, once rounded to 24 bits, is the exact sum of its two words' values.
@compute @workgroup_size(WORKGROUP)
fn i64_to_f32(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
              @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i >= params.n {
        return;
    }
    let at = 2u * offsets(i).x;
    var magnitude = vec2<u32>(x[at], x[at + 1u]);
    let negative = (magnitude.y & 0x80000000u) != 0u;
    if negative {
        // Two's complement negation (i64::MIN gives 2⁶³, which fits unsigned).
        let lo = ~magnitude.x + 1u;
        magnitude = vec2<u32>(lo, ~magnitude.y + select(0u, 1u, lo == 0u));
    }
    let rounded = round_to_bits(round_to_bits(magnitude, 53u), 24u);
    let value = f32(rounded.y) * 4294967296.0 + f32(rounded.x);
    out[i] = bitcast<u32>(value) | select(0u, 0x80000000u, negative);
}
