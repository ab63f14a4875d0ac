//! The cases the kit runs: for each standard op, its inputs (dtype, shape, layout, values) and
//! how to call it. Shapes cover the edges where kernels go wrong: 0-dimensional, empty, one
//! element, odd lengths, each SIMD width ± 1, non-contiguous layouts (transposed, strided, offset,
//! expanded), broadcasting, and one large length.

use std::fmt;
use std::rc::Rc;

use switchyard::ops;
use switchyard::{DType, Device, DispatchError, Result, Tensor};

use super::values::{self, Values};

/// How a case calls its op: on the inputs (on the device under test, or the CPU for the
/// oracle) and that device.
pub(crate) type Call = Box<dyn Fn(&[Tensor], Device) -> Result<Tensor>>;

/// The per-element error scale of a case's result (see `Tolerance::Accumulated`), from its
/// inputs on the CPU (a closure: a reduction's scale depends on its dimensions).
pub(crate) type Scale = Rc<dyn Fn(&[Tensor]) -> Result<Vec<f64>>>;

/// One op call to check.
pub(crate) struct Case {
    pub(crate) op: &'static str,
    pub(crate) inputs: Vec<Input>,
    /// The inputs stay on the CPU: the op (`to`) moves them itself.
    pub(crate) inputs_on_cpu: bool,
    pub(crate) call: Call,
    pub(crate) scale: Option<Scale>,
    /// The call's other arguments, for the label (`→ f64`, `transpose(0, 2)`).
    pub(crate) note: String,
}

impl Case {
    pub(crate) fn new(op: &'static str, inputs: Vec<Input>, call: Call) -> Case {
        Case {
            op,
            inputs,
            inputs_on_cpu: false,
            call,
            scale: None,
            note: String::new(),
        }
    }

    pub(crate) fn note(mut self, note: impl Into<String>) -> Case {
        self.note = note.into();
        self
    }

    pub(crate) fn scale(mut self, scale: Scale) -> Case {
        self.scale = Some(scale);
        self
    }

    /// The inputs and the other arguments: `f32[3, 5] transposed, f32[3, 5]`.
    pub(crate) fn label(&self) -> String {
        let mut parts: Vec<String> = self.inputs.iter().map(Input::to_string).collect();
        if !self.note.is_empty() {
            parts.push(self.note.clone());
        }
        parts.join(", ")
    }
}

/// How an input is laid out over its storage.
#[derive(Clone, PartialEq, Debug)]
pub(crate) enum Layout {
    /// Row-major, from the storage's start.
    Contiguous,
    /// The last two dimensions swapped: a transposed view of a contiguous tensor.
    Transposed,
    /// Every second element along the last dimension.
    Strided,
    /// Rows `1..` of a tensor one row longer: contiguous, but not from the storage's start.
    Offset,
    /// Broadcast from this shape (stride 0 where it has extent 1).
    Expanded(Vec<usize>),
}

/// One input of a case.
#[derive(Clone, Debug)]
pub(crate) struct Input {
    pub(crate) dtype: DType,
    /// The shape the op sees.
    pub(crate) shape: Vec<usize>,
    pub(crate) layout: Layout,
    pub(crate) values: Values,
    pub(crate) seed: u64,
}

impl Input {
    pub(crate) fn new(
        dtype: DType,
        shape: &[usize],
        layout: Layout,
        values: Values,
        seed: u64,
    ) -> Input {
        Input {
            dtype,
            shape: shape.to_vec(),
            layout,
            values,
            seed,
        }
    }

    /// The contiguous tensor the layout views, or `None` when its extent overflows.
    fn base_shape(&self) -> Option<Vec<usize>> {
        let mut shape = self.shape.clone();
        let rank = shape.len();
        match &self.layout {
            Layout::Contiguous => {}
            Layout::Transposed => shape.swap(rank - 2, rank - 1),
            Layout::Strided => shape[rank - 1] = shape[rank - 1].checked_mul(2)?,
            Layout::Offset => shape[0] = shape[0].checked_add(1)?,
            Layout::Expanded(from) => shape.clone_from(from),
        }
        Some(shape)
    }

    /// The contiguous CPU tensor the input is a view of; an error when it cannot be built (its
    /// shape overflows, or memory runs out).
    pub(crate) fn base(&self) -> Result<Tensor> {
        let shape = self.base_shape().ok_or_else(|| {
            DispatchError::size_overflow(
                "conformance kit",
                &[&self.shape],
                format!(
                    "the {:?} layout's base shape exceeds usize::MAX",
                    self.layout
                ),
            )
        })?;
        values::tensor(self.dtype, &shape, self.seed, self.values)
    }

    /// The input: `base` (wherever it lives) viewed with the layout. The view ops serve every
    /// device, so the oracle and the backend see the same layout over their own storage.
    pub(crate) fn lay_out(&self, base: &Tensor) -> Result<Tensor> {
        match &self.layout {
            Layout::Contiguous => Ok(base.clone()),
            Layout::Transposed => ops::try_transpose(base, -2, -1),
            Layout::Strided => ops::try_slice(base, -1, 0, isize::MAX, 2),
            Layout::Offset => ops::try_narrow(base, 0, 1, self.shape[0]),
            Layout::Expanded(_) => {
                let shape: Vec<isize> = self.shape.iter().map(|&d| d as isize).collect();
                ops::try_expand(base, &shape)
            }
        }
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:?}", self.dtype, self.shape)?;
        match &self.layout {
            Layout::Contiguous => Ok(()),
            Layout::Transposed => f.write_str(" transposed"),
            Layout::Strided => f.write_str(" strided"),
            Layout::Offset => f.write_str(" offset"),
            Layout::Expanded(from) => write!(f, " expanded from {from:?}"),
        }
    }
}

/// The sizes that depend on the backend: its SIMD widths (or workgroup sizes), each checked
/// at ± 1, and the length of the large case.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) lanes: Vec<usize>,
    pub(crate) large: usize,
}

impl Plan {
    /// The widest lane width a plan may hold: the cases derive shapes from widths (a width + 1, a
    /// `[width + 1, width − 1]` matrix and its products), which must not overflow. A million
    /// lanes is far past any SIMD register or workgroup.
    pub(crate) const WIDEST: usize = 1 << 20;

    /// The widest lane count (at least 8).
    pub(crate) fn wide(&self) -> usize {
        self.lanes.iter().copied().max().unwrap_or(8).max(8)
    }

    /// Contiguous shapes at the edges: 0-d, empty, one element, odd, each width ± 1, a matrix,
    /// an empty matrix, and the large length.
    pub(crate) fn edge_shapes(&self) -> Vec<Vec<usize>> {
        let mut lengths = vec![0, 1, 7];
        for &lanes in &self.lanes {
            lengths.extend([lanes.saturating_sub(1), lanes, lanes + 1]);
        }
        lengths.sort_unstable();
        lengths.dedup();
        let mut shapes = vec![vec![]];
        shapes.extend(lengths.into_iter().map(|n| vec![n]));
        shapes.extend([vec![3, 5], vec![0, 3], vec![self.large]]);
        shapes
    }

    /// One input of each shape and layout a one-operand op is checked on.
    pub(crate) fn inputs(&self, dtype: DType, values: Values, seed: u64) -> Vec<Input> {
        let wide = self.wide();
        let mut inputs: Vec<Input> = self
            .edge_shapes()
            .iter()
            .map(|shape| Input::new(dtype, shape, Layout::Contiguous, values, seed))
            .collect();
        let other = [
            (vec![3, 5], Layout::Transposed),
            (vec![wide + 1, 3], Layout::Transposed),
            (vec![17], Layout::Strided),
            (vec![2, wide + 1], Layout::Strided),
            (vec![9], Layout::Offset),
            (vec![0], Layout::Offset),
            (vec![3, 5], Layout::Expanded(vec![1, 5])),
            (vec![3, wide + 1], Layout::Expanded(vec![3, 1])),
        ];
        for (shape, layout) in other {
            inputs.push(Input::new(dtype, &shape, layout, values, seed));
        }
        inputs
    }
}

/// Makes every input of `cases` hold ordinary values only (see
/// `Conformance::without_special_values`).
pub(crate) fn without_special_values(cases: &mut [Case]) {
    for input in cases.iter_mut().flat_map(|case| &mut case.inputs) {
        input.values = Values::Finite;
    }
}

/// Mixed-dtype pairs for the promoting ops: integer with float, two integers, the two 16-bit
/// floats (which promote to `f32`), `bool` with a float and with an integer.
pub(crate) const MIXED: [(DType, DType); 7] = [
    (DType::I32, DType::F32),
    (DType::U8, DType::I64),
    (DType::F16, DType::BF16),
    (DType::Bool, DType::F64),
    (DType::Bool, DType::U8),
    (DType::I64, DType::F16),
    (DType::F32, DType::F64),
];

pub(crate) type Binary = fn(&Tensor, &Tensor) -> Result<Tensor>;
type Unary = fn(&Tensor) -> Result<Tensor>;

/// The cases of `op` on every dtype, or `None` for an op the kit does not know.
pub(crate) fn cases(op: &str, plan: &Plan) -> Option<Vec<Case>> {
    let binary: Option<(&'static str, Binary)> = match op {
        "add" => Some(("add", ops::try_add)),
        "sub" => Some(("sub", ops::try_sub)),
        "mul" => Some(("mul", ops::try_mul)),
        "div" => Some(("div", ops::try_div)),
        "relu_backward" => Some(("relu_backward", ops::try_relu_backward)),
        "add_" => Some(("add_", add_in_place)),
        "sub_" => Some(("sub_", sub_in_place)),
        "mul_" => Some(("mul_", mul_in_place)),
        "div_" => Some(("div_", div_in_place)),
        "copy_" => Some(("copy_", copy_in_place)),
        _ => None,
    };
    if let Some((name, f)) = binary {
        return Some(binary_cases(name, f, plan));
    }
    if op == "div_rounded" {
        // Both roundings on every binary case (integer zero divisors refused alike).
        let trunc = binary_cases("div_rounded", div_trunc, plan).into_iter();
        let floor = binary_cases("div_rounded", div_floor, plan).into_iter();
        let trunc = trunc.map(|case| case.note("Rounding::Trunc"));
        return Some(
            trunc
                .chain(floor.map(|case| case.note("Rounding::Floor")))
                .collect(),
        );
    }
    let unary: Option<(&'static str, Unary, Values, Option<Scale>)> = match op {
        "neg" => Some(("neg", ops::try_neg, Values::WithSpecials, None)),
        "relu" => Some(("relu", ops::try_relu, Values::WithSpecials, None)),
        "exp" => Some(("exp", ops::try_exp, Values::WithSpecials, None)),
        "contiguous" => Some((
            "contiguous",
            ops::try_contiguous,
            Values::WithSpecials,
            None,
        )),
        "neg_" => Some(("neg_", neg_in_place, Values::WithSpecials, None)),
        "relu_" => Some(("relu_", relu_in_place, Values::WithSpecials, None)),
        "exp_" => Some(("exp_", exp_in_place, Values::WithSpecials, None)),
        "fill_" => Some(("fill_", fill_in_place, Values::WithSpecials, None)),
        "zero_" => Some(("zero_", zero_in_place, Values::WithSpecials, None)),
        "sum" => Some((
            "sum",
            ops::try_sum,
            Values::Finite,
            Some(Rc::new(sum_scale)),
        )),
        "mean" => Some((
            "mean",
            ops::try_mean,
            Values::Finite,
            Some(Rc::new(mean_scale)),
        )),
        "log" => Some(("log", ops::try_log, Values::WithSpecials, Some(ones()))),
        "tanh" => Some(("tanh", ops::try_tanh, Values::WithSpecials, None)),
        "sigmoid" => Some(("sigmoid", ops::try_sigmoid, Values::WithSpecials, None)),
        "sqrt" => Some(("sqrt", ops::try_sqrt, Values::WithSpecials, None)),
        _ => None,
    };
    if let Some((name, f, values, scale)) = unary {
        return Some(unary_cases(name, f, values, scale, plan));
    }
    Some(match op {
        "matmul" => matmul_cases(plan),
        "full" => full_cases(plan),
        "to_dtype" => to_dtype_cases(),
        "to" => to_cases(plan),
        _ => match super::nn_cases::nn_cases(op, plan) {
            Some(cases) => cases,
            None => match super::join_cases::join_cases(op, plan) {
                Some(cases) => cases,
                None => match super::keyword_cases::keyword_cases(op, plan) {
                    Some(cases) => cases,
                    None => super::view_cases::view_cases(op)?,
                },
            },
        },
    })
}

fn div_trunc(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    ops::try_div_rounded(x, y, ops::Rounding::Trunc)
}

fn div_floor(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    ops::try_div_rounded(x, y, ops::Rounding::Floor)
}

// The in-place ops as cases: the first input is the destination (made afresh for each side, so
// the oracle and the device each write their own), and the result is that destination after the
// write, read through its own layout. Broadcasts that would grow it, dtypes it cannot hold and
// expanded destinations are refused on both sides alike.

macro_rules! in_place_binary {
    ($($name:ident => $op:path),* $(,)?) => {$(
        fn $name(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            let mut x = x.clone();
            $op(&mut x, y)?;
            Ok(x)
        }
    )*};
}

in_place_binary! {
    add_in_place => ops::try_add_,
    sub_in_place => ops::try_sub_,
    mul_in_place => ops::try_mul_,
    div_in_place => ops::try_div_,
    copy_in_place => ops::try_copy_,
}

macro_rules! in_place_unary {
    ($($name:ident => |$x:ident| $call:expr),* $(,)?) => {$(
        fn $name(x: &Tensor) -> Result<Tensor> {
            let mut $x = x.clone();
            $call?;
            Ok($x)
        }
    )*};
}

in_place_unary! {
    neg_in_place => |x| ops::try_neg_(&mut x),
    relu_in_place => |x| ops::try_relu_(&mut x),
    exp_in_place => |x| ops::try_exp_(&mut x),
    // A value that converts differently per dtype: truncated, rounded in 16 bits, `true`.
    fill_in_place => |x| ops::try_fill_(&mut x, 2.75),
    zero_in_place => |x| ops::try_zero_(&mut x),
}

fn unary_cases(
    op: &'static str,
    f: Unary,
    values: Values,
    scale: Option<Scale>,
    plan: &Plan,
) -> Vec<Case> {
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for input in plan.inputs(dtype, values, 1) {
            let mut case = Case::new(op, vec![input], Box::new(move |xs, _| f(&xs[0])));
            case.scale = scale.clone();
            cases.push(case);
        }
    }
    cases
}

pub(crate) fn binary_cases(op: &'static str, f: Binary, plan: &Plan) -> Vec<Case> {
    let call = move || -> Call { Box::new(move |xs, _| f(&xs[0], &xs[1])) };
    let specials = Values::WithSpecials;
    let wide = plan.wide();
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        let input = |shape: &[usize], layout: Layout, seed| {
            Input::new(dtype, shape, layout, specials, seed)
        };
        // Both operands of each shape and layout a one-operand op gets.
        for x in plan.inputs(dtype, specials, 1) {
            let y = Input {
                seed: 2,
                ..x.clone()
            };
            cases.push(Case::new(op, vec![x, y], call()));
        }
        // Operands of one shape and different layouts.
        let pairs = [
            (
                input(&[3, 5], Layout::Transposed, 1),
                input(&[3, 5], Layout::Contiguous, 2),
            ),
            (
                input(&[17], Layout::Contiguous, 1),
                input(&[17], Layout::Strided, 2),
            ),
            (
                input(&[3, 5], Layout::Expanded(vec![1, 5]), 1),
                input(&[3, 5], Layout::Contiguous, 2),
            ),
        ];
        // Broadcasting (NumPy's rules), both ways round, empty included.
        let broadcasts: [(&[usize], &[usize]); 7] = [
            (&[3, 1], &[1, 5]),
            (&[3, 5], &[5]),
            (&[], &[3, 5]),
            (&[wide + 1], &[]),
            (&[2, 1, 4], &[3, 1]),
            (&[0, 5], &[1, 5]),
            (&[64, 1], &[1, wide + 1]),
        ];
        let broadcasts = broadcasts.into_iter().map(|(a, b)| {
            (
                input(a, Layout::Contiguous, 1),
                input(b, Layout::Contiguous, 2),
            )
        });
        for (x, y) in pairs.into_iter().chain(broadcasts) {
            cases.push(Case::new(op, vec![x, y], call()));
        }
    }
    // Promotion: operands of two dtypes, of one shape and broadcast.
    for (a, b) in MIXED {
        for (sa, sb) in [(&[7][..], &[7][..]), (&[3, 1], &[1, 5])] {
            let (x, y) = (
                Input::new(a, sa, Layout::Contiguous, specials, 1),
                Input::new(b, sb, Layout::Contiguous, specials, 2),
            );
            cases.push(Case::new(op, vec![x, y], call()));
        }
    }
    cases
}

fn matmul_cases(plan: &Plan) -> Vec<Case> {
    let wide = plan.wide();
    let finite = Values::Finite;
    let mut cases = Vec::new();
    let mut push = |(x, y): (Input, Input)| {
        let call: Call = Box::new(|xs, _| ops::try_matmul(&xs[0], &xs[1]));
        cases.push(Case::new("matmul", vec![x, y], call).scale(Rc::new(matmul_scale)));
    };
    for dtype in DType::ALL {
        let operands = |(m, k, n): (usize, usize, usize), lx: Layout, ly: Layout| {
            (
                Input::new(dtype, &[m, k], lx, finite, 1),
                Input::new(dtype, &[k, n], ly, finite, 2),
            )
        };
        // Empty results, empty inner dimension, odd sizes, the widest lane count ± 1, large.
        let sizes = [
            (1, 1, 1),
            (0, 3, 4),
            (3, 0, 4),
            (3, 4, 0),
            (3, 5, 7),
            (wide + 1, wide - 1, wide),
            (2, 33, 3),
            (33, 257, 65),
        ];
        for size in sizes {
            push(operands(size, Layout::Contiguous, Layout::Contiguous));
        }
        let layouts = [
            (Layout::Transposed, Layout::Contiguous),
            (Layout::Contiguous, Layout::Transposed),
            (Layout::Transposed, Layout::Transposed),
            (Layout::Strided, Layout::Offset),
        ];
        for (lx, ly) in layouts {
            push(operands((3, 5, 7), lx.clone(), ly.clone()));
            push(operands((wide + 1, wide - 1, wide), lx, ly));
        }
    }
    for (a, b) in MIXED {
        push((
            Input::new(a, &[3, 5], Layout::Contiguous, finite, 1),
            Input::new(b, &[5, 7], Layout::Contiguous, finite, 2),
        ));
    }
    for (x, y) in batched_matmul_operands() {
        push((x, y));
    }
    cases
}

/// `matmul`'s 1-D and batched operands (PyTorch's `matmul` shapes): vectors on either side,
/// batches of equal, broadcast (extent 1, missing, stride 0) and transposed matrices.
fn batched_matmul_operands() -> Vec<(Input, Input)> {
    let finite = Values::Finite;
    let mut operands = Vec::new();
    for dtype in [DType::F32, DType::F64, DType::I64, DType::F16] {
        let shapes: [(&[usize], &[usize]); 8] = [
            (&[5], &[5]),
            (&[3, 5], &[5]),
            (&[5], &[5, 7]),
            (&[2, 3, 5], &[2, 5, 7]),
            (&[2, 1, 3, 5], &[4, 5, 7]),
            (&[5], &[2, 5, 7]),
            (&[2, 3, 5], &[5]),
            (&[0, 3, 5], &[5, 7]),
        ];
        for (xs, ys) in shapes {
            operands.push((
                Input::new(dtype, xs, Layout::Contiguous, finite, 1),
                Input::new(dtype, ys, Layout::Contiguous, finite, 2),
            ));
        }
        operands.push((
            Input::new(dtype, &[2, 3, 5], Layout::Transposed, finite, 1),
            Input::new(
                dtype,
                &[2, 5, 7],
                Layout::Expanded(vec![1, 5, 7]),
                finite,
                2,
            ),
        ));
    }
    operands
}

fn full_cases(plan: &Plan) -> Vec<Case> {
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for shape in plan.edge_shapes() {
            // A value each dtype converts differently (integers truncate, `bool` is `true`),
            // and a negative one (which `u8` saturates to 0).
            for value in [2.5, -1.5] {
                let note = format!("full({shape:?}, {value}, {dtype})");
                let shape = shape.clone();
                let call: Call =
                    Box::new(move |_, device| ops::try_full(&shape, value, dtype, device));
                cases.push(Case::new("full", vec![], call).note(note));
            }
        }
    }
    cases
}

fn to_dtype_cases() -> Vec<Case> {
    let specials = Values::WithSpecials;
    let mut cases = Vec::new();
    for from in DType::ALL {
        for to in DType::ALL {
            let inputs = [
                Input::new(from, &[17], Layout::Contiguous, specials, 1),
                Input::new(from, &[3, 5], Layout::Transposed, specials, 1),
                Input::new(from, &[0], Layout::Contiguous, specials, 1),
            ];
            for input in inputs {
                let call: Call = Box::new(move |xs, _| ops::try_to_dtype(&xs[0], to));
                cases.push(Case::new("to_dtype", vec![input], call).note(format!("→ {to}")));
            }
        }
    }
    cases
}

fn to_cases(plan: &Plan) -> Vec<Case> {
    let mut cases = Vec::new();
    for dtype in DType::ALL {
        for input in plan.inputs(dtype, Values::WithSpecials, 1) {
            let call: Call = Box::new(|xs, device| ops::try_to(&xs[0], device));
            let mut case = Case::new("to", vec![input], call).note("from the CPU");
            case.inputs_on_cpu = true;
            cases.push(case);
        }
    }
    cases
}

/// A scale of 1 for every element of the result: with [`Tolerance::Accumulated`], `epsilon` is
/// then an absolute error (WGSL states `log`'s accuracy near 1 so).
///
/// [`Tolerance::Accumulated`]: super::Tolerance::Accumulated
pub(crate) fn ones() -> Scale {
    Rc::new(|xs| Ok(vec![1.0; xs.first().map_or(0, Tensor::numel)]))
}

/// `n · Σ|xᵢ|`: the error scale of a sum of `n` terms.
fn sum_scale(xs: &[Tensor]) -> Result<Vec<f64>> {
    let values = xs[0].try_to_f64_vec()?;
    let total: f64 = values.iter().map(|v| v.abs()).sum();
    Ok(vec![values.len() as f64 * total])
}

/// `Σ|xᵢ|`: a sum's error scale divided by `n`.
fn mean_scale(xs: &[Tensor]) -> Result<Vec<f64>> {
    Ok(vec![xs[0].try_to_f64_vec()?.iter().map(|v| v.abs()).sum()])
}

/// `k · Σₚ|aᵢₚ·bₚⱼ|` for each element `(i, j)` of `a · b` (of each matrix of a batch): `k`
/// times the product of the magnitudes, computed in `f64` on the CPU.
fn matmul_scale(xs: &[Tensor]) -> Result<Vec<f64>> {
    let magnitudes = |t: &Tensor| {
        let values: Vec<f64> = t.try_to_f64_vec()?.iter().map(|v| v.abs()).collect();
        Tensor::from_vec(values, t.shape())
    };
    let k = xs[0].shape().last().copied().unwrap_or(0) as f64;
    let dot = ops::try_matmul(&magnitudes(&xs[0])?, &magnitudes(&xs[1])?)?;
    Ok(dot.try_to_f64_vec()?.iter().map(|d| k * d).collect())
}
