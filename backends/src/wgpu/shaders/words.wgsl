
// Helpers on 32-bit words for the shaders that bind their arrays as `array<u32>` (prepended to
// them): a float's order and NaN decided on its bits, so that comparisons and maxima are exact on
// every GPU (GL need not honour NaN in float comparisons, and a GPU that flushes subnormals would
// call 1e-40 equal to 0).

// Whether the float with these bits is a NaN.
fn nan_bits(bits: u32) -> bool {
    return (bits & 0x7fffffffu) > 0x7f800000u;
}

// An `i32` ordered as the floats with these bits are (not NaN: test `nan_bits` first), with −0
// equal to +0: positive floats order as their bits do, negative ones in reverse.
fn float_order(bits: u32) -> i32 {
    let canonical = select(bits, 0u, (bits & 0x7fffffffu) == 0u);
    let i = bitcast<i32>(canonical);
    return select(i, i ^ 0x7fffffff, i < 0);
}

// `v` as the nearest `f32`, ties to even (WGSL's `f32(v)` may round either way past 2²⁴).
fn u32_to_f32(v: u32) -> f32 {
    if v < 0x1000000u {
        return f32(v);
    }
    // Keep the 24 leading bits, round on the dropped ones (at least one, at most eight).
    let dropped = firstLeadingBit(v) - 23u;
    var kept = v >> dropped;
    let rest = v & ((1u << dropped) - 1u);
    let half = 1u << (dropped - 1u);
    if rest > half || (rest == half && (kept & 1u) == 1u) {
        kept += 1u;
    }
    return ldexp(f32(kept), i32(dropped));
}
