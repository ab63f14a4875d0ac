//! The cases of the view ops: each on a few layouts, for every dtype. A view is computed on any
//! device from the layout alone; the backend's part is holding the storage, reading it back and,
//! for a `reshape` that cannot be a view, the copy.

use switchyard::ops;
use switchyard::{DType, Result, Tensor};

use super::cases::{Call, Case, Input, Layout};
use super::values::Values;

/// The cases of view op `op`, or `None` if it is no view op.
pub(crate) fn view_cases(op: &str) -> Option<Vec<Case>> {
    type View = fn(&Tensor) -> Result<Tensor>;
    let calls: Vec<(&'static str, &[usize], Layout, &'static str, View)> = match op {
        "view" => vec![
            (
                "view",
                &[2, 3, 4],
                Layout::Contiguous,
                "view([4, -1])",
                |x| ops::try_view(x, &[4, -1]),
            ),
            ("view", &[0, 3], Layout::Contiguous, "view([-1])", |x| {
                ops::try_view(x, &[-1])
            }),
        ],
        "reshape" => vec![
            (
                "reshape",
                &[2, 3, 4],
                Layout::Contiguous,
                "reshape([6, 4])",
                |x| ops::try_reshape(x, &[6, 4]),
            ),
            // Not viewable: a copy, made on the device.
            (
                "reshape",
                &[3, 5],
                Layout::Transposed,
                "reshape([15])",
                |x| ops::try_reshape(x, &[15]),
            ),
        ],
        "transpose" => vec![
            (
                "transpose",
                &[2, 3, 4],
                Layout::Contiguous,
                "transpose(0, 2)",
                |x| ops::try_transpose(x, 0, 2),
            ),
            (
                "transpose",
                &[2, 3, 4],
                Layout::Contiguous,
                "transpose(-2, -1)",
                |x| ops::try_transpose(x, -2, -1),
            ),
            // Refused alike: rank 3 has no dim -4.
            (
                "transpose",
                &[2, 3, 4],
                Layout::Contiguous,
                "transpose(-4, 0)",
                |x| ops::try_transpose(x, -4, 0),
            ),
        ],
        "permute" => vec![
            (
                "permute",
                &[2, 3, 4],
                Layout::Contiguous,
                "permute([2, 0, 1])",
                |x| ops::try_permute(x, &[2, 0, 1]),
            ),
            (
                "permute",
                &[2, 3, 4],
                Layout::Contiguous,
                "permute([-1, 0, -2])",
                |x| ops::try_permute(x, &[-1, 0, -2]),
            ),
        ],
        "narrow" => vec![
            (
                "narrow",
                &[2, 3, 4],
                Layout::Contiguous,
                "narrow(2, 1, 2)",
                |x| ops::try_narrow(x, 2, 1, 2),
            ),
            (
                "narrow",
                &[2, 3, 4],
                Layout::Contiguous,
                "narrow(-1, -3, 2)",
                |x| ops::try_narrow(x, -1, -3, 2),
            ),
            // Refused alike: past the end.
            (
                "narrow",
                &[5, 4],
                Layout::Contiguous,
                "narrow(0, 4, 2)",
                |x| ops::try_narrow(x, 0, 4, 2),
            ),
        ],
        "slice" => vec![
            (
                "slice",
                &[2, 3, 4],
                Layout::Contiguous,
                "slice(2, 0, 4, 3)",
                |x| ops::try_slice(x, 2, 0, 4, 3),
            ),
            ("slice", &[17], Layout::Offset, "slice(0, 1, 17, 2)", |x| {
                ops::try_slice(x, 0, 1, 17, 2)
            }),
            (
                "slice",
                &[17],
                Layout::Offset,
                "slice(-1, -7, -1, 2)",
                |x| ops::try_slice(x, -1, -7, -1, 2),
            ),
        ],
        "select" => vec![
            (
                "select",
                &[2, 3, 4],
                Layout::Contiguous,
                "select(1, 2)",
                |x| ops::try_select(x, 1, 2),
            ),
            (
                "select",
                &[2, 3, 4],
                Layout::Contiguous,
                "select(-2, -1)",
                |x| ops::try_select(x, -2, -1),
            ),
        ],
        "expand" => vec![
            (
                "expand",
                &[3, 1],
                Layout::Contiguous,
                "expand([2, 3, 4])",
                |x| ops::try_expand(x, &[2, 3, 4]),
            ),
            (
                "expand",
                &[3, 1],
                Layout::Contiguous,
                "expand([2, -1, 4])",
                |x| ops::try_expand(x, &[2, -1, 4]),
            ),
        ],
        "squeeze" => vec![
            (
                "squeeze",
                &[3, 1, 5],
                Layout::Contiguous,
                "squeeze(None)",
                |x| ops::try_squeeze(x, None),
            ),
            (
                "squeeze",
                &[3, 1, 5],
                Layout::Contiguous,
                "squeeze(Some(1))",
                |x| ops::try_squeeze(x, Some(1)),
            ),
            (
                "squeeze",
                &[3, 1, 5],
                Layout::Contiguous,
                "squeeze(Some(-2))",
                |x| ops::try_squeeze(x, Some(-2)),
            ),
        ],
        "squeeze_dims" => vec![
            (
                "squeeze_dims",
                &[1, 3, 1, 1],
                Layout::Contiguous,
                "squeeze_dims([0, -1, 1])",
                |x| ops::try_squeeze_dims(x, &[0, -1, 1]),
            ),
            (
                "squeeze_dims",
                &[1, 3, 1, 1],
                Layout::Contiguous,
                "squeeze_dims([])",
                |x| ops::try_squeeze_dims(x, &[]),
            ),
        ],
        "unsqueeze" => vec![
            (
                "unsqueeze",
                &[2, 3, 4],
                Layout::Contiguous,
                "unsqueeze(1)",
                |x| ops::try_unsqueeze(x, 1),
            ),
            (
                "unsqueeze",
                &[2, 3, 4],
                Layout::Contiguous,
                "unsqueeze(-1)",
                |x| ops::try_unsqueeze(x, -1),
            ),
        ],
        _ => return None,
    };
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for (name, shape, layout, note, view) in &calls {
            let input = Input::new(dtype, shape, layout.clone(), Values::WithSpecials, 1);
            let view = *view;
            let call: Call = Box::new(move |xs, _| view(&xs[0]));
            cases.push(Case::new(name, vec![input], call).note(*note));
        }
    }
    Some(cases)
}
