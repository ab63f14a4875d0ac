//! The cases of the reductions and factories called with PyTorch's keyword arguments:
//! `sum_with` and `mean_with` (every dim or some, `keepdim`, `dtype`), `argmax_all`,
//! `max_dim_with_indices` (the values and the indices, each a case), `softmax_in`,
//! `log_softmax_in` and `arange_step`, for every dtype; refusals (a dim out of range, an empty
//! `argmax_all`, a zero step) alike on both sides.

use std::rc::Rc;

use switchyard::ops::{self, Reduce};
use switchyard::{DType, Device, Result, Tensor};

use super::cases::{Call, Case, Input, Layout, Plan};
use super::nn_cases::{log_softmax_scales, reduction_scale};
use super::values::Values;

/// The cases of `op` if it is one of this file's.
pub(crate) fn keyword_cases(op: &str, plan: &Plan) -> Option<Vec<Case>> {
    Some(match op {
        "sum_with" => reduce_cases("sum_with", false),
        "mean_with" => reduce_cases("mean_with", true),
        "argmax_all" => argmax_all_cases(),
        "max_dim_with_indices" => max_with_indices_cases(),
        "softmax_in" => softmax_in_cases("softmax_in", false),
        "log_softmax_in" => softmax_in_cases("log_softmax_in", true),
        "arange_step" => arange_step_cases(plan),
        _ => return None,
    })
}

fn input(dtype: DType, shape: &[usize], layout: Layout, values: Values) -> Input {
    Input::new(dtype, shape, layout, values, 1)
}

fn reduce_cases(op: &'static str, mean: bool) -> Vec<Case> {
    let hows: Vec<(&[usize], Layout, Reduce)> = vec![
        (&[3, 5], Layout::Contiguous, Reduce::all()),
        (&[3, 5], Layout::Transposed, Reduce::all().keepdim(true)),
        (&[2, 3, 4], Layout::Contiguous, Reduce::along(&[-1, 0])),
        (
            &[3, 5],
            Layout::Contiguous,
            Reduce::along(&[-1]).dtype(DType::F64),
        ),
        (
            &[3, 5],
            Layout::Strided,
            Reduce::along(&[0]).keepdim(true).dtype(DType::F32),
        ),
        (&[], Layout::Contiguous, Reduce::all().keepdim(true)),
        (&[0, 3], Layout::Contiguous, Reduce::all()),
        // Refused alike: a dim out of range.
        (&[3, 5], Layout::Contiguous, Reduce::along(&[-3])),
    ];
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for (shape, layout, how) in &hows {
            let rank = shape.len() as isize;
            let dims = how.dims.clone().unwrap_or_else(|| (0..rank).collect());
            let how = how.clone();
            let note = format!("{how:?}");
            let call: Call = Box::new(move |xs, _| {
                if mean {
                    ops::try_mean_with(&xs[0], &how)
                } else {
                    ops::try_sum_with(&xs[0], &how)
                }
            });
            let x = input(dtype, shape, layout.clone(), Values::Finite);
            cases.push(
                Case::new(op, vec![x], call)
                    .note(note)
                    .scale(reduction_scale(dims, mean)),
            );
        }
    }
    cases
}

fn argmax_all_cases() -> Vec<Case> {
    let shapes: [(&[usize], Layout); 5] = [
        (&[3, 5], Layout::Contiguous),
        (&[3, 5], Layout::Transposed),
        (&[7], Layout::Offset),
        (&[], Layout::Contiguous),
        // Refused alike: the maximum of nothing.
        (&[0, 3], Layout::Contiguous),
    ];
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for (shape, layout) in &shapes {
            for keepdim in [false, true] {
                let call: Call = Box::new(move |xs, _| ops::try_argmax_all(&xs[0], keepdim));
                let x = input(dtype, shape, layout.clone(), Values::WithSpecials);
                cases.push(
                    Case::new("argmax_all", vec![x], call).note(format!("keepdim {keepdim}")),
                );
            }
        }
    }
    cases
}

fn max_with_indices_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for (shape, layout, dim) in [
            (&[3, 5][..], Layout::Contiguous, -1),
            (&[3, 5], Layout::Transposed, 0),
            (&[2, 3, 4], Layout::Contiguous, 1),
            // Refused alike: an empty extent.
            (&[0, 3], Layout::Contiguous, 0),
        ] {
            for (part, pick) in [("values", 0), ("indices", 1)] {
                let call: Call = Box::new(move |xs, _| {
                    let (values, indices) = ops::try_max_dim_with_indices(&xs[0], dim, false)?;
                    Ok(if pick == 0 { values } else { indices })
                });
                let x = input(dtype, shape, layout.clone(), Values::WithSpecials);
                cases.push(
                    Case::new("max_dim_with_indices", vec![x], call)
                        .note(format!("dim {dim}, {part}")),
                );
            }
        }
    }
    cases
}

fn softmax_in_cases(op: &'static str, log: bool) -> Vec<Case> {
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for to in [DType::F32, DType::F64] {
            for (shape, dim) in [(&[3, 5][..], -1isize), (&[2, 3, 4], 0)] {
                let call: Call = Box::new(move |xs, _| {
                    if log {
                        ops::try_log_softmax_in(&xs[0], dim, to)
                    } else {
                        ops::try_softmax_in(&xs[0], dim, to)
                    }
                });
                let x = input(dtype, shape, Layout::Contiguous, Values::Finite);
                let case = Case::new(op, vec![x], call).note(format!("dim {dim}, in {to}"));
                cases.push(if log {
                    case.scale(Rc::new(move |xs: &[Tensor]| {
                        let d = switchyard::wrap_dim(op, dim, xs[0].shape())?;
                        log_softmax_scales(&xs[0].try_to_f64_vec()?, xs[0].shape(), d)
                    }))
                } else {
                    case
                });
            }
        }
    }
    cases
}

fn arange_step_cases(plan: &Plan) -> Vec<Case> {
    let large = plan.large as f64;
    let ranges = [
        (0.0, 10.0, 3.0),
        (1.0, 2.0, 0.25),
        (10.0, 0.0, -3.0),
        (-5.0, 5.0, 1.0),
        (0.0, 0.0, 1.0),
        (0.0, large, 1.0),
        // Refused alike: a zero step, a step away from the end.
        (0.0, 1.0, 0.0),
        (0.0, 1.0, -1.0),
    ];
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for (start, end, step) in ranges {
            let call: Call = Box::new(move |_, device: Device| -> Result<Tensor> {
                ops::try_arange_step(start, end, step, dtype, device)
            });
            cases.push(
                Case::new("arange_step", vec![], call)
                    .note(format!("arange_step({start}, {end}, {step}) in {dtype}")),
            );
        }
    }
    cases
}
