//! Optimizers: `Sgd` (with and without momentum) and `Adam` against their update rules worked
//! by hand, a learning rate changed between steps (`set_lr`, what a schedule does), parameters
//! without a gradient left alone, and the refusal of parameters that are not leaves.

use switchyard::ops;
use switchyard::optim::{Adam, Optimizer, Sgd};
use switchyard::{Tensor, autograd};
use switchyard_backends as _; // links the CPU kernels

fn param(values: &[f64]) -> Tensor {
    let mut p = Tensor::from_vec(values.to_vec(), &[values.len()]).unwrap();
    p.requires_grad_(true);
    p
}

/// One backward pass of `Σ p²` (gradient `2p`).
fn square_loss_backward(optimizer: &impl Optimizer) {
    optimizer.zero_grad();
    let p = &optimizer.params()[0];
    ops::sum(&ops::mul(p, p)).backward();
}

#[track_caller]
fn close(actual: &Tensor, expected: &[f64]) {
    let values = actual.try_to_f64_vec().unwrap();
    for (a, e) in values.iter().zip(expected) {
        assert!(
            (a - e).abs() < 1e-12,
            "got {values:?}, expected {expected:?}"
        );
    }
    assert_eq!(values.len(), expected.len());
}

#[test]
fn sgd_with_momentum_follows_its_update_rule_and_a_changed_rate() {
    let p = param(&[4.0]);
    let mut sgd = Sgd::new(vec![p.clone()], 0.25).momentum(0.5);
    assert_eq!(sgd.lr(), 0.25);
    // g = 8, v = g = 8, p = 4 − 0.25·8 = 2
    square_loss_backward(&sgd);
    sgd.step().unwrap();
    close(&p, &[2.0]);
    // g = 4, v = 0.5·8 + 4 = 8, p = 2 − 0.125·8 = 1 (the new rate, the old velocity)
    sgd.set_lr(0.125);
    assert_eq!(sgd.lr(), 0.125);
    square_loss_backward(&sgd);
    sgd.step().unwrap();
    close(&p, &[1.0]);
}

#[test]
fn adam_follows_its_update_rule_and_a_changed_rate() {
    let p = param(&[1.0, -2.0]);
    let (lr, b1, b2, eps) = (0.1, 0.9, 0.999, 1e-8);
    let mut adam = Adam::new(vec![p.clone()], lr);
    // The rule, by hand, in f64: moments from zero, bias-corrected.
    let (mut w, mut m, mut v) = ([1.0f64, -2.0], [0.0f64; 2], [0.0f64; 2]);
    for (t, rate) in [(1, lr), (2, 0.01), (3, 0.01)] {
        adam.set_lr(rate);
        assert_eq!(adam.lr(), rate);
        square_loss_backward(&adam);
        adam.step().unwrap();
        for i in 0..2 {
            let g = 2.0 * w[i];
            m[i] = b1 * m[i] + (1.0 - b1) * g;
            v[i] = b2 * v[i] + (1.0 - b2) * g * g;
            let m_hat = m[i] / (1.0 - b1.powi(t));
            let v_hat = v[i] / (1.0 - b2.powi(t));
            w[i] -= rate * m_hat / (v_hat.sqrt() + eps);
        }
        close(&p, &w);
    }
}

#[test]
fn parameters_without_a_gradient_stay_and_non_leaves_are_refused() {
    let (a, b) = (param(&[1.0]), param(&[5.0]));
    let mut adam = Adam::new(vec![a.clone(), b.clone()], 0.1);
    // Only `a` takes part in the loss.
    ops::sum(&ops::mul(&a, &a)).backward();
    adam.step().unwrap();
    close(&b, &[5.0]);
    assert!(a.try_to_f64_vec().unwrap()[0] < 1.0);

    let not_a_leaf = ops::exp(&a);
    let e = Sgd::try_new(vec![not_a_leaf], 0.1).unwrap_err().to_string();
    assert!(
        e.contains("Sgd::new") && e.contains("not a leaf") && e.contains("requires_grad_"),
        "{e}"
    );
    let plain = {
        let _no_grad = autograd::no_grad();
        Tensor::from_vec(vec![1.0f32], &[1]).unwrap()
    };
    assert!(Adam::try_new(vec![plain], 0.1).is_err());
}
