//! `cross_entropy_with` and its options against PyTorch: the formula of PyTorch's documentation
//! (`l = −Σ_c w_c·q_c·log p_c`, `q` the smoothed one-hot target, the mean divided by the weights
//! of the counted targets) computed here in `f64` loops, and values PyTorch 2.x gave, held as
//! data; gradcheck of every option.

use switchyard::Tensor;
use switchyard::autograd::gradcheck;
use switchyard::ops::{self, CrossEntropyOptions, LossReduction};
use switchyard_backends as _; // links the CPU kernels

/// PyTorch's formula, in loops: per-element losses (`[N, d…]` row-major) and the mean's
/// denominator.
fn by_formula(
    logits: &[f64],
    shape: &[usize],
    targets: &[i64],
    o: &CrossEntropyOptions,
) -> (Vec<f64>, f64) {
    let (n, c) = (shape[0], shape[1]);
    let inner: usize = shape[2..].iter().product();
    let weight: Vec<f64> = match &o.weight {
        Some(w) => w.to_vec::<f64>(),
        None => vec![1.0; c],
    };
    let eps = o.label_smoothing;
    let (mut losses, mut denominator) = (Vec::new(), 0.0);
    for i in 0..n {
        for j in 0..inner {
            let t = targets[i * inner + j];
            if Some(t) == o.ignore_index {
                losses.push(0.0);
                continue;
            }
            let at = |k: usize| logits[(i * c + k) * inner + j];
            let max = (0..c).map(at).fold(f64::NEG_INFINITY, f64::max);
            let log_total = (0..c).map(|k| (at(k) - max).exp()).sum::<f64>().ln();
            let log_p = |k: usize| at(k) - max - log_total;
            let loss: f64 = (0..c)
                .map(|k| {
                    let q = eps / c as f64 + if k as i64 == t { 1.0 - eps } else { 0.0 };
                    -weight[k] * q * log_p(k)
                })
                .sum();
            losses.push(loss);
            denominator += weight[t as usize];
        }
    }
    (losses, denominator)
}

fn check(logits: &Tensor, targets: &[i64], options: &CrossEntropyOptions) {
    let target_shape: Vec<usize> = logits
        .shape()
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != 1)
        .map(|(_, &e)| e)
        .collect();
    let t = Tensor::from_vec(targets.to_vec(), &target_shape).unwrap();
    let (losses, denominator) =
        by_formula(&logits.to_vec::<f64>(), logits.shape(), targets, options);
    let got = ops::cross_entropy_with(logits, &t, options);
    let want = match options.reduction {
        LossReduction::None => losses,
        LossReduction::Sum => vec![losses.iter().sum()],
        LossReduction::Mean => vec![losses.iter().sum::<f64>() / denominator],
    };
    let got = got.to_vec::<f64>();
    assert_eq!(got.len(), want.len(), "{options:?}");
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 1e-12 * (1.0 + w.abs()) || (g.is_nan() && w.is_nan()),
            "{options:?}: got {g}, want {w}"
        );
    }
}

fn logits(shape: &[usize]) -> Tensor {
    Tensor::from_fn(shape, |i| ((i * 37 % 11) as f64 - 5.0) * 0.7)
}

#[test]
fn every_option_and_reduction_follows_the_formula() {
    let weight = Tensor::from_vec(vec![0.5f64, 2.0, 1.0], &[3]).unwrap();
    for reduction in [LossReduction::Mean, LossReduction::Sum, LossReduction::None] {
        for smoothing in [0.0, 0.25] {
            for weighted in [false, true] {
                let mut options = CrossEntropyOptions::new()
                    .reduction(reduction)
                    .label_smoothing(smoothing)
                    .ignore_index(-100);
                if weighted {
                    options = options.weight(&weight);
                }
                // [N, C] and [N, C, d1, d2].
                check(&logits(&[4, 3]), &[0, 2, -100, 1], &options);
                check(
                    &logits(&[2, 3, 2, 2]),
                    &[0, 1, 2, -100, 2, 2, 1, 0],
                    &options,
                );
            }
        }
    }
}

// F.cross_entropy(torch.zeros(1, 2), torch.tensor([0]), label_smoothing=0.2) -> 0.6931
// F.cross_entropy(torch.tensor([[2., 0.], [0., 3.]]), torch.tensor([0, 1]),
//   weight=torch.tensor([1., 3.])) -> 0.0682 ((0.1269 + 3 · 0.0486) / (1 + 3))
// F.cross_entropy(torch.tensor([[1., 2.]]), torch.tensor([-100])) -> nan (nothing counted)
#[test]
fn values_pytorch_gave() {
    let options = CrossEntropyOptions::new().label_smoothing(0.2);
    let loss = ops::cross_entropy_with(
        &Tensor::from_vec(vec![0.0f32, 0.0], &[1, 2]).unwrap(),
        &Tensor::from_vec(vec![0i64], &[1]).unwrap(),
        &options,
    );
    assert!((loss.to_vec::<f32>()[0] - std::f32::consts::LN_2).abs() < 1e-6);
    let weight = Tensor::from_vec(vec![1.0f32, 3.0], &[2]).unwrap();
    let loss = ops::cross_entropy_with(
        &Tensor::from_vec(vec![2.0f32, 0.0, 0.0, 3.0], &[2, 2]).unwrap(),
        &Tensor::from_vec(vec![0i64, 1], &[2]).unwrap(),
        &CrossEntropyOptions::new().weight(&weight),
    );
    let softplus = |x: f32| (1.0 + x.exp()).ln();
    let want = (softplus(-2.0) + 3.0 * softplus(-3.0)) / 4.0;
    assert!((loss.to_vec::<f32>()[0] - want).abs() < 1e-6);
    assert!((want - 0.0682).abs() < 1e-4);
    let loss = ops::cross_entropy_with(
        &Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap(),
        &Tensor::from_vec(vec![-100i64], &[1]).unwrap(),
        &CrossEntropyOptions::new().ignore_index(-100),
    );
    assert!(loss.to_vec::<f32>()[0].is_nan());
}

#[test]
fn the_default_options_are_the_op() {
    let x = logits(&[5, 4]);
    let t = Tensor::from_vec(vec![0i64, 3, 1, 2, 3], &[5]).unwrap();
    let with = ops::cross_entropy_with(&x, &t, &CrossEntropyOptions::default());
    assert_eq!(
        with.to_vec::<f64>(),
        ops::cross_entropy(&x, &t).to_vec::<f64>()
    );
}

#[test]
fn bad_options_are_errors_naming_cross_entropy() {
    let x = logits(&[2, 3]);
    let t = Tensor::from_vec(vec![0i64, 3], &[2]).unwrap();
    let cases = [
        (CrossEntropyOptions::new(), "target 3"),
        (
            CrossEntropyOptions::new().ignore_index(-1),
            "nor the ignored value -1",
        ),
        (
            CrossEntropyOptions::new()
                .ignore_index(3)
                .label_smoothing(1.5),
            "label_smoothing",
        ),
        (
            CrossEntropyOptions::new()
                .ignore_index(3)
                .weight(&Tensor::from_vec(vec![1.0f64; 2], &[2]).unwrap()),
            "one weight per class",
        ),
    ];
    for (options, says) in cases {
        let error = ops::try_cross_entropy_with(&x, &t, &options)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("cross_entropy") && error.contains(says),
            "{error}"
        );
    }
    let wrong = Tensor::from_vec(vec![0i64, 1, 2], &[3]).unwrap();
    let error = ops::try_cross_entropy_with(&x, &wrong, &CrossEntropyOptions::new())
        .unwrap_err()
        .to_string();
    assert!(error.contains("[N, C, d1, …]"), "{error}");
}

#[test]
fn gradcheck_of_every_option() {
    let weight = Tensor::from_vec(vec![0.5f64, 2.0, 1.0], &[3]).unwrap();
    let targets = Tensor::from_vec(vec![0i64, 1, 2, -100, 2, 2, 1, 0], &[2, 2, 2]).unwrap();
    for reduction in [LossReduction::Mean, LossReduction::Sum, LossReduction::None] {
        let options = CrossEntropyOptions::new()
            .reduction(reduction)
            .weight(&weight)
            .ignore_index(-100)
            .label_smoothing(0.1);
        let mut x = logits(&[2, 3, 2, 2]);
        x.requires_grad_(true);
        gradcheck(
            |t| ops::try_sum(&ops::try_cross_entropy_with(&t[0], &targets, &options)?),
            &[x],
        )
        .unwrap_or_else(|e| panic!("{reduction:?}: {e}"));
    }
}
