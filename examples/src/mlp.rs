//! A multi-layer perceptron and its training step, written once against ops: the same code runs
//! on the CPU and on the GPU, the parameters and data moved there with one `.to(device)`.
//!
//! Every function returns the first error (a missing kernel on a device, a shape mismatch)
//! instead of panicking, so a caller can report it and go on with another device.

use switchyard::autocast::GradScaler;
use switchyard::ops::{
    try_add, try_argmax, try_cross_entropy, try_eq, try_matmul, try_mean, try_mul, try_relu,
    try_sub, try_to_dtype,
};
use switchyard::optim::Optimizer;
use switchyard::random::{manual_seed, try_rand};
use switchyard::{DType, Device, DispatchError, Tensor, autograd};

type Result<T> = std::result::Result<T, DispatchError>;

/// The widths of the spirals MLP (`examples/train.rs`, the `train_step` bench and its PyTorch
/// twin): two inputs (x, y), two hidden layers of 64, two classes.
pub const SPIRALS_WIDTHS: [usize; 4] = [2, 64, 64, 2];

/// A fully connected layer, `x·W + b`.
#[derive(Clone, Debug)]
pub struct Linear {
    /// `[inputs, outputs]` (the transpose of PyTorch's layout, so the forward pass is one
    /// `matmul` without a transposed view).
    pub weight: Tensor,
    /// `[outputs]`.
    pub bias: Tensor,
}

/// Layers of [`Linear`] with ReLU between them (none after the last: it gives logits).
#[derive(Clone, Debug)]
pub struct Mlp {
    /// The layers, input first.
    pub layers: Vec<Linear>,
}

impl Mlp {
    /// An MLP of the given widths (`[2, 64, 64, 2]`: two inputs, two hidden layers of 64, two
    /// outputs) on the CPU, initialised as PyTorch's `nn.Linear` is: weights and biases uniform in
    /// `±1/√inputs`, from the CPU generator seeded with `seed`. The parameters require grad.
    /// That generator is the process's (as PyTorch's is): two threads making models at once
    /// interleave their draws, so make them one at a time.
    pub fn new(widths: &[usize], seed: u64) -> Result<Mlp> {
        manual_seed(Device::Cpu, seed);
        let layers = widths
            .windows(2)
            .map(|w| {
                let bound = 1.0 / (w[0] as f64).sqrt();
                Ok(Linear {
                    weight: leaf(uniform(&[w[0], w[1]], bound)?),
                    bias: leaf(uniform(&[w[1]], bound)?),
                })
            })
            .collect::<Result<_>>()?;
        Ok(Mlp { layers })
    }

    /// The same parameters on `device`: new leaves that require grad (the optimizer must be
    /// given these).
    pub fn to(&self, device: Device) -> Result<Mlp> {
        let moved = |t: &Tensor| -> Result<Tensor> {
            let _no_grad = autograd::no_grad();
            Ok(leaf(t.try_to(device)?.detach()))
        };
        let layers = self
            .layers
            .iter()
            .map(|l| {
                Ok(Linear {
                    weight: moved(&l.weight)?,
                    bias: moved(&l.bias)?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Mlp { layers })
    }

    /// Every parameter, for an optimizer.
    pub fn parameters(&self) -> Vec<Tensor> {
        self.layers
            .iter()
            .flat_map(|l| [l.weight.clone(), l.bias.clone()])
            .collect()
    }

    /// The logits `[N, classes]` of a batch `[N, inputs]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = x.clone();
        for (i, layer) in self.layers.iter().enumerate() {
            h = try_add(&try_matmul(&h, &layer.weight)?, &layer.bias)?;
            if i + 1 < self.layers.len() {
                h = try_relu(&h)?;
            }
        }
        Ok(h)
    }

    /// The predicted class (`i64`, `[N]`) of each row of `x`, computed without recording.
    pub fn predict(&self, x: &Tensor) -> Result<Tensor> {
        let _no_grad = autograd::no_grad();
        try_argmax(&self.forward(x)?, 1, false)
    }

    /// The fraction of `x`'s rows whose predicted class is `y`'s.
    pub fn accuracy(&self, x: &Tensor, y: &Tensor) -> Result<f64> {
        Ok(self.accuracy_on_device(x, y)?.try_item()?.as_f64())
    }

    /// [`Mlp::accuracy`] not yet read back: a 0-dimensional `f32` tensor on `x`'s device.
    pub fn accuracy_on_device(&self, x: &Tensor, y: &Tensor) -> Result<Tensor> {
        let _no_grad = autograd::no_grad();
        let right = try_to_dtype(&try_eq(&self.predict(x)?, y)?, DType::F32)?;
        try_mean(&right)
    }
}

/// One training step on a batch: forget the old gradients, forward, `cross_entropy`, backward,
/// update. Returns the batch's loss (detached: keeping it keeps no graph alive).
pub fn train_step(
    model: &Mlp,
    optimizer: &mut impl Optimizer,
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    train_step_mixed(model, optimizer, x, y, None, None)
}

/// [`train_step`] in mixed precision: the forward pass and the loss under autocast to
/// `autocast` (`bf16` or `f16`) on `x`'s device, the backward pass and the update outside it (as
/// PyTorch's recipe has it), and with `scaler` the loss scaled for the backward pass and the
/// step skipped on overflow (what `f16` needs).
pub fn train_step_mixed(
    model: &Mlp,
    optimizer: &mut impl Optimizer,
    x: &Tensor,
    y: &Tensor,
    autocast: Option<DType>,
    scaler: Option<&mut GradScaler>,
) -> Result<Tensor> {
    optimizer.zero_grad();
    let loss = {
        let _autocast = autocast
            .map(|dtype| switchyard::autocast::autocast(x.device(), dtype))
            .transpose()?;
        try_cross_entropy(&model.forward(x)?, y)?
    };
    match scaler {
        Some(scaler) => {
            scaler.scale(&loss)?.try_backward()?;
            scaler.step(optimizer)?;
            scaler.update();
        }
        None => {
            loss.try_backward()?;
            optimizer.step()?;
        }
    }
    Ok(loss.detach())
}

/// Values uniform in `±bound`, `f32`, on the CPU, from its generator.
fn uniform(shape: &[usize], bound: f64) -> Result<Tensor> {
    let u = try_rand(shape, DType::F32, Device::Cpu)?;
    let scale = Tensor::from_scalar(2.0 * bound as f32)?;
    try_sub(&try_mul(&u, &scale)?, &Tensor::from_scalar(bound as f32)?)
}

/// `t` as a leaf that requires grad (`t` is a fresh result that does not).
fn leaf(mut t: Tensor) -> Tensor {
    t.requires_grad_(true);
    t
}

#[cfg(test)]
mod tests {
    use switchyard::optim::Adam;
    use switchyard_backends as _;

    use super::*;

    #[test]
    fn layers_have_the_widths_and_pytorchs_init_bounds() {
        let m = Mlp::new(&[2, 8, 3], 1).unwrap();
        assert_eq!(m.layers.len(), 2);
        assert_eq!(m.layers[0].weight.shape(), [2, 8]);
        assert_eq!(m.layers[1].bias.shape(), [3]);
        let bound = 1.0 / 8f32.sqrt();
        let w = m.layers[1].weight.to_vec::<f32>();
        assert!(w.iter().all(|v| v.abs() <= bound), "{w:?}");
        assert!(w.iter().any(|v| v.abs() > bound / 2.0), "{w:?}");
        assert!(
            m.parameters()
                .iter()
                .all(|p| p.requires_grad() && p.is_leaf())
        );
        let x = Tensor::from_vec(vec![0.5f32; 10], &[5, 2]).unwrap();
        assert_eq!(m.forward(&x).unwrap().shape(), [5, 3]);
        assert_eq!(m.predict(&x).unwrap().shape(), [5]);
    }

    #[test]
    fn training_steps_fit_a_tiny_batch() {
        let m = Mlp::new(&[2, 16, 2], 2).unwrap();
        let x =
            Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, -1.0], &[4, 2]).unwrap();
        let y = Tensor::from_vec(vec![0i64, 1, 0, 1], &[4]).unwrap();
        let mut adam = Adam::new(m.parameters(), 0.05);
        let first = train_step(&m, &mut adam, &x, &y).unwrap().to_vec::<f32>()[0];
        let mut last = first;
        for _ in 0..100 {
            last = train_step(&m, &mut adam, &x, &y).unwrap().to_vec::<f32>()[0];
        }
        assert!(last < first / 10.0, "loss {first} → {last}");
        assert_eq!(m.accuracy(&x, &y).unwrap(), 1.0);
    }
}
