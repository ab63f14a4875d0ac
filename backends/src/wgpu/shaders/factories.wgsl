
// The factories `arange`, `rand` and `randn`: element `i` of a contiguous output from `i` alone
// (no input), written as words. `math.wgsl` and `words.wgsl` are prepended.
//
// `rand`/`randn`: element `i` is the Philox4x32-10 block of counter `offset + i` (mod 2⁶⁴) under
// key `seed`, turned into a value exactly as `switchyard::random` does on the CPU: `rand` gives the
// same bits; `randn` computes its Box–Muller transform in `f32` (`ln_unit`, `cos_pi`).

// The head of the uniform, named as these kernels use it (`strided.wgsl` has the full layout).
struct Params {
    n: u32,           // elements
    seed_lo: u32,     // the key, low word
    seed_hi: u32,     // the key, high word
    scalar: f32,      // unused here
    rank: u32,        // unused here
    offset_lo: u32,   // the first counter, low word
    offset_hi: u32,   // the first counter, high word
}

@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;

// Must equal `ELEMENTWISE_WORKGROUP` in `pipelines.rs`.
const WORKGROUP: u32 = 256u;

fn index(workgroup: vec3<u32>, groups: vec3<u32>, local: u32) -> u32 {
    return (workgroup.y * groups.x + workgroup.x) * WORKGROUP + local;
}

// `[0, n)` as `f32`, rounded to nearest, ties to even, as the CPU's conversion rounds.
@compute @workgroup_size(WORKGROUP)
fn arange_f32(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
              @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = bitcast<u32>(u32_to_f32(i));
    }
}

// `[0, n)` as `i64`: two words, low first (`n` fits 32 bits).
@compute @workgroup_size(WORKGROUP)
fn arange_i64(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
              @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[2u * i] = i;
        out[2u * i + 1u] = 0u;
    }
}

// The 64-bit product of two words: (high word, low word). WGSL has no widening multiply: the
// four 16-bit partial products, the middle ones carried into the high word.
fn multiply_wide(a: u32, b: u32) -> vec2<u32> {
    let a_lo = a & 0xffffu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xffffu;
    let b_hi = b >> 16u;
    let lo_lo = a_lo * b_lo;
    let lo_hi = a_lo * b_hi;
    let hi_lo = a_hi * b_lo;
    let middle = (lo_lo >> 16u) + (lo_hi & 0xffffu) + (hi_lo & 0xffffu);
    let high = a_hi * b_hi + (lo_hi >> 16u) + (hi_lo >> 16u) + (middle >> 16u);
    return vec2<u32>(high, a * b);
}

// Random123's philox4x32-10 of counter `(counter, 0, 0)` under `key` (`random::philox`).
fn philox(counter: vec2<u32>, key_words: vec2<u32>) -> vec4<u32> {
    var c = vec4<u32>(counter, 0u, 0u);
    var key = key_words;
    for (var round = 0u; round < 10u; round++) {
        if round > 0u {
            key += vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
        }
        let p0 = multiply_wide(0xD2511F53u, c.x);
        let p1 = multiply_wide(0xCD9E8D57u, c.z);
        c = vec4<u32>(p1.x ^ c.y ^ key.x, p1.y, p0.x ^ c.w ^ key.y, p0.y);
    }
    return c;
}

// The Philox block of element `i`: counter `offset + i`, carried into the high word.
fn block(i: u32) -> vec4<u32> {
    let lo = params.offset_lo + i;
    let hi = params.offset_hi + select(0u, 1u, lo < i);
    return philox(vec2<u32>(lo, hi), vec2<u32>(params.seed_lo, params.seed_hi));
}

// Uniform in [0, 1): the 24 high bits of the first word, times 2⁻²⁴ (exact).
@compute @workgroup_size(WORKGROUP)
fn rand_f32(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
            @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let w = block(i);
        out[i] = bitcast<u32>(ldexp(f32(w.x >> 8u), -24));
    }
}

// Box–Muller: √(−2 ln u₁)·cos(π(2u₂ − 1)), u₁ = (k₁ + 1)·2⁻²⁴ in (0, 1] from the first word and
// u₂ = k₂·2⁻²⁴ from the third, so 2u₂ − 1 = (2k₂ − 2²⁴)·2⁻²⁴ (both exact in `f32`).
@compute @workgroup_size(WORKGROUP)
fn randn_f32(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
             @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let w = block(i);
        let u1 = ldexp(f32((w.x >> 8u) + 1u), -24);
        let t = ldexp(f32(i32(2u * (w.z >> 8u)) - 0x1000000), -24);
        let radius = sqrt(-2.0 * ln_unit(u1));
        out[i] = bitcast<u32>(radius * cos_pi(t));
    }
}

// `full` of `bool` and `i64`: every word pair set to the value's words, computed on the host
// (`seed_lo`, `seed_hi` carry them here; equal for `bool`, whose elements are one word). `n` counts
// words.
@compute @workgroup_size(WORKGROUP)
fn fill_words(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
              @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        out[i] = select(params.seed_lo, params.seed_hi, (i & 1u) == 1u);
    }
}
