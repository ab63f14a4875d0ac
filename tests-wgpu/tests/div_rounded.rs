//! `div_rounded` (PyTorch's `div(x, y, rounding_mode="trunc" | "floor")`) on the GPU: bit for bit
//! the naive CPU backend's answer for every pair of `f32` values, special ones included (±0, ±∞,
//! NaN, subnormals, zero divisors, the largest values) and quotients within a few ulp of an
//! integer, where a division rounded otherwise than the CPU's would truncate or floor across the
//! integer. Any NaN matches any NaN; everything else must have the oracle's bits (`-0.0 ≠ 0.0`).

use switchyard::ops::{self, Rounding};
use switchyard::{DType, Device, Tensor};
use switchyard_tests_wgpu::{gpu, gpu_or_skip, naive};

const MODES: [Rounding; 2] = [Rounding::Trunc, Rounding::Floor];

fn f32s(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape).unwrap()
}

/// Asserts that `div_rounded(x, y, mode)` on the GPU has the naive CPU backend's bits.
#[track_caller]
fn assert_same_as_the_oracle(what: &str, x: &[f32], y: &[f32]) {
    let (xc, yc) = (f32s(x, &[x.len()]), f32s(y, &[y.len()]));
    for mode in MODES {
        let want = naive(|| ops::div_rounded(&xc, &yc, mode)).to_vec::<f32>();
        let got = ops::div_rounded(&gpu(&xc), &gpu(&yc), mode);
        assert_eq!((got.device(), got.dtype()), (Device::Wgpu, DType::F32));
        let got = got.to_vec::<f32>();
        let wrong: Vec<String> = (0..x.len())
            .filter(|&i| {
                let (g, w) = (got[i], want[i]);
                !(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()))
            })
            .take(5)
            .map(|i| {
                format!(
                    "div_rounded({:e} [{:#010x}], {:e} [{:#010x}]) = {:e} [{:#010x}], the CPU \
                     gives {:e} [{:#010x}]",
                    x[i],
                    x[i].to_bits(),
                    y[i],
                    y[i].to_bits(),
                    got[i],
                    got[i].to_bits(),
                    want[i],
                    want[i].to_bits()
                )
            })
            .collect();
        assert!(wrong.is_empty(), "{what}, {mode:?}:\n{}", wrong.join("\n"));
    }
}

/// A deterministic stream of 64-bit words (SplitMix64).
fn words(seed: u64) -> impl Iterator<Item = u64> {
    let mut state = seed;
    std::iter::repeat_with(move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

const SPECIALS: [f32; 24] = [
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    1.0,
    -1.0,
    0.5,
    -0.5,
    3.0,
    -7.5,
    2.0,
    0.1,
    0.3,
    -0.7,
    1e-40,             // subnormal
    -1e-45,            // the smallest subnormal
    f32::MIN_POSITIVE, // the smallest normal
    f32::MAX,
    f32::MIN,
    16_777_216.0, // 2²⁴
    8_388_607.5,
    1e30,
    -3e38,
];

#[test]
fn special_values_and_zero_divisors_as_on_the_cpu() {
    if !gpu_or_skip("special_values_and_zero_divisors_as_on_the_cpu") {
        return;
    }
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for &a in &SPECIALS {
        for &b in &SPECIALS {
            x.push(a);
            y.push(b);
        }
    }
    assert_same_as_the_oracle("every pair of special values", &x, &y);
}

// torch.div(torch.tensor([1., -1., 7.5, -0.5, 0.]), torch.tensor([.1, .1, -2., 3., -3.]),
//           rounding_mode=…)
//   trunc -> tensor([10., -10., -3., -0., -0.])
//   floor -> tensor([ 9., -10., -4., -1., -0.])
// (0.1f32 is a little above 1/10: 1 / 0.1f32 = 9.99999985…, which rounds to 10 in f32.)
#[test]
fn pytorchs_answers_on_the_gpu() {
    if !gpu_or_skip("pytorchs_answers_on_the_gpu") {
        return;
    }
    let x = gpu(&f32s(&[1.0, -1.0, 7.5, -0.5, 0.0], &[5]));
    let y = gpu(&f32s(&[0.1, 0.1, -2.0, 3.0, -3.0], &[5]));
    let trunc = ops::div_rounded(&x, &y, Rounding::Trunc).to_vec::<f32>();
    let floor = ops::div_rounded(&x, &y, Rounding::Floor).to_vec::<f32>();
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&trunc), bits(&[10.0, -10.0, -3.0, -0.0, -0.0]));
    assert_eq!(bits(&floor), bits(&[9.0, -10.0, -4.0, -1.0, -0.0]));
}

#[test]
fn random_bit_patterns_as_on_the_cpu() {
    if !gpu_or_skip("random_bit_patterns_as_on_the_cpu") {
        return;
    }
    // Every exponent, subnormals, NaN payloads; and, since random exponents rarely meet, pairs
    // whose exponents are close (quotients from 2⁻⁶ to 2³¹, the range where the
    // roundings matter).
    let n = 1 << 16;
    let mut w = words(29);
    let mut x: Vec<f32> = (0..n)
        .map(|_| f32::from_bits(w.next().unwrap() as u32))
        .collect();
    let mut y: Vec<f32> = (0..n)
        .map(|_| f32::from_bits(w.next().unwrap() as u32))
        .collect();
    for i in 0..n {
        let r = w.next().unwrap();
        let bits = x[i].to_bits();
        let exponent = ((bits >> 23) & 0xff) as i64;
        // The divisor's exponent: from 5 above the dividend's to 30 below it.
        let near = (exponent - (r % 36) as i64 + 5).clamp(1, 254) as u32;
        let sign = ((r >> 16) as u32 & 1) << 31;
        y.push(f32::from_bits(
            sign | (near << 23) | ((r >> 32) as u32 & 0x7f_ffff),
        ));
        x.push(x[i]);
    }
    assert_same_as_the_oracle("random bit patterns", &x, &y);
}

#[test]
fn quotients_within_a_few_ulp_of_an_integer_as_on_the_cpu() {
    if !gpu_or_skip("quotients_within_a_few_ulp_of_an_integer_as_on_the_cpu") {
        return;
    }
    // x = n·y rounded, and its neighbours up to 3 ulp away: the true quotient lies just below,
    // at or just above the integer n, and a division that is off by an ulp truncates or floors
    // to the other side of it.
    let mut w = words(7);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for _ in 0..4096 {
        let r = w.next().unwrap();
        // Divisors in ±[2⁻¹⁰, 2¹⁰), integers up to 2²⁶ (past 2²⁴ every f32 is an integer).
        let divisor = f32::from_bits(((117 + r % 20) << 23) as u32 | ((r >> 8) as u32 & 0x7f_ffff));
        let divisor = if r >> 63 == 1 { -divisor } else { divisor };
        let magnitude = 1u64 << ((r >> 32) % 27);
        let n = ((r >> 40) % magnitude + 1) as f32;
        let n = if (r >> 62) & 1 == 1 { -n } else { n };
        let product = n * divisor;
        for step in -3i32..=3 {
            let bits = product.to_bits() as i32 + step;
            x.push(f32::from_bits(bits as u32));
            y.push(divisor);
        }
    }
    assert_same_as_the_oracle("quotients near integers", &x, &y);
}

#[test]
fn broadcast_and_strided_operands() {
    if !gpu_or_skip("broadcast_and_strided_operands") {
        return;
    }
    let x = f32s(
        &[
            7.5, -7.5, 1.0, -1.0, 0.0, -0.0, 5.0, 9.0, -3.0, 2.5, 100.0, -0.1,
        ],
        &[3, 4],
    );
    let y = f32s(&[2.0, -0.1, 3.0], &[3]);
    // `x` transposed ([4, 3], strided), `y` broadcast along the rows; then an offset narrow.
    for mode in MODES {
        let want = naive(|| ops::div_rounded(&x.transpose(0, 1), &y, mode));
        let got = ops::div_rounded(&gpu(&x).transpose(0, 1), &gpu(&y), mode);
        assert_eq!(got.shape(), [4, 3]);
        let same = |a: Vec<f32>, b: Vec<f32>| {
            a.iter()
                .map(|v| v.to_bits())
                .eq(b.iter().map(|v| v.to_bits()))
        };
        assert!(
            same(got.to_vec(), want.to_vec()),
            "{mode:?}: {got:?} vs {want:?}"
        );
        let want = naive(|| ops::div_rounded(&x.narrow(0, 1, 2), &y.narrow(0, 2, 1), mode));
        let got = ops::div_rounded(&gpu(&x).narrow(0, 1, 2), &gpu(&y).narrow(0, 2, 1), mode);
        assert!(
            same(got.to_vec(), want.to_vec()),
            "{mode:?}: {got:?} vs {want:?}"
        );
    }
}

// torch.div(torch.tensor([7, -7]), torch.tensor([2.]), rounding_mode="floor") -> tensor([ 3., -4.])
#[test]
fn an_integer_operand_with_a_float_one_is_promoted_on_the_gpu() {
    if !gpu_or_skip("an_integer_operand_with_a_float_one_is_promoted_on_the_gpu") {
        return;
    }
    let ints = gpu(&Tensor::from_vec(vec![7i64, -7], &[2]).unwrap());
    let flags = gpu(&Tensor::from_vec(vec![true, false], &[2]).unwrap());
    let two = gpu(&f32s(&[2.0], &[1]));
    let r = ops::div_rounded(&ints, &two, Rounding::Floor);
    assert_eq!((r.device(), r.dtype()), (Device::Wgpu, DType::F32));
    assert_eq!(r.to_vec::<f32>(), [3.0, -4.0]);
    let r = ops::div_rounded(&two, &flags, Rounding::Trunc);
    assert_eq!(r.to_vec::<f32>(), [2.0, f32::INFINITY]);
}

#[test]
fn integer_operands_are_refused_with_a_clear_error() {
    if !gpu_or_skip("integer_operands_are_refused_with_a_clear_error") {
        return;
    }
    // The CPU's integer division refuses a zero divisor; the GPU cannot tell without waiting for
    // the divisor's values, so it does not divide integers: an error, never a wrong value.
    let x = gpu(&Tensor::from_vec(vec![7i64, -7], &[2]).unwrap());
    let y = gpu(&Tensor::from_vec(vec![2i64, 0], &[2]).unwrap());
    let error = ops::try_div_rounded(&x, &y, Rounding::Floor).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("div_rounded") && message.contains("i64"),
        "{message}"
    );
}
