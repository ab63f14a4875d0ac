//! Autograd on the GPU: a leaf moved to the GPU that requires grad gets its gradient on the GPU,
//! equal to the CPU's within `f32` accuracy; `gradcheck` (`Tolerance::F32`) passes for the
//! derivatives a network uses, computed with the GPU's kernels; and a small two-layer network's
//! forward and backward passes give the CPU's gradients.

use switchyard::autograd::{Tolerance, gradcheck, gradcheck_with};
use switchyard::ops::{self, arange, eq, exp, log, matmul, max_dim, mean, sum_dim, to_dtype};
use switchyard::{DType, Device, DispatchError, Tensor};
use switchyard_tests_wgpu::{gpu_or_skip, naive};

type Op = fn(&[Tensor]) -> Result<Tensor, DispatchError>;

/// Deterministic values in `[-1, 1)`, none within 0.1 of 0 (a kink of `relu` and `where`'s
/// condition stays out of reach of `gradcheck`'s differences), and none within 0.05 of each other
/// in a row of 4 (so `max_dim`'s maximum does not move under a step of `eps`).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out: Vec<f32> = Vec::with_capacity(n);
    while out.len() < n {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let v = (state % 2000) as f32 / 1000.0 - 1.0;
        let row = &out[out.len() / 4 * 4..];
        if v.abs() >= 0.1 && row.iter().all(|r| (r - v).abs() >= 0.05) {
            out.push(v);
        }
    }
    out
}

/// A CPU tensor of `shape` filled by [`values`].
fn input(shape: &[usize], seed: u64) -> Tensor {
    Tensor::from_vec::<f32>(values(shape.iter().product(), seed), shape).unwrap()
}

/// `x` moved to `device` as a leaf that requires grad.
fn leaf(x: &Tensor, device: Device) -> Tensor {
    let mut leaf = x.to(device);
    leaf.requires_grad_(true);
    leaf
}

/// The derivatives of the ops a network uses, each with its inputs' shapes.
fn cases() -> Vec<(&'static str, Op, Vec<Vec<usize>>)> {
    vec![
        (
            "add",
            |t| ops::try_add(&t[0], &t[1]),
            vec![vec![2, 3], vec![3]],
        ),
        (
            "sub",
            |t| ops::try_sub(&t[0], &t[1]),
            vec![vec![2, 1], vec![2, 3]],
        ),
        (
            "mul",
            |t| ops::try_mul(&t[0], &t[1]),
            vec![vec![2, 3], vec![1, 3]],
        ),
        (
            "div",
            |t| ops::try_div(&t[0], &ops::try_exp(&t[1])?),
            vec![vec![3], vec![2, 3]],
        ),
        (
            "matmul",
            |t| ops::try_matmul(&t[0], &t[1]),
            vec![vec![2, 3], vec![3, 4]],
        ),
        (
            "matmul of a transpose",
            |t| ops::try_matmul(&t[0], &ops::try_transpose(&t[1], 0, 1)?),
            vec![vec![2, 3], vec![4, 3]],
        ),
        ("relu", |t| ops::try_relu(&t[0]), vec![vec![5]]),
        ("exp", |t| ops::try_exp(&t[0]), vec![vec![2, 2]]),
        ("tanh", |t| ops::try_tanh(&t[0]), vec![vec![2, 3]]),
        ("sigmoid", |t| ops::try_sigmoid(&t[0]), vec![vec![2, 3]]),
        (
            "log",
            |t| ops::try_log(&ops::try_exp(&t[0])?),
            vec![vec![4]],
        ),
        (
            "sqrt",
            |t| ops::try_sqrt(&ops::try_exp(&t[0])?),
            vec![vec![4]],
        ),
        ("sum", |t| ops::try_sum(&t[0]), vec![vec![2, 3]]),
        ("mean", |t| ops::try_mean(&t[0]), vec![vec![3, 2]]),
        // Joins, and dims counted from the end.
        (
            "cat",
            |t| ops::try_cat(&[t[0].clone(), t[1].clone()], -1),
            vec![vec![2, 3], vec![2, 2]],
        ),
        (
            "stack",
            |t| ops::try_stack(&[t[0].clone(), t[1].clone()], 0),
            vec![vec![2, 3], vec![2, 3]],
        ),
        (
            "softmax along -1",
            |t| ops::try_softmax(&t[0], -1),
            vec![vec![2, 3]],
        ),
        (
            "sum_with, every dim kept",
            |t| ops::try_sum_with(&t[0], &ops::Reduce::all().keepdim(true)),
            vec![vec![2, 3]],
        ),
        (
            "sum_dim",
            |t| ops::try_sum_dim(&t[0], &[0, 2], false),
            vec![vec![2, 3, 2]],
        ),
        (
            "mean_dim",
            |t| ops::try_mean_dim(&t[0], &[1], true),
            vec![vec![2, 3, 2]],
        ),
        (
            "max_dim",
            |t| ops::try_max_dim(&t[0], 1, false),
            vec![vec![3, 4]],
        ),
        (
            "max_dim, kept, along the rows",
            |t| ops::try_max_dim(&ops::try_transpose(&t[0], 0, 1)?, 1, true),
            vec![vec![4, 3]],
        ),
        // Divisors in [2, 4] and dividends at least 0.1 from 0: quotients in ±[0.025, 0.5],
        // where a rounded quotient is constant (0 or -1) and its gradient zero, as PyTorch's.
        (
            "div_rounded, floor",
            |t| {
                let y = ops::try_add_scalar(&t[1], 3.0)?;
                ops::try_div_rounded(&t[0], &y, ops::Rounding::Floor)
            },
            vec![vec![3, 4], vec![4]],
        ),
        (
            "div_rounded, trunc",
            |t| {
                let y = ops::try_add_scalar(&t[1], 3.0)?;
                ops::try_div_rounded(&t[0], &y, ops::Rounding::Trunc)
            },
            vec![vec![3, 4], vec![4]],
        ),
        (
            "where",
            |t| {
                let zero = ops::try_full(&[], 0.0, t[0].dtype(), t[0].device())?;
                ops::try_where_cond(&ops::try_gt(&t[0], &zero)?, &t[0], &t[1])
            },
            vec![vec![2, 3], vec![3]],
        ),
    ]
}

#[test]
fn gradients_of_gpu_leaves_are_on_the_gpu_and_equal_the_cpus() {
    if !gpu_or_skip("gradients_of_gpu_leaves_are_on_the_gpu_and_equal_the_cpus") {
        return;
    }
    for (op, f, shapes) in cases() {
        let inputs: Vec<Tensor> = shapes
            .iter()
            .enumerate()
            .map(|(i, s)| input(s, i as u64 + 1))
            .collect();
        let grads = |device: Device| -> Vec<Tensor> {
            let leaves: Vec<Tensor> = inputs.iter().map(|x| leaf(x, device)).collect();
            let out = f(&leaves).unwrap();
            assert_eq!(out.device(), device, "{op}");
            // A weighted sum, so every output element's gradient differs.
            let weights = input(out.shape(), 99).to(device);
            ops::sum(&ops::mul(&out, &weights)).backward();
            leaves
                .iter()
                .map(|l| l.grad().expect("a gradient"))
                .collect()
        };
        let (on_gpu, on_cpu) = (grads(Device::Wgpu), naive(|| grads(Device::Cpu)));
        for (i, (g, c)) in on_gpu.iter().zip(&on_cpu).enumerate() {
            assert_eq!(g.device(), Device::Wgpu, "{op}: gradient {i}");
            assert_eq!(
                (g.dtype(), g.shape()),
                (c.dtype(), c.shape()),
                "{op}: gradient {i}"
            );
            for (a, b) in g.to_vec::<f32>().iter().zip(c.to_vec::<f32>()) {
                assert!(
                    (a - b).abs() <= 1e-5 + 1e-5 * b.abs(),
                    "{op}: gradient {i}: the GPU gives {a}, the CPU {b}"
                );
            }
        }
    }
}

#[test]
fn gradcheck_passes_on_the_gpu() {
    if !gpu_or_skip("gradcheck_passes_on_the_gpu") {
        return;
    }
    for (op, f, shapes) in cases() {
        let inputs: Vec<Tensor> = shapes
            .iter()
            .enumerate()
            .map(|(i, s)| leaf(&input(s, i as u64 + 1), Device::Wgpu))
            .collect();
        // `gradcheck` picks `Tolerance::F32` for `f32` inputs; stated here as well.
        gradcheck(f, &inputs).unwrap_or_else(|e| panic!("gradcheck of `{op}` on the GPU: {e}"));
        gradcheck_with(f, &inputs, Tolerance::F32)
            .unwrap_or_else(|e| panic!("gradcheck of `{op}` on the GPU: {e}"));
    }
}

/// Cross-entropy of `logits` `[batch, classes]` against class indices `targets` (`i64`), mean
/// over the batch, from the ops a `cross_entropy` composite uses: a stable log-sum-exp (`max_dim`,
/// `exp`, `sum_dim`, `log`) and a one-hot mask (`arange`, `eq`, `to_dtype`).
fn cross_entropy(logits: &Tensor, targets: &Tensor) -> Tensor {
    let classes = logits.shape()[1];
    let top = max_dim(&logits.detach(), 1, true);
    let shifted = logits - &top;
    let log_sum = &log(&sum_dim(&exp(&shifted), &[1], true)) + &top;
    let positions = arange(classes, DType::I64, logits.device()).reshape(&[1, classes as isize]);
    let one_hot = to_dtype(&eq(&positions, &targets.unsqueeze(1)), DType::F32);
    let picked = sum_dim(&(logits * &one_hot), &[1], true);
    mean(&(&log_sum - &picked))
}

#[test]
fn a_two_layer_network_has_the_cpus_gradients_on_the_gpu() {
    if !gpu_or_skip("a_two_layer_network_has_the_cpus_gradients_on_the_gpu") {
        return;
    }
    let x = input(&[8, 4], 1);
    let targets = Tensor::from_vec::<i64>(vec![0, 2, 1, 2, 0, 1, 1, 0], &[8]).unwrap();
    let params = [
        input(&[4, 16], 2),
        input(&[16], 3),
        input(&[16, 3], 4),
        input(&[3], 5),
    ];
    let step = |device: Device| -> (f32, Vec<Tensor>) {
        let [w1, b1, w2, b2] = params.clone().map(|p| leaf(&p, device));
        let (x, targets) = (x.to(device), targets.to(device));
        let hidden = ops::relu(&(&matmul(&x, &w1) + &b1));
        let logits = &matmul(&ops::tanh(&hidden), &w2) + &b2;
        let loss = cross_entropy(&logits, &targets);
        assert_eq!(loss.device(), device);
        loss.backward();
        let grads = [w1, b1, w2, b2].map(|p| p.grad().expect("a gradient"));
        (loss.to_vec::<f32>()[0], grads.to_vec())
    };
    let (loss_gpu, grads_gpu) = step(Device::Wgpu);
    let (loss_cpu, grads_cpu) = naive(|| step(Device::Cpu));
    assert!(
        (loss_gpu - loss_cpu).abs() <= 1e-5 * loss_cpu.abs(),
        "{loss_gpu} vs {loss_cpu}"
    );
    for (i, (g, c)) in grads_gpu.iter().zip(&grads_cpu).enumerate() {
        assert_eq!(
            (g.device(), g.shape()),
            (Device::Wgpu, c.shape()),
            "parameter {i}"
        );
        for (a, b) in g.to_vec::<f32>().iter().zip(c.to_vec::<f32>()) {
            assert!(
                (a - b).abs() <= 1e-5 + 1e-4 * b.abs(),
                "parameter {i}: the GPU gives {a}, the CPU {b}"
            );
        }
    }
}
