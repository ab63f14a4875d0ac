//! A small training run on the CPU: the spirals MLP of `examples/train.rs`, on fewer points and
//! epochs, must learn (its loss falls by half and it classifies most points). `.ci/wasm` runs it
//! on WebAssembly too, where the same ops, autograd and optimizer serve it from the naive kernels.

use switchyard::ops::try_narrow;
use switchyard::optim::Adam;
use switchyard::{DispatchError, Tensor};
use switchyard_backends as _;
use switchyard_examples::mlp::{Mlp, train_step};
use switchyard_examples::spirals::{Spirals, SpiralsConfig, SplitMix64};

/// Trains for `epochs` and returns each epoch's mean loss and the final training accuracy.
fn train(data: &Spirals, epochs: usize) -> Result<(Vec<f64>, f64), DispatchError> {
    let model = Mlp::new(&[2, 32, 32, 2], 7)?;
    let mut adam = Adam::try_new(model.parameters(), 0.02)?;
    let mut shuffles = SplitMix64::new(8);
    let (n, batch) = (data.len(), 32);
    let mut losses = Vec::new();
    for _ in 0..epochs {
        let (x, y) = data.tensors_in(&shuffles.permutation(n))?;
        let mut total = 0.0;
        for start in (0..n).step_by(batch) {
            let len = batch.min(n - start);
            let xb = try_narrow(&x, 0, start as isize, len)?;
            let yb = try_narrow(&y, 0, start as isize, len)?;
            let loss: Tensor = train_step(&model, &mut adam, &xb, &yb)?;
            total += loss.try_item()?.as_f64() * len as f64;
        }
        losses.push(total / n as f64);
    }
    let (x, y) = data.tensors()?;
    Ok((losses, model.accuracy(&x, &y)?))
}

#[test]
fn the_spirals_mlp_learns_on_the_cpu() {
    let data = Spirals::generate(SpiralsConfig {
        per_class: 150,
        turns: 1.0,
        ..SpiralsConfig::default()
    });
    let (losses, accuracy) = train(&data, 40).unwrap();
    let (first, last) = (losses[0], losses[losses.len() - 1]);
    assert!(last < first / 2.0, "the loss did not halve: {losses:?}");
    assert!(
        accuracy > 0.9,
        "training accuracy {accuracy} after {losses:?}"
    );
}
