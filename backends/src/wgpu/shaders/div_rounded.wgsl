// `div_rounded` of two `f32` operands in any strided (and broadcast) layout: `params.k` 0 rounds
// toward zero, 1 toward negative infinity. Bit for bit the naive CPU backend's answer
// (`cpu/naive_div.rs`), on every GPU: no float arithmetic at all. WGSL's `/` on `f32` is only
// within 2.5 ulp, GPUs may flush subnormals and may fuse a product into a sum, and any of those
// moves a quotient just under an integer onto it (or off it). So every IEEE operation the CPU
// performs is done here on the bits, in integer arithmetic, rounded to nearest, ties to even, as
// IEEE 754 rounds it: `f_add` (and subtraction), `f_div`, `f_fmod` (exact, as C's `fmod` and
// Rust's `%`), `f_trunc`, `f_floor`.
//
//   trunc: (x / y).trunc()
//   floor: PyTorch's floor division from the exact remainder (`floor_div` below, step by step
//          the CPU's `floor_div_f32`).

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> y: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

const SIGN: u32 = 0x80000000u;
const MAG: u32 = 0x7fffffffu;
const INF: u32 = 0x7f800000u;
const QNAN: u32 = 0x7fc00000u;
const HIDDEN: u32 = 0x00800000u;
const FRACTION: u32 = 0x007fffffu;
const ONE: u32 = 0x3f800000u;
const HALF: u32 = 0x3f000000u;

fn is_nan(a: u32) -> bool {
    return (a & MAG) > INF;
}

// A finite non-zero magnitude as a significand in [2²³, 2²⁴) and its exponent (biased; below 1
// for a subnormal, whose significand is shifted up to the hidden bit).
fn unpack(a: u32) -> vec2<i32> {
    let field = (a >> 23u) & 0xffu;
    if field != 0u {
        return vec2<i32>(i32((a & FRACTION) | HIDDEN), i32(field));
    }
    let m = a & FRACTION;
    let shift = 23u - firstLeadingBit(m);
    return vec2<i32>(i32(m << shift), 1 - i32(shift));
}

// `m >> s` with the bits shifted out ORed into the lowest bit (the sticky bit), for any `s`.
fn shift_sticky(m: u32, s: u32) -> u32 {
    if s == 0u {
        return m;
    }
    if s >= 32u {
        return select(0u, 1u, m != 0u);
    }
    let lost = (m & ((1u << s) - 1u)) != 0u;
    return (m >> s) | select(0u, 1u, lost);
}

// The float of `sign`, biased exponent `e` and significand `m` with `extra` bits below its
// lowest (the last of them sticky), with `m`'s leading bit at `23 + extra` (or lower only where
// `e` is 1: a subnormal), rounded to nearest, ties to even; `e` below 1 is a subnormal result,
// shifted into place before it is rounded; past the largest exponent, infinity.
fn round_pack(sign: u32, e_in: i32, m_in: u32, extra: u32) -> u32 {
    var e = e_in;
    var m = m_in;
    if e < 1 {
        m = shift_sticky(m, u32(1 - e));
        e = 1;
    }
    let rest = m & ((1u << extra) - 1u);
    let half = 1u << (extra - 1u);
    m = m >> extra;
    if rest > half || (rest == half && (m & 1u) == 1u) {
        m += 1u;
    }
    if m >= (HIDDEN << 1u) {
        m = m >> 1u;
        e += 1;
    }
    if e >= 255 {
        return sign | INF;
    }
    if m < HIDDEN {
        // Subnormal (or zero): the exponent field is 0. A subnormal rounded up to 2⁻¹²⁶ has the
        // hidden bit set, which is exponent field 1: the encoding carries it.
        return sign | m;
    }
    return sign | (u32(e) << 23u) | (m & FRACTION);
}

// a + b, rounded as IEEE.
fn f_add(a_in: u32, b_in: u32) -> u32 {
    if is_nan(a_in) || is_nan(b_in) {
        return QNAN;
    }
    var a = a_in;
    var b = b_in;
    if (a & MAG) == INF || (b & MAG) == INF {
        if (a & MAG) == INF && (b & MAG) == INF && a != b {
            return QNAN; // inf − inf
        }
        return select(b, a, (a & MAG) == INF);
    }
    if (a & MAG) == 0u && (b & MAG) == 0u {
        return a & b; // −0 only for −0 + −0
    }
    if (a & MAG) == 0u {
        return b;
    }
    if (b & MAG) == 0u {
        return a;
    }
    if (a & MAG) < (b & MAG) {
        let t = a;
        a = b;
        b = t;
    }
    // |a| ≥ |b| > 0. Significands with 6 bits below, where the field's exponent is 1 for a
    // subnormal (whose hidden bit is 0): the same scale as the smallest normals.
    let ea = max(i32((a >> 23u) & 0xffu), 1);
    let eb = max(i32((b >> 23u) & 0xffu), 1);
    let ma = (select(0u, HIDDEN, ((a >> 23u) & 0xffu) != 0u) | (a & FRACTION)) << 6u;
    var mb = (select(0u, HIDDEN, ((b >> 23u) & 0xffu) != 0u) | (b & FRACTION)) << 6u;
    mb = shift_sticky(mb, u32(ea - eb));
    var m: u32;
    if ((a ^ b) & SIGN) == 0u {
        m = ma + mb;
    } else {
        m = ma - mb;
    }
    if m == 0u {
        return 0u; // exact cancellation: +0
    }
    var e = ea;
    if m >= (HIDDEN << 7u) {
        m = shift_sticky(m, 1u);
        e += 1;
    } else {
        // Normalise up to the hidden bit's place (bit 29), not below exponent 1. Left shifts are
        // exact: they happen only where the sticky bit is 0 or one place suffices.
        let lead = i32(firstLeadingBit(m));
        let up = min(29 - lead, e - 1);
        if up > 0 {
            m = m << u32(up);
            e -= up;
        }
    }
    return round_pack(a & SIGN, e, m, 6u);
}

fn f_sub(a: u32, b: u32) -> u32 {
    return f_add(a, b ^ SIGN);
}

// a / b, rounded as IEEE.
fn f_div(a: u32, b: u32) -> u32 {
    if is_nan(a) || is_nan(b) {
        return QNAN;
    }
    let sign = (a ^ b) & SIGN;
    let a_inf = (a & MAG) == INF;
    let b_inf = (b & MAG) == INF;
    let a_zero = (a & MAG) == 0u;
    let b_zero = (b & MAG) == 0u;
    if (a_inf && b_inf) || (a_zero && b_zero) {
        return QNAN;
    }
    if a_inf || b_zero {
        return sign | INF;
    }
    if b_inf || a_zero {
        return sign;
    }
    let ua = unpack(a);
    let ub = unpack(b);
    var r = u32(ua.x);
    let mb = u32(ub.x);
    var e = ua.y - ub.y + 127;
    if r < mb {
        r = r << 1u;
        e -= 1;
    }
    // r/mb in [1, 2): 26 quotient bits by long division (r < 2·mb < 2²⁵ throughout), then the
    // remainder's sticky bit.
    var q = 0u;
    for (var i = 0u; i < 26u; i++) {
        q = q << 1u;
        if r >= mb {
            r -= mb;
            q |= 1u;
        }
        r = r << 1u;
    }
    let m = (q << 1u) | select(0u, 1u, r != 0u);
    return round_pack(sign, e, m, 3u);
}

// fmod(a, b): a − n·b for the integer n = trunc(a / b), exact (a float), with a's sign; NaN for
// a NaN operand, an infinite a or a zero b; a itself for an infinite b.
fn f_fmod(a: u32, b: u32) -> u32 {
    if is_nan(a) || is_nan(b) || (a & MAG) == INF || (b & MAG) == 0u {
        return QNAN;
    }
    if (b & MAG) == INF || (a & MAG) < (b & MAG) {
        return a;
    }
    let sign = a & SIGN;
    if (a & MAG) == (b & MAG) {
        return sign;
    }
    let ua = unpack(a);
    let ub = unpack(b);
    var m = u32(ua.x);
    let mb = u32(ub.x);
    var e = ua.y;
    // Long division by mb, keeping only the remainder (m < 2·mb < 2²⁵ throughout).
    for (; e > ub.y; e--) {
        if m >= mb {
            m -= mb;
            if m == 0u {
                return sign;
            }
        }
        m = m << 1u;
    }
    if m >= mb {
        m -= mb;
        if m == 0u {
            return sign;
        }
    }
    // Normalise; the remainder is a float, so a subnormal one shifts back down exactly.
    let up = 23 - i32(firstLeadingBit(m));
    m = m << u32(up);
    e -= up;
    if e < 1 {
        return sign | (m >> u32(1 - e));
    }
    return sign | (u32(e) << 23u) | (m & FRACTION);
}

// trunc(a): integers (|a| ≥ 2²³), infinities and NaN as they are; ±0 below 1.
fn f_trunc(a: u32) -> u32 {
    let field = (a >> 23u) & 0xffu;
    if field >= 150u {
        return a;
    }
    if field < 127u {
        return a & SIGN;
    }
    let fraction = (1u << (150u - field)) - 1u;
    return a & ~fraction;
}

// floor(a): trunc(a), less one for a negative a with a fraction.
fn f_floor(a: u32) -> u32 {
    let t = f_trunc(a);
    if t != a && (a & SIGN) != 0u {
        return f_sub(t, ONE);
    }
    return t;
}

// Whether `a` is a number greater than 0.5.
fn above_half(a: u32) -> bool {
    return (a & SIGN) == 0u && a > HALF && a <= INF;
}

// The CPU's `floor_div_f32`, operation for operation:
//   if b == 0 { return a / b }
//   rem = a % b; q = (a − rem) / b
//   if rem != 0 && (b < 0) != (rem < 0) { q −= 1 }
//   if q == 0 { return copysign(0, a / b) }
//   fl = floor(q); if q − fl > 0.5 { fl + 1 } else { fl }
fn floor_div(a: u32, b: u32) -> u32 {
    if (b & MAG) == 0u {
        return f_div(a, b);
    }
    let rem = f_fmod(a, b);
    var q = f_div(f_sub(a, rem), b);
    // `<` is false for NaN, and `!= 0` true.
    let b_negative = (b & SIGN) != 0u && !is_nan(b);
    let rem_negative = (rem & SIGN) != 0u && (rem & MAG) != 0u && !is_nan(rem);
    if (rem & MAG) != 0u && b_negative != rem_negative {
        q = f_sub(q, ONE);
    }
    if (q & MAG) == 0u {
        // q is ±0 only for finite a and b with a/b of a's sign times b's.
        return (a ^ b) & SIGN;
    }
    let fl = f_floor(q);
    if above_half(f_sub(q, fl)) {
        return f_add(fl, ONE);
    }
    return fl;
}

@compute @workgroup_size(WORKGROUP)
fn div_rounded_f32(@builtin(workgroup_id) wg: vec3<u32>,
                   @builtin(num_workgroups) groups: vec3<u32>,
                   @builtin(local_invocation_index) local: u32) {
    let i = index(wg, groups, local);
    if i < params.n {
        let at = offsets(i);
        let a = x[at.x];
        let b = y[at.y];
        if params.k == 0u {
            out[i] = f_trunc(f_div(a, b));
        } else {
            out[i] = floor_div(a, b);
        }
    }
}
