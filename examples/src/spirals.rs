//! Two interleaved spirals: the classic dataset a linear model cannot separate.
//!
//! The points come from [`SplitMix64`], a generator small enough to port exactly (the PyTorch
//! twin of the training bench, `benches/train_step_torch.py`, generates the same points from the
//! same seed), not from switchyard's own Philox generator, which would need a port of its own.

use switchyard::{DispatchError, Tensor};

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", 2014):
/// one 64-bit state, a Weyl step and a mix per value.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, from the top 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (-53f64).exp2()
    }

    /// Standard normal (Box–Muller's cosine branch; `1 − u` keeps the logarithm finite).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// A uniformly random permutation of `0..n` (Fisher–Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            // The modulo's bias is below 2^-40 for any n a dataset has.
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        order
    }
}

/// How to draw the spirals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpiralsConfig {
    /// Points per class.
    pub per_class: usize,
    /// Full turns of each arm.
    pub turns: f64,
    /// Standard deviation of the Gaussian noise added to each coordinate (the outer radius is 1).
    pub noise: f64,
    /// The generator's seed.
    pub seed: u64,
}

impl Default for SpiralsConfig {
    /// 2 × 1,500 points, 2 turns, noise 0.04, seed 12.
    fn default() -> Self {
        SpiralsConfig {
            per_class: 1500,
            turns: 2.0,
            noise: 0.04,
            seed: 12,
        }
    }
}

impl SpiralsConfig {
    /// The training benches' data: 2 × 2,048 points (a batch of 4,096 and one of 64 taken from
    /// it), otherwise the default. `benches/train_step_torch.py` generates the same.
    pub fn bench() -> Self {
        SpiralsConfig {
            per_class: 2048,
            ..SpiralsConfig::default()
        }
    }
}

/// The dataset, on the host: what [`Spirals::tensors`] turns into tensors.
#[derive(Clone, Debug, PartialEq)]
pub struct Spirals {
    /// `(x, y)` of each point, classes interleaved (point `2i + c` is of class `c`).
    pub points: Vec<[f32; 2]>,
    /// Each point's class, 0 or 1.
    pub labels: Vec<i64>,
}

impl Spirals {
    /// Draws the spirals: arm `c` of point `i` at radius `r = √u` (u uniform, so the density per
    /// area is even and the crowded centre holds few points) and angle `2π·turns·r + π·c`, plus
    /// noise on each coordinate.
    pub fn generate(config: SpiralsConfig) -> Spirals {
        let mut rng = SplitMix64::new(config.seed);
        let n = 2 * config.per_class;
        let (mut points, mut labels) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..config.per_class {
            for class in 0..2 {
                let r = rng.uniform().sqrt();
                let angle =
                    std::f64::consts::TAU * config.turns * r + std::f64::consts::PI * class as f64;
                let x = r * angle.cos() + config.noise * rng.normal();
                let y = r * angle.sin() + config.noise * rng.normal();
                points.push([x as f32, y as f32]);
                labels.push(class);
            }
        }
        Spirals { points, labels }
    }

    /// How many points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The points as an `f32` tensor `[N, 2]` and the labels as an `i64` tensor `[N]`, on the
    /// CPU, in the order `order` gives (every point once for a permutation).
    pub fn tensors_in(&self, order: &[usize]) -> Result<(Tensor, Tensor), DispatchError> {
        let xs: Vec<f32> = order.iter().flat_map(|&i| self.points[i]).collect();
        let ys: Vec<i64> = order.iter().map(|&i| self.labels[i]).collect();
        Ok((
            Tensor::from_vec(xs, &[order.len(), 2])?,
            Tensor::from_vec(ys, &[order.len()])?,
        ))
    }

    /// [`Spirals::tensors_in`] in the generated order.
    pub fn tensors(&self) -> Result<(Tensor, Tensor), DispatchError> {
        self.tensors_in(&(0..self.len()).collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_splitmix64() {
        // The first outputs for seed 0 (the reference implementation's, also what
        // `train_step_torch.py`'s port prints).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn permutations_hold_every_index_once() {
        let mut order = SplitMix64::new(3).permutation(1000);
        assert_ne!(order, (0..1000).collect::<Vec<_>>());
        order.sort_unstable();
        assert_eq!(order, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn spirals_interleave_two_classes_within_the_unit_disc() {
        let config = SpiralsConfig::default();
        let s = Spirals::generate(config);
        assert_eq!(s.len(), 2 * config.per_class);
        assert_eq!(
            s.labels.iter().filter(|&&c| c == 1).count(),
            config.per_class
        );
        assert!(s.labels.iter().step_by(2).all(|&c| c == 0));
        // Radius ≤ 1 plus a few standard deviations of noise.
        assert!(
            s.points
                .iter()
                .all(|p| (p[0] * p[0] + p[1] * p[1]).sqrt() < 1.2)
        );
        // The same seed, the same points.
        assert_eq!(s, Spirals::generate(SpiralsConfig::default()));
    }
}
