//! The cases of the ops a small network needs: reductions along dimensions, comparisons,
//! `where`, the `arange`, `rand`, `randn` factories (the elementwise `log`, `tanh`,
//! `sigmoid`, `sqrt` are one-operand ops in `cases.rs`), and the composites `softmax`,
//! `log_softmax`, `cross_entropy`. Each on every dtype; refusals (a dimension out of range or
//! repeated, an empty extent for `max_dim`, a non-`bool` condition, a range an integer dtype
//! cannot hold, integer logits) must come from both sides alike.

use std::rc::Rc;

use switchyard::ops;
use switchyard::rules;
use switchyard::{DType, Result, Tensor};

use super::cases::{Call, Case, Input, Layout, MIXED, Plan, Scale, binary_cases};
use super::values::Values;

/// The cases of `op`, or `None` if it is none of this file's ops.
pub(crate) fn nn_cases(op: &str, plan: &Plan) -> Option<Vec<Case>> {
    let comparison: Option<(&'static str, super::cases::Binary)> = match op {
        "eq" => Some(("eq", ops::try_eq)),
        "ne" => Some(("ne", ops::try_ne)),
        "lt" => Some(("lt", ops::try_lt)),
        "le" => Some(("le", ops::try_le)),
        "gt" => Some(("gt", ops::try_gt)),
        "ge" => Some(("ge", ops::try_ge)),
        _ => None,
    };
    if let Some((name, f)) = comparison {
        return Some(binary_cases(name, f, plan));
    }
    Some(match op {
        "sum_dim" => sum_dim_cases(plan, false),
        "mean_dim" => sum_dim_cases(plan, true),
        "max_dim" => max_cases(plan, false),
        "argmax" => max_cases(plan, true),
        "where" => where_cases(plan),
        "softmax" => softmax_cases(plan, false),
        "log_softmax" => softmax_cases(plan, true),
        "cross_entropy" => {
            let mut cases = cross_entropy_cases(plan);
            cases.extend(cross_entropy_option_cases());
            cases
        }
        "arange" => arange_cases(plan),
        "rand" => random_cases(plan, false),
        "randn" => random_cases(plan, true),
        _ => return None,
    })
}

/// The inputs reductions run on, with the dimensions each is reduced along: matrices along each
/// dimension, both and none; a 3-d tensor along inner, outer and split dimensions (given out of
/// order); empty extents reduced and kept; a 0-d tensor; the large length; the non-contiguous
/// layouts (transposed, strided, offset, expanded); many rows of a width past the widest lane.
/// Negative dimensions, counted from the end (`-1` the last, alone and beside a positive one).
/// And refusals: a dimension out of range (past either end) and one given twice (also as `1` and
/// `-1`).
fn reduction_inputs(plan: &Plan, dtype: DType, values: Values) -> Vec<(Input, Vec<isize>)> {
    let wide = plan.wide();
    let input = |shape: &[usize], layout: Layout| Input::new(dtype, shape, layout, values, 1);
    let contiguous = |shape: &[usize]| input(shape, Layout::Contiguous);
    vec![
        (contiguous(&[3, 5]), vec![0]),
        (contiguous(&[3, 5]), vec![1]),
        (contiguous(&[3, 5]), vec![0, 1]),
        (contiguous(&[3, 5]), vec![]),
        (contiguous(&[2, 3, 4]), vec![1]),
        (contiguous(&[2, 3, 4]), vec![2, 0]),
        (contiguous(&[2, 3, 4]), vec![0, 1]),
        (contiguous(&[0, 3]), vec![0]),
        (contiguous(&[0, 3]), vec![1]),
        (contiguous(&[3, 0]), vec![1]),
        (contiguous(&[]), vec![]),
        (contiguous(&[7]), vec![0]),
        (contiguous(&[plan.large]), vec![0]),
        (contiguous(&[64, wide + 1]), vec![1]),
        (contiguous(&[64, wide + 1]), vec![0]),
        (input(&[wide + 1, 3], Layout::Transposed), vec![0]),
        (input(&[wide + 1, 3], Layout::Transposed), vec![1]),
        (input(&[2, wide + 1], Layout::Strided), vec![1]),
        (input(&[9], Layout::Offset), vec![0]),
        (input(&[3, 5], Layout::Expanded(vec![1, 5])), vec![0]),
        (input(&[3, wide + 1], Layout::Expanded(vec![3, 1])), vec![1]),
        (contiguous(&[3, 5]), vec![-1]),
        (contiguous(&[2, 3, 4]), vec![-3]),
        (contiguous(&[2, 3, 4]), vec![-1, 0]),
        (input(&[wide + 1, 3], Layout::Transposed), vec![-2]),
        // Refused on both sides.
        (contiguous(&[3, 5]), vec![2]),
        (contiguous(&[3, 5]), vec![-3]),
        (contiguous(&[3, 5]), vec![1, 1]),
        (contiguous(&[3, 5]), vec![1, -1]),
    ]
}

fn sum_dim_cases(plan: &Plan, mean: bool) -> Vec<Case> {
    let op = if mean { "mean_dim" } else { "sum_dim" };
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for (input, dims) in reduction_inputs(plan, dtype, Values::Finite) {
            for keepdim in [false, true] {
                let note = format!("dims {dims:?}{}", if keepdim { ", keepdim" } else { "" });
                let scale = reduction_scale(dims.clone(), mean);
                let dims = dims.clone();
                let call: Call = Box::new(move |xs, _| {
                    if mean {
                        ops::try_mean_dim(&xs[0], &dims, keepdim)
                    } else {
                        ops::try_sum_dim(&xs[0], &dims, keepdim)
                    }
                });
                cases.push(
                    Case::new(op, vec![input.clone()], call)
                        .note(note)
                        .scale(scale),
                );
            }
        }
    }
    cases
}

/// Per element of the result, the error scale of its sum (`n · Σ|xᵢ|` over the `n` elements it
/// reduces) or of its mean (`Σ|xᵢ|`), as `sum` and `mean` state theirs.
pub(crate) fn reduction_scale(dims: Vec<isize>, mean: bool) -> Scale {
    Rc::new(move |xs: &[Tensor]| {
        let x = &xs[0];
        let r = rules::reduction("conformance kit", x.shape(), &dims, false)?;
        let values = x.try_to_f64_vec()?;
        let mut scale = vec![0.0; r.outer];
        for (i, v) in values.iter().enumerate() {
            // Element `i`'s coordinates, innermost first; the kept ones make its result's index.
            let (mut rest, mut at, mut step) = (i, 0, 1);
            for (d, &extent) in x.shape().iter().enumerate().rev() {
                if !r.reduced[d] {
                    at += rest % extent * step;
                    step *= extent;
                }
                rest /= extent;
            }
            scale[at] += v.abs();
        }
        if !mean {
            scale.iter_mut().for_each(|s| *s *= r.inner as f64);
        }
        Ok(scale)
    })
}

fn max_cases(plan: &Plan, index: bool) -> Vec<Case> {
    let op = if index { "argmax" } else { "max_dim" };
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        // NaN, infinities and integer extremes: the maximum must propagate NaN and find the first
        // of equal values (`bool` inputs are mostly ties) as the oracle does.
        for (input, dims) in reduction_inputs(plan, dtype, Values::WithSpecials) {
            // One dimension (a 0-d input gets dimension 0, refused alike).
            let dim = match dims[..] {
                [dim] => dim,
                [] if input.shape.is_empty() => 0,
                _ => continue,
            };
            for keepdim in [false, true] {
                let note = format!("dim {dim}{}", if keepdim { ", keepdim" } else { "" });
                let call: Call = Box::new(move |xs, _| {
                    if index {
                        ops::try_argmax(&xs[0], dim, keepdim)
                    } else {
                        ops::try_max_dim(&xs[0], dim, keepdim)
                    }
                });
                cases.push(Case::new(op, vec![input.clone()], call).note(note));
            }
        }
    }
    cases
}

/// `softmax` or `log_softmax` along each single dimension the reductions are checked along
/// (finite values: the composites' tolerances scale with their terms).
fn softmax_cases(plan: &Plan, log: bool) -> Vec<Case> {
    let op = if log { "log_softmax" } else { "softmax" };
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for (input, dims) in reduction_inputs(plan, dtype, Values::Finite) {
            // One dimension (a 0-d input gets dimension 0, refused alike).
            let dim = match dims[..] {
                [dim] => dim,
                [] if input.shape.is_empty() => 0,
                _ => continue,
            };
            let call: Call = Box::new(move |xs, _| {
                if log {
                    ops::try_log_softmax(&xs[0], dim)
                } else {
                    ops::try_softmax(&xs[0], dim)
                }
            });
            let case = Case::new(op, vec![input], call).note(format!("dim {dim}"));
            cases.push(if log {
                case.scale(Rc::new(move |xs: &[Tensor]| {
                    let dim = switchyard::wrap_dim("log_softmax", dim, xs[0].shape())?;
                    log_softmax_scales(&xs[0].try_to_f64_vec()?, xs[0].shape(), dim)
                }))
            } else {
                case
            });
        }
    }
    cases
}

/// Per element of `log_softmax(x, dim)`, the magnitude of the terms it is made of:
/// `1 + |xᵢ − m| + |ln Σ exp(x − m)|` over its slice along `dim` (`m` the slice's maximum); an
/// error of a few machine epsilons of that is a few roundings of `exp`, the sum and `ln`.
pub(crate) fn log_softmax_scales(x: &[f64], shape: &[usize], dim: usize) -> Result<Vec<f64>> {
    let extent = shape.get(dim).copied().unwrap_or(1);
    let inner: usize = shape.get(dim + 1..).map_or(1, |s| s.iter().product());
    let mut scale = vec![0.0; x.len()];
    if extent == 0 {
        return Ok(scale);
    }
    // A slice starts at each element whose coordinate along `dim` is 0 (`inner` is not 0 here:
    // an empty extent after `dim` leaves `x` empty).
    for start in (0..x.len()).filter(|i| (i / inner).is_multiple_of(extent)) {
        let slice = |k: usize| start + k * inner;
        let m = (0..extent).map(|k| x[slice(k)]).fold(f64::MIN, f64::max);
        let log_total = (0..extent)
            .map(|k| (x[slice(k)] - m).exp())
            .sum::<f64>()
            .ln();
        for k in 0..extent {
            scale[slice(k)] = 1.0 + (x[slice(k)] - m).abs() + log_total.abs();
        }
    }
    Ok(scale)
}

/// The class of each of `n` rows among `classes`, spread over the classes; all out of range
/// when there are none (both sides refuse).
fn class_targets(n: usize, classes: usize) -> Vec<i64> {
    (0..n)
        .map(|i| (i * 7 + 3).checked_rem(classes).unwrap_or(i) as i64)
        .collect()
}

/// `cross_entropy` of logits `[N, C]` in every layout, with targets in `0..C` built in the call
/// and moved to the device (so a device that cannot hold `i64` does not serve it); an empty
/// batch (NaN on both sides), no classes, a target out of range, logits of the wrong rank and
/// integer logits are refused alike.
fn cross_entropy_cases(plan: &Plan) -> Vec<Case> {
    let wide = plan.wide();
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        let input =
            |shape: &[usize], layout: Layout| Input::new(dtype, shape, layout, Values::Finite, 1);
        let contiguous = |shape: &[usize]| input(shape, Layout::Contiguous);
        let inputs = [
            (contiguous(&[3, 5]), false),
            (contiguous(&[1, 1]), false),
            (contiguous(&[0, 3]), false),
            (contiguous(&[3, 0]), false),
            (contiguous(&[64, wide + 1]), false),
            (contiguous(&[plan.large, 2]), false),
            (input(&[wide + 1, 3], Layout::Transposed), false),
            (input(&[2, wide + 1], Layout::Strided), false),
            (input(&[9, 4], Layout::Offset), false),
            (input(&[3, 5], Layout::Expanded(vec![1, 5])), false),
            // Refused alike: a target out of range, logits that are not a matrix.
            (contiguous(&[3, 5]), true),
            (contiguous(&[7]), false),
        ];
        for (logits, out_of_range) in inputs {
            let call: Call = Box::new(move |xs, device| {
                let (n, classes) = match xs[0].shape() {
                    [n, c] => (*n, *c),
                    other => (other.first().copied().unwrap_or(0), 0),
                };
                let mut targets = class_targets(n, classes);
                if out_of_range {
                    targets[n - 1] = classes as i64;
                }
                let targets = Tensor::from_vec(targets, &[n])?.try_to(device)?;
                ops::try_cross_entropy(&xs[0], &targets)
            });
            let note = if out_of_range {
                "a target out of range"
            } else {
                "targets (7i + 3) mod C"
            };
            let scale: Scale = Rc::new(|xs: &[Tensor]| {
                let [n, classes] = xs[0].shape() else {
                    return Ok(vec![0.0]);
                };
                let per_element = log_softmax_scales(&xs[0].try_to_f64_vec()?, xs[0].shape(), 1)?;
                let picked: f64 = class_targets(*n, *classes)
                    .iter()
                    .enumerate()
                    .filter_map(|(row, &t)| per_element.get(row * classes + t as usize))
                    .sum();
                Ok(vec![picked / (*n).max(1) as f64])
            });
            cases.push(
                Case::new("cross_entropy", vec![logits], call)
                    .note(note)
                    .scale(scale),
            );
        }
    }
    cases
}

fn where_cases(plan: &Plan) -> Vec<Case> {
    let specials = Values::WithSpecials;
    let wide = plan.wide();
    let call = || -> Call { Box::new(|xs, _| ops::try_where_cond(&xs[0], &xs[1], &xs[2])) };
    let mut cases = Vec::new();
    let cond =
        |shape: &[usize], layout: Layout| Input::new(DType::Bool, shape, layout, specials, 3);
    for dtype in DType::ALL {
        let value = |shape: &[usize], layout: Layout, seed| {
            Input::new(dtype, shape, layout, specials, seed)
        };
        // All three of each shape and layout a one-operand op gets.
        for x in plan.inputs(dtype, specials, 1) {
            let c = Input {
                dtype: DType::Bool,
                seed: 3,
                ..x.clone()
            };
            let y = Input {
                seed: 2,
                ..x.clone()
            };
            cases.push(Case::new("where", vec![c, x, y], call()));
        }
        // Broadcasting among the three, and layouts that differ.
        let triples = [
            (
                cond(&[3, 1], Layout::Contiguous),
                value(&[1, 5], Layout::Contiguous, 1),
                value(&[5], Layout::Contiguous, 2),
            ),
            (
                cond(&[], Layout::Contiguous),
                value(&[3, 5], Layout::Contiguous, 1),
                value(&[3, 5], Layout::Transposed, 2),
            ),
            (
                cond(&[3, 5], Layout::Transposed),
                value(&[], Layout::Contiguous, 1),
                value(&[3, 1], Layout::Contiguous, 2),
            ),
            (
                cond(&[2, wide + 1], Layout::Strided),
                value(&[2, 1], Layout::Contiguous, 1),
                value(&[wide + 1], Layout::Contiguous, 2),
            ),
            (
                cond(&[0, 5], Layout::Contiguous),
                value(&[1, 5], Layout::Contiguous, 1),
                value(&[5], Layout::Contiguous, 2),
            ),
        ];
        for (c, x, y) in triples {
            cases.push(Case::new("where", vec![c, x, y], call()));
        }
        // A condition that is not `bool`: refused alike.
        if dtype != DType::Bool {
            let c = value(&[7], Layout::Contiguous, 3);
            let (x, y) = (
                value(&[7], Layout::Contiguous, 1),
                value(&[7], Layout::Contiguous, 2),
            );
            cases.push(Case::new("where", vec![c, x, y], call()));
        }
    }
    // Promotion of the two values.
    for (a, b) in MIXED {
        let c = cond(&[3, 5], Layout::Contiguous);
        let x = Input::new(a, &[3, 5], Layout::Contiguous, specials, 1);
        let y = Input::new(b, &[5], Layout::Contiguous, specials, 2);
        cases.push(Case::new("where", vec![c, x, y], call()));
    }
    cases
}

fn arange_cases(plan: &Plan) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut lengths: Vec<usize> = plan.edge_shapes().into_iter().flatten().collect();
    // Past what `u8` holds (refused) and past what `bf16` and `f16` hold exactly (rounded).
    lengths.extend([256, 257, 3000]);
    lengths.sort_unstable();
    lengths.dedup();
    for dtype in DType::ALL {
        for &n in &lengths {
            let call: Call = Box::new(move |_, device| ops::try_arange(n, dtype, device));
            cases.push(Case::new("arange", vec![], call).note(format!("arange({n}, {dtype})")));
        }
    }
    cases
}

fn random_cases(plan: &Plan, normal: bool) -> Vec<Case> {
    let op = if normal { "randn" } else { "rand" };
    let mut cases = Vec::new();
    // Seeds and offsets: zero, ordinary, and all ones (the counter wraps past 2⁶⁴ within the
    // call: `offset + i` is taken modulo 2⁶⁴ on every backend).
    let streams = [(0, 0), (12_345, 1_000), (-1, -3)];
    for dtype in DType::ALL {
        for shape in plan.edge_shapes() {
            for (seed, offset) in streams {
                let note = format!("{op}({shape:?}, seed {seed}, offset {offset}, {dtype})");
                let len: usize = shape.iter().product();
                let shape = shape.clone();
                let call: Call = Box::new(move |_, device| {
                    if normal {
                        ops::try_randn_seeded(&shape, seed, offset, dtype, device)
                    } else {
                        ops::try_rand_seeded(&shape, seed, offset, dtype, device)
                    }
                });
                // With a scale of 1, `Accumulated`'s epsilon is an absolute error (a GPU's
                // `randn` in `f32`).
                let ones: Scale = Rc::new(move |_| Ok(vec![1.0; len]));
                cases.push(Case::new(op, vec![], call).note(note).scale(ones));
            }
        }
    }
    cases
}

/// `cross_entropy_with`'s options (`reduction`, `weight`, `ignore_index`, `label_smoothing`) and
/// `[N, C, d1]` logits, in `f32` and `f64`: targets `(7i + 3) mod C` with every fifth ignored,
/// a weight per class, all three reductions. The scale: `2·Σ` of the elements' `log_softmax`
/// scales (weights ≤ 2), per output element.
fn cross_entropy_option_cases() -> Vec<Case> {
    use ops::{CrossEntropyOptions, LossReduction};
    let mut cases = Vec::new();
    for dtype in [DType::F32, DType::F64] {
        for shape in [vec![6, 4], vec![3, 4, 5]] {
            for reduction in [LossReduction::Mean, LossReduction::Sum, LossReduction::None] {
                let logits = Input::new(dtype, &shape, Layout::Contiguous, Values::Finite, 1);
                let call: Call = Box::new(move |xs, device| {
                    let shape = xs[0].shape().to_vec();
                    let (n, classes) = (shape[0], shape[1]);
                    let inner: usize = shape[2..].iter().product();
                    let mut targets = class_targets(n * inner, classes);
                    targets.iter_mut().step_by(5).for_each(|t| *t = -1);
                    let mut target_shape = vec![n];
                    target_shape.extend_from_slice(&shape[2..]);
                    let targets = Tensor::from_vec(targets, &target_shape)?.try_to(device)?;
                    let weights: Vec<f64> = (0..classes).map(|c| 0.5 + c as f64 / 2.0).collect();
                    let weight = ops::try_to_dtype(
                        &Tensor::from_vec(weights, &[classes])?.try_to(device)?,
                        xs[0].dtype(),
                    )?;
                    let options = CrossEntropyOptions::new()
                        .reduction(reduction)
                        .weight(&weight)
                        .ignore_index(-1)
                        .label_smoothing(0.1);
                    ops::try_cross_entropy_with(&xs[0], &targets, &options)
                });
                let scale: Scale = Rc::new(move |xs: &[Tensor]| {
                    let shape = xs[0].shape();
                    let per_element = log_softmax_scales(&xs[0].try_to_f64_vec()?, shape, 1)?;
                    let (classes, inner) = (shape[1], shape[2..].iter().product::<usize>());
                    let rows: Vec<f64> = (0..shape[0] * inner)
                        .map(|r| {
                            let (i, j) = (r / inner, r % inner);
                            let row: f64 = (0..classes)
                                .map(|c| per_element[(i * classes + c) * inner + j])
                                .sum();
                            2.0 * row
                        })
                        .collect();
                    Ok(match reduction {
                        LossReduction::None => rows,
                        _ => vec![rows.iter().sum()],
                    })
                });
                cases.push(
                    Case::new("cross_entropy", vec![logits], call)
                        .note(format!("with options, {reduction:?}"))
                        .scale(scale),
                );
            }
        }
    }
    cases
}
