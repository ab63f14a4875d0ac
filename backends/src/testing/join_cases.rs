//! The cases of `cat` and `stack`: for every dtype, inputs of several extents along the joined
//! dimension (one of them empty), each layout, negative dims, the large length; pairs of two
//! dtypes (the result promoted); and refusals (no inputs, shapes that do not fit, a 0-d input, a
//! dim out of range). Copies: exact.

use switchyard::ops;
use switchyard::{DType, Result, Tensor};

use super::cases::{Call, Case, Input, Layout, MIXED, Plan};
use super::values::Values;

type Join = fn(&[Tensor], isize) -> Result<Tensor>;

/// The cases of `op` if it is `cat` or `stack`.
pub(crate) fn join_cases(op: &str, plan: &Plan) -> Option<Vec<Case>> {
    let (name, join): (&'static str, Join) = match op {
        "cat" => ("cat", ops::try_cat),
        "stack" => ("stack", ops::try_stack),
        _ => return None,
    };
    let stack = name == "stack";
    let wide = plan.wide();
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        let input = |shape: &[usize], layout: Layout, seed| {
            Input::new(dtype, shape, layout, Values::WithSpecials, seed)
        };
        let contiguous = |shape: &[usize], seed| input(shape, Layout::Contiguous, seed);
        // (inputs, dim): `cat` joins extents along `dim`, `stack` needs one shape.
        let calls: Vec<(Vec<Input>, isize)> = if stack {
            vec![
                (vec![contiguous(&[2, 3], 1), contiguous(&[2, 3], 2)], 0),
                (vec![contiguous(&[2, 3], 1), contiguous(&[2, 3], 2)], -1),
                (
                    vec![
                        input(&[3, 5], Layout::Transposed, 1),
                        input(&[3, 5], Layout::Expanded(vec![1, 5]), 2),
                        input(&[3, 5], Layout::Offset, 3),
                    ],
                    1,
                ),
                (vec![contiguous(&[], 1), contiguous(&[], 2)], 0),
                (vec![contiguous(&[0, 3], 1), contiguous(&[0, 3], 2)], -2),
                (vec![contiguous(&[plan.large], 1)], 0),
                // Refused alike: shapes differ; a dim past the new rank; nothing to stack.
                (vec![contiguous(&[2, 3], 1), contiguous(&[3, 2], 2)], 0),
                (vec![contiguous(&[2, 3], 1), contiguous(&[2, 3], 2)], 3),
                (vec![], 0),
            ]
        } else {
            vec![
                (vec![contiguous(&[2, 3], 1), contiguous(&[2, 5], 2)], -1),
                (vec![contiguous(&[3, 4], 1), contiguous(&[1, 4], 2)], 0),
                (
                    vec![
                        contiguous(&[2, 3, 4], 1),
                        contiguous(&[2, 0, 4], 2),
                        input(&[2, 4, 4], Layout::Strided, 3),
                    ],
                    -2,
                ),
                (
                    vec![
                        input(&[wide + 1, 3], Layout::Transposed, 1),
                        input(&[wide + 1, 2], Layout::Expanded(vec![wide + 1, 1]), 2),
                        input(&[wide + 1, 1], Layout::Offset, 3),
                    ],
                    1,
                ),
                (vec![contiguous(&[7], 1)], 0),
                (vec![contiguous(&[plan.large], 1), contiguous(&[3], 2)], 0),
                (vec![contiguous(&[0], 1), contiguous(&[0], 2)], 0),
                // Refused alike: extents differ outside `dim`; ranks differ; a 0-d input; a dim
                // out of range; nothing to join.
                (vec![contiguous(&[2, 3], 1), contiguous(&[3, 3], 2)], 1),
                (vec![contiguous(&[2, 3], 1), contiguous(&[3], 2)], 0),
                (vec![contiguous(&[], 1), contiguous(&[], 2)], 0),
                (vec![contiguous(&[2, 3], 1)], 2),
                (vec![], 0),
            ]
        };
        for (inputs, dim) in calls {
            cases.push(case(name, join, inputs, dim));
        }
    }
    // Two dtypes: the result is their promoted dtype.
    for (a, b) in MIXED {
        let shape: &[usize] = &[2, 3];
        let inputs = vec![
            Input::new(a, shape, Layout::Contiguous, Values::WithSpecials, 1),
            Input::new(b, shape, Layout::Contiguous, Values::WithSpecials, 2),
        ];
        cases.push(case(name, join, inputs, 0));
    }
    Some(cases)
}

fn case(name: &'static str, join: Join, inputs: Vec<Input>, dim: isize) -> Case {
    let call: Call = Box::new(move |xs, _| join(xs, dim));
    Case::new(name, inputs, call).note(format!("dim {dim}"))
}
