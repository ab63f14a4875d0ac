// Elementwise math shared by `unary.wgsl`, `strided_unary.wgsl` and `factories.wgsl` (the
// pipelines prepend it). Special values are decided on the bits, before any float arithmetic:
// WGSL leaves `log` of a negative number, `sqrt` of one, and infinities and NaN in the built-ins
// to the implementation, GL need not honour NaN in comparisons, and GPUs may flush subnormals to
// zero inside arithmetic; bit tests give the oracle's answers everywhere.

const SIGN_BIT: u32 = 0x80000000u;
const MAGNITUDE: u32 = 0x7fffffffu;
const INFINITY_BITS: u32 = 0x7f800000u;
const QUIET_NAN_BITS: u32 = 0x7fc00000u;
// Magnitudes below this are subnormal (or zero).
const SMALLEST_NORMAL_BITS: u32 = 0x00800000u;

// The float of `bits`, at run time: WGSL forbids infinities and NaN as the value of a constant
// expression (Chromium's compiler rejects `bitcast<f32>(INFINITY_BITS)`), and a call to a
// function is never one.
fn f32_of_bits(bits: u32) -> f32 {
    return bitcast<f32>(bits);
}

// max(x, 0) as the CPU computes it: 0 for a negative number (−inf included), x itself for NaN,
// ±0 and positive numbers. Decided on the bits: on Mesa's GL `select(v, 0.0, v < 0.0)` gives 0
// for a NaN `v`, and WGSL's `max` leaves NaN to the driver.
fn relu_f32(x: f32) -> f32 {
    let bits = bitcast<u32>(x);
    let magnitude = bits & MAGNITUDE;
    if (bits & SIGN_BIT) != 0u && magnitude != 0u && magnitude <= INFINITY_BITS {
        return 0.0;
    }
    return x;
}

// ln(x): -inf at ±0, NaN below 0 and at NaN, +inf at +inf. A subnormal x = m·2⁻¹⁴⁹ is computed
// as ln(m) − 149·ln 2, so a GPU that flushes subnormals still gives its logarithm.
fn log_f32(x: f32) -> f32 {
    let bits = bitcast<u32>(x);
    let magnitude = bits & MAGNITUDE;
    if magnitude > INFINITY_BITS || bits == INFINITY_BITS {
        return x; // NaN, +inf
    }
    if magnitude == 0u {
        return f32_of_bits(INFINITY_BITS | SIGN_BIT);
    }
    if (bits & SIGN_BIT) != 0u {
        return f32_of_bits(QUIET_NAN_BITS);
    }
    if magnitude < SMALLEST_NORMAL_BITS {
        // 149·ln 2, rounded once (an abstract constant).
        return log(f32(magnitude)) - 103.27892990343184;
    }
    return log(x);
}

// √x: ±0 and NaN as they are (√−0 = −0), NaN below 0, +inf at +inf. A subnormal
// x = m·2⁻¹⁴⁹ = 2m·2⁻¹⁵⁰ is √(2m)·2⁻⁷⁵, exact scaling of a normal root.
fn sqrt_f32(x: f32) -> f32 {
    let bits = bitcast<u32>(x);
    let magnitude = bits & MAGNITUDE;
    if magnitude > INFINITY_BITS || bits == INFINITY_BITS || magnitude == 0u {
        return x; // NaN, +inf, ±0
    }
    if (bits & SIGN_BIT) != 0u {
        return f32_of_bits(QUIET_NAN_BITS);
    }
    if magnitude < SMALLEST_NORMAL_BITS {
        return ldexp(sqrt(f32(2u * magnitude)), -75);
    }
    return sqrt(x);
}

// tanh(x) = sign(x)·t(|x|). Below 2⁻¹² it rounds to x itself (the next term, x³/3, is below half
// an ulp), returned untouched so zeros keep their sign and subnormals survive. Below 0.55 a
// Taylor polynomial (its first omitted term is under 2⁻²⁷ relative), where 1 − 2/(e^{2a} + 1)
// would cancel; above, that formula, whose exponential cannot overflow into a NaN: from 9.1 on
// the result rounds to 1, and is set so.
fn tanh_f32(x: f32) -> f32 {
    let bits = bitcast<u32>(x);
    let magnitude = bits & MAGNITUDE;
    if magnitude > INFINITY_BITS || magnitude < 0x39800000u {
        return x; // NaN, or |x| < 2⁻¹²
    }
    let a = bitcast<f32>(magnitude);
    var t = 1.0;
    if a < 0.55 {
        let z = a * a;
        var p = 0.000590027440945586;
        p = p * z - 0.0014558343870513183;
        p = p * z + 0.003592128036572481;
        p = p * z - 0.008863235529902197;
        p = p * z + 0.021869488536155203;
        p = p * z - 0.05396825396825397;
        p = p * z + 0.13333333333333333;
        p = p * z - 0.3333333333333333;
        t = a + a * (z * p);
    } else if a < 9.1 {
        t = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
    }
    return bitcast<f32>(bitcast<u32>(t) | (bits & SIGN_BIT));
}

// 1 / (1 + e⁻ˣ) from e = e^−|x| ≤ 1, which never overflows: 1 / (1 + e) for x ≥ 0, e / (1 + e)
// below (the op's documented form). e is set to 0 from |x| > 104 on, where it rounds to 0 anyway,
// so infinities need no built-in at ±inf.
fn sigmoid_f32(x: f32) -> f32 {
    let bits = bitcast<u32>(x);
    let magnitude = bits & MAGNITUDE;
    if magnitude > INFINITY_BITS {
        return x;
    }
    let a = bitcast<f32>(magnitude);
    let e = select(exp(-a), 0.0, a > 104.0);
    let negative = (bits & SIGN_BIT) != 0u;
    return select(1.0, e, negative) / (1.0 + e);
}

// ln(u) for u in [2⁻²⁴, 1] (`randn`'s uniform): in [0.5, 1] as 2·atanh((u − 1)/(u + 1)), a series
// with relative accuracy where the built-in promises only an absolute 2⁻²¹ (so √(−2 ln u) stays
// accurate as u nears 1); below 0.5 the built-in, within 3 ulp there.
fn ln_unit(u: f32) -> f32 {
    if u < 0.5 {
        return log(u);
    }
    let s = (u - 1.0) / (u + 1.0);
    let z = s * s;
    var p = 1.0 / 15.0;
    p = p * z + 1.0 / 13.0;
    p = p * z + 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z + 1.0 / 7.0;
    p = p * z + 1.0 / 5.0;
    p = p * z + 1.0 / 3.0;
    return 2.0 * (s + s * (z * p));
}

// cos(π·t) for t in [−1, 1], accurate to a few ulp (the built-in `cos` promises an absolute 2⁻¹¹):
// folded onto b = |t| in [0, 0.5] (cos(π(1 − b)) = −cos(πb), 1 − b exact), then a Taylor
// polynomial of cos(πb) up to b = 0.25 and of sin(π(0.5 − b)) above (0.5 − b exact, so the result
// keeps its relative accuracy near the zero at b = 0.5).
fn cos_pi(t: f32) -> f32 {
    var b = abs(t);
    var sign = 1.0;
    if b > 0.5 {
        b = 1.0 - b;
        sign = -1.0;
    }
    if b <= 0.25 {
        let z = b * b;
        var p = 0.001929574309403922;
        p = p * z - 0.02580689139001405;
        p = p * z + 0.23533063035889312;
        p = p * z - 1.3352627688545893;
        p = p * z + 4.058712126416768;
        p = p * z - 4.934802200544679;
        return sign * (1.0 + z * p);
    }
    let c = 0.5 - b;
    let z = c * c;
    var p = 0.00046630280576761234;
    p = p * z - 0.007370430945714348;
    p = p * z + 0.08214588661112819;
    p = p * z - 0.5992645293207919;
    p = p * z + 2.550164039877345;
    p = p * z - 5.167712780049969;
    return sign * (c * 3.141592653589793 + c * (z * p));
}
