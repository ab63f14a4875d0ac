//! The inputs: uniform `f32` values in [-1, 1) from SplitMix64 with a fixed seed, the same for
//! every library. `torch_peers.py` ports this bit for bit (and checks the first values below).
//!
//! The generator is SplitMix64 in its counter form: value `i` of a stream is the mix of
//! `seed + (i + 1)·γ`, which is what the sequential generator returns at its `i + 1`-th step. Any
//! element can be computed alone, so numpy computes 16M of them at once.

/// SplitMix64's increment (γ, the golden ratio in 64 bits).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The seed of each operand: `x` and `y` of a binary op (or `matmul`) differ; a case of any size
/// takes a prefix of the same stream.
pub const SEEDS: [u64; 2] = [1, 2];

/// Element `i` of SplitMix64 stream `seed`.
pub fn splitmix64(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_add(1).wrapping_mul(GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` values in [-1, 1) from stream `seed`. The top 24 bits make `u` in [0, 1) exactly (an
/// `f32` has 24), and `2u − 1` is exact too, so numpy's float32 arithmetic gives the same bits.
pub fn uniform(seed: u64, len: usize) -> Vec<f32> {
    (0..len as u64)
        .map(|i| {
            let u = (splitmix64(seed, i) >> 40) as f32 * (1.0 / (1u32 << 24) as f32);
            2.0 * u - 1.0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sequential SplitMix64 (state += γ, then mix) gives the counter form's values.
    #[test]
    fn the_counter_form_is_splitmix64() {
        let mut state = 7u64;
        for i in 0..1000 {
            state = state.wrapping_add(GAMMA);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            assert_eq!(z ^ (z >> 31), splitmix64(7, i));
        }
    }

    /// The values `torch_peers.py` asserts before it measures (its `FIRST_VALUES`): if this test
    /// changes, change them there.
    #[test]
    fn first_values_match_the_python_port() {
        let bits: Vec<u32> = uniform(SEEDS[0], 4).iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits, [0x3e08_5168, 0x3efb_ae34, 0x3f71_2744, 0xbde3_e7a0]);
        assert!(
            uniform(SEEDS[1], 1 << 16)
                .iter()
                .all(|v| (-1.0..1.0).contains(v))
        );
    }
}
