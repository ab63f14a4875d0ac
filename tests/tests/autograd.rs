//! Autograd as a layer: gradients of the standard ops (known values, broadcasting, promotion,
//! accumulation), `no_grad`, `inference_mode`, saved-tensor versions, in-place refusals, ops
//! without a derivative (error, opt-in warning), and `gradcheck` of every standard op that has
//! a derivative, on the CPU in `f64` (naive kernels) and `f32` (SIMD kernels where the CPU has
//! them).

use switchyard::autograd::{
    self, GradcheckError, SavedTensor, Tolerance, gradcheck, gradcheck_with,
};
use switchyard::ops::{self, try_add_};
use switchyard::{
    AliasKey, DType, DTypeColumn, DTypeSet, Device, DispatchError, DispatchKey, DispatchKeySet,
    KernelKey, SlotOrigin, Tensor, UserDType, kernel, op,
};
use switchyard_backends as _; // links the CPU kernels

/// A float format a library holds in `f32` words: autograd has no derivatives for it.
const TF32: UserDType = UserDType::PrivateUse1;
switchyard::declare_dtype!(TF32, "tf32", bytes = 4, kind = Float);

fn f32s(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec::<f32>(values.to_vec(), shape).unwrap()
}

fn f64s(values: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_vec::<f64>(values.to_vec(), shape).unwrap()
}

fn leaf(mut x: Tensor) -> Tensor {
    x.requires_grad_(true);
    x
}

fn grad_of(x: &Tensor) -> Vec<f64> {
    x.grad().expect("a gradient").try_to_f64_vec().unwrap()
}

#[test]
fn known_gradients_of_elementwise_ops_reductions_and_matmul() {
    let x = leaf(f32s(&[1.0, 2.0, 3.0], &[3]));
    let y = leaf(f32s(&[4.0, 5.0, 6.0], &[3]));
    // L = Σ (x·y + x/y − exp(x)·0 ) … built from several ops
    let loss = ops::sum(&(&(&x * &y) + &(&x / &y)));
    loss.backward();
    let gx: Vec<f64> = [4.0f64, 5.0, 6.0].iter().map(|y| y + 1.0 / y).collect();
    let gy: Vec<f64> = [(1.0f64, 4.0f64), (2.0, 5.0), (3.0, 6.0)]
        .iter()
        .map(|(x, y)| x - x / (y * y))
        .collect();
    for (a, b) in grad_of(&x).iter().zip(&gx) {
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
    }
    for (a, b) in grad_of(&y).iter().zip(&gy) {
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
    }

    // matmul: L = Σ (A·B), dL/dA = 1·Bᵀ, dL/dB = Aᵀ·1
    let a = leaf(f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]));
    let b = leaf(f32s(&[1.0, 0.5, -1.0, 2.0, 0.0, 1.0], &[3, 2]));
    ops::sum(&ops::matmul(&a, &b)).backward();
    assert_eq!(grad_of(&a), [1.5, 1.0, 1.0, 1.5, 1.0, 1.0]);
    assert_eq!(grad_of(&b), [5.0, 5.0, 7.0, 7.0, 9.0, 9.0]);

    // mean and relu: d mean(relu(x)) / dx = [x > 0] / n
    let x = leaf(f32s(&[-1.0, 2.0, 0.0, 3.0], &[4]));
    ops::mean(&ops::relu(&x)).backward();
    assert_eq!(grad_of(&x), [0.0, 0.25, 0.0, 0.25]);
}

#[test]
fn broadcast_and_promoted_operands_get_gradients_of_their_own_shape_and_dtype() {
    let x = leaf(f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]));
    let bias = leaf(f32s(&[10.0, 20.0, 30.0], &[3]));
    let scale = leaf(f64s(&[2.0], &[1, 1]));
    let out = ops::mul(&ops::add(&x, &bias), &scale); // f64 [2, 3]
    assert_eq!(out.dtype(), DType::F64);
    ops::sum(&out).backward();
    assert_eq!(x.grad().unwrap().shape(), [2, 3]);
    assert_eq!(x.grad().unwrap().dtype(), DType::F32);
    assert_eq!(grad_of(&x), [2.0; 6]);
    assert_eq!(bias.grad().unwrap().shape(), [3]);
    assert_eq!(grad_of(&bias), [4.0, 4.0, 4.0]);
    assert_eq!(scale.grad().unwrap().shape(), [1, 1]);
    // Σ (x + bias) = 21 + 2·60
    assert_eq!(grad_of(&scale), [141.0]);
}

#[test]
fn gradients_accumulate_across_passes_and_through_shared_inputs_until_zero_grad() {
    let x = leaf(f32s(&[3.0], &[]));
    // x used twice: d(x·x + x)/dx = 2x + 1 = 7
    let y = &(&x * &x) + &x;
    y.backward();
    assert_eq!(grad_of(&x), [7.0]);
    y.backward(); // the graph is kept: a second pass adds again
    assert_eq!(grad_of(&x), [14.0]);
    x.zero_grad();
    assert!(x.grad().is_none());
    (&x * &x).backward();
    assert_eq!(grad_of(&x), [6.0]);
}

/// Backward passes on several threads that share a leaf each add their whole gradient: none is
/// lost to another thread's read-add-write of the same `.grad()`.
#[test]
#[cfg_attr(target_family = "wasm", ignore = "wasm32 starts no threads")]
fn concurrent_backward_passes_lose_no_gradient() {
    let x = leaf(f32s(&[1.0, 2.0], &[2]));
    let (threads, passes) = (4, 200);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                for _ in 0..passes {
                    ops::sum(&(&x * &f32s(&[2.0, 3.0], &[2]))).backward();
                }
            });
        }
    });
    let n = f64::from(threads * passes);
    assert_eq!(grad_of(&x), [2.0 * n, 3.0 * n]);
}

/// A long chain of recorded ops (a loss summed over many steps, an unrolled loop) is walked and
/// freed without recursion: dropping it on a small thread stack must not overflow it.
#[test]
#[cfg_attr(target_family = "wasm", ignore = "wasm32 starts no threads")]
fn a_long_graph_runs_backward_and_drops_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let x = leaf(f32s(&[1.0], &[]));
            let one = f32s(&[1.0], &[]);
            let mut y = &x * &one;
            for _ in 0..50_000 {
                y = &y + &x;
            }
            y.backward();
            assert_eq!(grad_of(&x), [50_001.0]);
            drop(y); // the whole chain, from its newest node
            x.grad().is_some()
        })
        .unwrap();
    assert!(handle.join().expect("no stack overflow"));
}

#[test]
fn results_record_their_op_and_leaves_do_not() {
    let x = leaf(f32s(&[1.0, 2.0], &[2]));
    let plain = f32s(&[1.0, 2.0], &[2]);
    assert!(x.requires_grad() && x.is_leaf() && x.grad_fn().is_none());
    let y = ops::exp(&x);
    assert_eq!(y.grad_fn(), Some("exp"));
    assert!(y.requires_grad() && !y.is_leaf());
    assert!(y.keys().contains(DispatchKeySet::AUTOGRAD_CPU));
    let z = ops::exp(&plain);
    assert!(!z.requires_grad() && z.grad_fn().is_none());
    assert!(!z.keys().intersects(DispatchKeySet::AUTOGRAD));
    // A tensor that does not require grad beside one that does: no gradient slot for it.
    let w = &plain * &x;
    w.backward_with(&f32s(&[1.0, 1.0], &[2]));
    assert!(plain.grad().is_none());
    assert_eq!(grad_of(&x), [1.0, 2.0]);
}

#[test]
fn detach_shares_storage_without_history() {
    let x = leaf(f32s(&[1.0, 2.0], &[2]));
    let y = ops::exp(&x);
    let d = y.detach();
    assert!(!d.requires_grad() && d.is_leaf());
    assert!(d.same_storage(&y));
    assert_eq!(d.version(), y.version());
    assert!(!(&d * &d).requires_grad());
}

#[test]
fn requires_grad_is_refused_for_non_float_tensors_and_non_leaves() {
    let mut ints = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
    let e = ints.try_requires_grad_(true).unwrap_err().to_string();
    assert!(e.contains("requires_grad_") && e.contains("i64"), "{e}");
    assert!(!ints.requires_grad());
    let x = leaf(f32s(&[1.0], &[1]));
    let mut y = ops::exp(&x);
    let e = y.try_requires_grad_(false).unwrap_err().to_string();
    assert!(e.contains("exp") && e.contains("detach"), "{e}");
    let mut x2 = x.clone();
    x2.requires_grad_(false);
    assert!(
        !x2.requires_grad() && x.requires_grad(),
        "only this handle changes"
    );
}

/// A tensor seen as a user dtype cannot start recording, even where its storage is `f32`: the
/// derivatives are the built-in dtypes' (as `as_user_dtype` refuses a tensor that records).
#[test]
fn requires_grad_is_refused_for_user_dtypes() {
    let mut x = f32s(&[1.0, 2.0], &[2]).as_user_dtype(TF32).unwrap();
    let e = x.try_requires_grad_(true).unwrap_err().to_string();
    assert!(
        e.contains("requires_grad_") && e.contains("tf32") && e.contains("as_storage_dtype"),
        "{e}"
    );
    assert!(!x.requires_grad(), "nothing changed");
    let mut storage = x.as_storage_dtype();
    storage.requires_grad_(true);
    assert!(
        storage.requires_grad(),
        "its f32 storage view is a float tensor"
    );
}

#[test]
fn backward_errors_name_the_problem_and_change_no_gradient() {
    let plain = f32s(&[1.0], &[1]);
    let e = plain.try_backward().unwrap_err().to_string();
    assert!(e.contains("does not require grad"), "{e}");
    let x = leaf(f32s(&[1.0, 2.0], &[2]));
    let y = ops::exp(&x);
    let e = y.try_backward().unwrap_err().to_string();
    assert!(
        e.contains("one-element") && e.contains("backward_with"),
        "{e}"
    );
    let e = y
        .try_backward_with(&f32s(&[1.0, 1.0, 1.0], &[3]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("[3]") && e.contains("[2]"), "{e}");
    assert!(x.grad().is_none(), "a failed pass accumulates nothing");
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "wasm32 aborts on panic: nothing to catch"
)]
fn no_grad_records_nothing_nests_and_restores() {
    let x = leaf(f32s(&[1.0, 2.0], &[2]));
    assert!(autograd::is_grad_enabled());
    {
        let _outer = autograd::no_grad();
        assert!(!autograd::is_grad_enabled());
        {
            let _inner = autograd::no_grad();
            assert!(!ops::exp(&x).requires_grad());
        }
        assert!(!autograd::is_grad_enabled(), "the outer guard still holds");
        assert!(!ops::exp(&x).requires_grad());
    }
    assert!(autograd::is_grad_enabled());
    assert!(ops::exp(&x).requires_grad());
    // Restored exactly even when a panic drops the guard.
    let result = std::panic::catch_unwind(|| {
        let _g = autograd::no_grad();
        panic!("inside no_grad");
    });
    assert!(result.is_err());
    assert!(autograd::is_grad_enabled());
    assert_eq!(switchyard::local_keys(), switchyard::LocalKeys::default());
}

#[test]
fn inference_mode_makes_tensors_without_version_counter_that_cannot_be_saved() {
    let w = leaf(f32s(&[1.0, 2.0], &[2]));
    let (mut x, made_inside) = {
        let _inference = autograd::inference_mode();
        assert!(autograd::is_inference_mode_enabled() && !autograd::is_grad_enabled());
        let x = f32s(&[3.0, 4.0], &[2]);
        let y = &x * &w;
        assert!(!y.requires_grad(), "no autograd inside inference mode");
        (x, y)
    };
    assert!(!autograd::is_inference_mode_enabled() && autograd::is_grad_enabled());
    assert!(x.is_inference() && made_inside.is_inference() && !w.is_inference());
    // Writes count no version.
    try_add_(&mut x, &f32s(&[1.0, 1.0], &[2])).unwrap();
    assert_eq!(x.version(), 0);
    assert_eq!(x.to_vec::<f32>(), [4.0, 5.0]);
    // Saving it for backward is refused, naming the op.
    let e = ops::try_mul(&x, &w).unwrap_err().to_string();
    assert!(e.contains("mul") && e.contains("inference"), "{e}");
    // Nesting and restoring.
    {
        let _a = autograd::inference_mode();
        let _b = autograd::inference_mode();
    }
    assert!(!autograd::is_inference_mode_enabled());
    assert!(!f32s(&[1.0], &[1]).is_inference());
}

#[test]
fn a_saved_tensor_modified_in_place_fails_backward_naming_op_and_versions() {
    let mut w = leaf(f32s(&[1.0, 2.0], &[2]));
    let x = leaf(f32s(&[3.0, 4.0], &[2]));
    let loss = ops::sum(&(&x * &w));
    {
        let _no_grad = autograd::no_grad();
        try_add_(&mut w, &f32s(&[1.0, 1.0], &[2])).unwrap();
    }
    let e = loss.try_backward().unwrap_err().to_string();
    assert!(
        e.contains("mul") && e.contains("version 0") && e.contains("version 1"),
        "{e}"
    );
    assert!(x.grad().is_none() && w.grad().is_none());
}

#[test]
fn in_place_writes_involving_grad_are_refused_while_recording_and_run_under_no_grad() {
    let mut w = leaf(f32s(&[1.0, 2.0], &[2]));
    let e = try_add_(&mut w, &f32s(&[1.0, 1.0], &[2]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("add_") && e.contains("requires grad") && e.contains("no_grad"),
        "{e}"
    );
    assert_eq!(w.to_vec::<f32>(), [1.0, 2.0]);
    let mut plain = f32s(&[1.0, 2.0], &[2]);
    let e = try_add_(&mut plain, &w).unwrap_err().to_string();
    assert!(e.contains("requires grad"), "{e}");
    assert_eq!(plain.to_vec::<f32>(), [1.0, 2.0]);
    {
        let _no_grad = autograd::no_grad();
        try_add_(&mut w, &f32s(&[1.0, 1.0], &[2])).unwrap();
    }
    assert_eq!(w.to_vec::<f32>(), [2.0, 3.0]);
    assert!(w.requires_grad() && w.is_leaf());
}

// An op with a CPU kernel and no derivative.
#[op(name = "autograd_test::square_no_derivative")]
pub fn square_no_derivative(x: &Tensor) -> Tensor;

#[kernel(op = "square_no_derivative", key = CpuNaive)]
fn square_no_derivative_cpu(x: &Tensor) -> switchyard::Result<Tensor> {
    ops::try_mul(x, x)
}

#[test]
fn an_op_without_a_derivative_is_an_error_by_default_and_a_warning_when_opted_in() {
    let x = leaf(f32s(&[1.0, 2.0], &[2]));
    let e = try_square_no_derivative(&x).unwrap_err().to_string();
    assert!(
        e.contains("autograd_test::square_no_derivative")
            && e.contains("AutogradCpu")
            && e.contains("has no derivative")
            && e.contains("key = Autograd)]")
            && e.contains("warn_not_implemented"),
        "{e}"
    );
    // Without grad the op runs.
    let plain = f32s(&[1.0, 2.0], &[2]);
    assert_eq!(square_no_derivative(&plain).to_vec::<f32>(), [1.0, 4.0]);
    {
        let _warn = autograd::warn_not_implemented().unwrap();
        let y = try_square_no_derivative(&x).unwrap();
        assert_eq!(y.to_vec::<f32>(), [1.0, 4.0]);
        assert!(
            !y.requires_grad(),
            "no gradient flows through it (and it said so)"
        );
    }
    assert!(
        try_square_no_derivative(&x).is_err(),
        "the opt-in ends with its guard"
    );
}

// An op whose derivative panics (a bug in a downstream derivative).
#[op(name = "autograd_test::fragile")]
pub fn fragile(x: &Tensor) -> Tensor;

#[kernel(op = "fragile", key = CpuNaive)]
fn fragile_cpu(x: &Tensor) -> switchyard::Result<Tensor> {
    ops::try_mul(x, x)
}

#[kernel(op = "fragile", key = Autograd)]
fn fragile_autograd(keys: DispatchKeySet, x: &Tensor) -> switchyard::Result<Tensor> {
    let out = autograd::run_below(|| fragile::redispatch(keys.below(AliasKey::Autograd), x))?;
    Ok(autograd::record("fragile", &[x], out, |_| {
        panic!("a bug in fragile's derivative")
    }))
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "wasm32 aborts on panic: nothing to catch"
)]
fn a_panicking_derivative_is_an_error_of_try_backward_and_changes_no_gradient() {
    let x = leaf(f32s(&[1.0, 2.0], &[2]));
    ops::sum(&(&x * &x)).backward();
    let before = grad_of(&x);
    let loss = ops::sum(&(&fragile(&x) + &(&x * &x)));
    let e = loss.try_backward().unwrap_err().to_string();
    assert!(
        e.contains("fragile")
            && e.contains("panicked")
            && e.contains("a bug in fragile's derivative"),
        "{e}"
    );
    assert_eq!(grad_of(&x), before, "a failed pass adds nothing");
    assert!(
        autograd::is_grad_enabled(),
        "the pass's no_grad guard is gone"
    );
}

// An op with a deliberately wrong derivative: gradcheck must catch it.
#[op(name = "autograd_test::cube")]
pub fn cube(x: &Tensor) -> Tensor;

#[kernel(op = "cube", key = CpuNaive)]
fn cube_cpu(x: &Tensor) -> switchyard::Result<Tensor> {
    ops::try_mul(&ops::try_mul(x, x)?, x)
}

#[kernel(op = "cube", key = Autograd)]
fn cube_wrong_derivative(keys: DispatchKeySet, x: &Tensor) -> switchyard::Result<Tensor> {
    let out = autograd::run_below(|| cube::redispatch(keys.below(AliasKey::Autograd), x))?;
    let saved = SavedTensor::new("cube", x)?;
    Ok(autograd::record("cube", &[x], out, move |g| {
        let x = saved.get()?;
        // Wrong on purpose: 2x² where 3x² is right.
        let two = ops::try_full(&[], 2.0, x.dtype(), x.device())?;
        let slope = ops::try_mul(&two, &ops::try_mul(x, x)?)?;
        Ok(vec![Some(ops::try_mul(g, &slope)?)])
    }))
}

#[test]
fn gradcheck_catches_a_wrong_derivative_and_passes_a_right_one() {
    let x = leaf(f64s(&[0.5, -1.0, 2.0], &[3]));
    match gradcheck(|t| try_cube(&t[0]), std::slice::from_ref(&x)) {
        Err(GradcheckError::Mismatch { input: 0, .. }) => {}
        other => panic!("expected a mismatch, got {other:?}"),
    }
    gradcheck(
        |t| ops::try_mul(&ops::try_mul(&t[0], &t[0])?, &t[0]),
        std::slice::from_ref(&x),
    )
    .unwrap();
    assert!(
        x.grad().is_none(),
        "gradcheck leaves the inputs' gradients alone"
    );
    let plain = f64s(&[1.0], &[1]);
    assert_eq!(
        gradcheck(|t| Ok(t[0].clone()), &[plain]),
        Err(GradcheckError::NothingToCheck)
    );
}

/// Inputs of `shape` with values away from the ops' kinks (relu's 0), of `dtype`, requiring grad.
fn input(shape: &[usize], seed: u64, dtype: DType) -> Tensor {
    let n: usize = shape.iter().product();
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let values: Vec<f64> = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = (state % 2000) as f64 / 1000.0 - 1.0; // [-1, 1)
            if v.abs() < 0.1 { v + 0.3 } else { v }
        })
        .collect();
    leaf(ops::to_dtype(&f64s(&values, shape), dtype))
}

type Case = (
    &'static str,
    fn(&[Tensor]) -> Result<Tensor, DispatchError>,
    Vec<Vec<usize>>,
);

/// One gradcheck case per standard op with a derivative: the op, and its inputs' shapes.
fn cases() -> Vec<Case> {
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
        ("neg", |t| ops::try_neg(&t[0]), vec![vec![4]]),
        ("exp", |t| ops::try_exp(&t[0]), vec![vec![2, 2]]),
        ("relu", |t| ops::try_relu(&t[0]), vec![vec![5]]),
        (
            // The gradient with respect to `grad`; in `out` the op is a step:
            // `relu_backward_gives_out_a_zero_gradient_or_none`.
            "relu_backward",
            |t| {
                let out = Tensor::from_vec(vec![-1.0, 0.0, 0.5, 2.0, -0.0, 3.0], &[2, 3])?;
                ops::try_relu_backward(&t[0], &ops::try_to_dtype(&out, t[0].dtype())?)
            },
            vec![vec![2, 3]],
        ),
        ("sum", |t| ops::try_sum(&t[0]), vec![vec![2, 3]]),
        ("mean", |t| ops::try_mean(&t[0]), vec![vec![3, 2]]),
        (
            "matmul",
            |t| ops::try_matmul(&t[0], &t[1]),
            vec![vec![2, 3], vec![3, 4]],
        ),
        // f32 → f64 in the f32 run (the gradient comes back as f32); the same tensor in f64.
        (
            "to_dtype",
            |t| ops::try_to_dtype(&t[0], DType::F64),
            vec![vec![3]],
        ),
        (
            "contiguous",
            |t| ops::try_contiguous(&ops::try_transpose(&t[0], 0, 1)?),
            vec![vec![2, 3]],
        ),
        ("to", |t| ops::try_to(&t[0], Device::Cpu), vec![vec![2]]),
        ("view", |t| ops::try_view(&t[0], &[3, -1]), vec![vec![2, 3]]),
        (
            "reshape",
            |t| ops::try_reshape(&ops::try_transpose(&t[0], 0, 1)?, &[6]),
            vec![vec![2, 3]],
        ),
        (
            "transpose",
            |t| ops::try_mul(&ops::try_transpose(&t[0], 0, 1)?, &t[1]),
            vec![vec![2, 3], vec![3, 2]],
        ),
        (
            "permute",
            |t| ops::try_mul(&ops::try_permute(&t[0], &[2, 0, 1])?, &t[1]),
            vec![vec![2, 3, 2], vec![2, 2, 3]],
        ),
        (
            "narrow",
            |t| ops::try_narrow(&t[0], 1, 1, 2),
            vec![vec![2, 4]],
        ),
        (
            "slice",
            |t| ops::try_slice(&t[0], 0, 1, 5, 2),
            vec![vec![5, 2]],
        ),
        ("select", |t| ops::try_select(&t[0], 1, 2), vec![vec![2, 3]]),
        (
            "expand",
            |t| ops::try_mul(&ops::try_expand(&t[0], &[3, 2])?, &t[1]),
            vec![vec![1, 2], vec![3, 2]],
        ),
        (
            "squeeze",
            |t| ops::try_squeeze(&t[0], Some(1)),
            vec![vec![3, 1, 2]],
        ),
        ("unsqueeze", |t| ops::try_unsqueeze(&t[0], 0), vec![vec![3]]),
        (
            "squeeze_dims",
            |t| ops::try_squeeze_dims(&t[0], &[0, -1]),
            vec![vec![1, 3, 1]],
        ),
        // Three inputs of different extents along the joined dim, one of them empty.
        (
            "cat",
            |t| ops::try_cat(&[t[0].clone(), t[1].clone(), t[2].clone()], -1),
            vec![vec![2, 3], vec![2, 0], vec![2, 1]],
        ),
        (
            "stack",
            |t| ops::try_stack(&[t[0].clone(), t[1].clone()], 1),
            vec![vec![2, 3], vec![2, 3]],
        ),
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
        ("tanh", |t| ops::try_tanh(&t[0]), vec![vec![2, 3]]),
        ("sigmoid", |t| ops::try_sigmoid(&t[0]), vec![vec![2, 3]]),
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
            "where",
            |t| {
                let zero = ops::try_full(&[], 0.0, t[0].dtype(), t[0].device())?;
                ops::try_where_cond(&ops::try_gt(&t[0], &zero)?, &t[0], &t[1])
            },
            vec![vec![2, 3], vec![3]],
        ),
        // Composites: differentiated through their decomposition (no derivative of their own).
        ("softmax", |t| ops::try_softmax(&t[0], 1), vec![vec![3, 4]]),
        (
            "sum_with",
            |t| ops::try_sum_with(&t[0], &ops::Reduce::all().keepdim(true)),
            vec![vec![2, 3]],
        ),
        (
            "mean_with",
            |t| ops::try_mean_with(&t[0], &ops::Reduce::along(&[-1]).dtype(DType::F64)),
            vec![vec![2, 3]],
        ),
        (
            "max_dim_with_indices",
            |t| Ok(ops::try_max_dim_with_indices(&t[0], -1, true)?.0),
            vec![vec![3, 4]],
        ),
        (
            "softmax_in",
            |t| ops::try_softmax_in(&t[0], -1, DType::F64),
            vec![vec![3, 4]],
        ),
        (
            "log_softmax_in",
            |t| ops::try_log_softmax_in(&t[0], 0, DType::F64),
            vec![vec![3, 2]],
        ),
        (
            "log_softmax",
            |t| ops::try_log_softmax(&t[0], 0),
            vec![vec![3, 2]],
        ),
        // Divisors in [2, 4] and dividends at least 0.1 from 0: quotients in ±[0.025, 0.5],
        // where a rounded quotient is constant (0 or -1) and its gradient zero.
        (
            "div_rounded",
            |t| {
                let y = ops::try_add_scalar(&t[1], 3.0)?;
                ops::try_div_rounded(&t[0], &y, ops::Rounding::Floor)
            },
            vec![vec![3, 4], vec![4]],
        ),
        (
            "div_rounded",
            |t| {
                let y = ops::try_add_scalar(&t[1], 3.0)?;
                ops::try_div_rounded(&t[0], &y, ops::Rounding::Trunc)
            },
            vec![vec![3, 4], vec![4]],
        ),
        (
            "cross_entropy",
            |t| {
                let targets = Tensor::from_vec(vec![2i64, 0, 1, 2], &[4])?;
                ops::try_cross_entropy(&t[0], &targets)
            },
            vec![vec![4, 3]],
        ),
    ]
}

fn run_cases(dtype: DType) {
    for (op, f, shapes) in cases() {
        let inputs: Vec<Tensor> = shapes
            .iter()
            .enumerate()
            .map(|(i, s)| input(s, i as u64 + 1, dtype))
            .collect();
        if let Err(e) = gradcheck_with(f, &inputs, Tolerance::for_dtype(dtype)) {
            panic!("gradcheck of `{op}` in {dtype}: {e}");
        }
    }
}

#[test]
fn gradcheck_passes_for_every_standard_op_with_a_derivative_in_f64() {
    run_cases(DType::F64);
}

#[test]
fn gradcheck_passes_for_every_standard_op_with_a_derivative_in_f32() {
    run_cases(DType::F32);
}

/// Standard ops whose autograd kernel records nothing: their results have no gradient (or, for
/// `copy_`, it refuses).
const NO_GRADIENT: [&str; 8] = ["copy_", "argmax", "eq", "ne", "lt", "le", "gt", "ge"];

/// Standard composites whose results have no gradient: an index, a factory's values.
const NO_GRADIENT_COMPOSITES: [&str; 2] = ["argmax_all", "arange_step"];

#[test]
fn ops_without_a_gradient_run_on_tensors_that_require_grad() {
    let x = leaf(f32s(&[1.0, 3.0, 2.0], &[3]));
    let y = f32s(&[2.0, 2.0, 2.0], &[3]);
    assert_eq!(ops::gt(&x, &y).to_vec::<bool>(), [false, true, false]);
    assert_eq!(ops::argmax(&x, 0, false).to_vec::<i64>(), [1]);
    assert!(!ops::gt(&x, &y).requires_grad());
}

#[test]
fn relu_backward_gives_out_a_zero_gradient_or_none() {
    for dtype in [DType::F32, DType::F64] {
        let grad = leaf(ops::to_dtype(&f32s(&[1.0, 2.0, 3.0], &[3]), dtype));
        let out = leaf(ops::to_dtype(&f32s(&[-1.0, 0.0, 4.0], &[3]), dtype));
        let result = ops::relu_backward(&grad, &out);
        assert_eq!(
            ops::to_dtype(&result, DType::F32).to_vec::<f32>(),
            [0.0, 0.0, 3.0]
        );
        ops::sum(&result).backward();
        let g = grad.grad().expect("`grad` gets its gradient");
        assert_eq!(
            ops::to_dtype(&g, DType::F32).to_vec::<f32>(),
            [0.0, 0.0, 1.0],
            "{dtype}"
        );
        // A step in `out`: zeros from the CPU kernel's derivative where one serves the dtype (the
        // SIMD `f32` kernel); where the body is differentiated (`f64`, and `f32` where no SIMD
        // kernel runs, as on wasm32), `le` leaves `out` out of the graph.
        let column = DTypeColumn::of(DTypeSet::of(&[dtype]));
        match ops::relu_backward::handle().slot_in(DispatchKey::CpuSimd, column) {
            Ok(SlotOrigin::Kernel(_)) => assert_eq!(grad_of(&out), [0.0, 0.0, 0.0], "{dtype}"),
            _ => assert!(out.grad().is_none(), "{dtype}: `out` gets none"),
        }
    }
}

#[test]
fn every_standard_derivative_has_a_gradcheck_case() {
    let checked: Vec<&str> = cases().iter().map(|(op, _, _)| *op).collect();
    let with_derivative: Vec<&'static str> = switchyard::ops()
        .into_iter()
        .filter(|op| {
            op.registrations().iter().any(|(key, meta)| {
                *key == KernelKey::Alias(AliasKey::Autograd)
                    && meta.location.crate_name() == "switchyard_tensor"
            })
        })
        .map(|op| op.bare_name())
        .collect();
    assert!(!with_derivative.is_empty());
    for op in &with_derivative {
        assert!(
            checked.contains(op) || NO_GRADIENT.contains(op),
            "`{op}` has a derivative but no gradcheck case"
        );
    }
    // Standard composites are differentiated through their body: each needs a case too, except
    // the in-place ones (`add_`, `fill_`, …), which refuse tensors that require grad.
    let composites: Vec<&'static str> = switchyard::ops()
        .into_iter()
        .filter(|op| op.has_composite() && op.location().crate_name() == "switchyard_tensor")
        .map(|op| op.bare_name())
        .filter(|name| !name.ends_with('_'))
        .collect();
    assert!(composites.contains(&"cross_entropy"), "{composites:?}");
    for op in &composites {
        assert!(
            checked.contains(op) || NO_GRADIENT_COMPOSITES.contains(op),
            "`{op}` is a composite autograd differentiates, but has no gradcheck case"
        );
    }
}
