//! Sizes at the edges: element counts and byte sizes that overflow, allocations the machine cannot
//! serve, empty tensors with huge dimensions, printing, and `Tensor` across `catch_unwind`. Every
//! op runs both with `CpuSimd` (the best SIMD variant this CPU has) and with it excluded (the naive
//! backend). CI runs this file in `--release` too: overflows that wrap silently show only there.
//!
//! No test commits much memory: an allocation that must fail asks for more bytes than a 64-bit
//! process can map (2⁴⁸, above the 47-bit user address space), and the 4 TiB cases run
//! only where the kernel refuses reservations beyond RAM (`vm.overcommit_memory` is not `1`).

use std::panic::{RefUnwindSafe, UnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::time::Duration;
use switchyard::DType;

use switchyard::ops::{
    add, exp, full, matmul, mean, neg, relu, sum, to, try_add, try_div, try_exp, try_full,
    try_matmul, try_mean, try_mul, try_neg, try_relu, try_sub, try_sum, try_to,
};
use switchyard::{
    BackendStorage, Device, DispatchError, DispatchKey, ErrorKind, Result, Stack, Tensor, Value,
    call_boxed,
};
use switchyard_backends as _; // links the CPU kernels

/// 2⁴⁶ floats: 2⁴⁸ bytes (256 TiB), more than any 64-bit process can map, whatever the
/// overcommit policy.
const UNMAPPABLE: usize = 1 << 46;
/// 2⁴⁰ floats: 4 TiB, the size; refused by the allocator unless overcommit is unlimited.
const FOUR_TIB: usize = 1 << 40;

/// Runs `f` once with the best CPU kernels and once with `CpuSimd` excluded (the naive backend).
fn on_both_cpu_backends(mut f: impl FnMut(&str)) {
    f("simd");
    let _naive = switchyard::exclude(DispatchKey::CpuSimd);
    f("naive");
}

/// Runs `f` on another thread and fails if it does not finish within `seconds`: a loop over a
/// huge-but-empty dimension would otherwise hang the test instead of failing it.
#[track_caller]
fn finishes_within<T: Send + 'static>(seconds: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    receiver
        .recv_timeout(Duration::from_secs(seconds))
        .unwrap_or_else(|e| panic!("did not finish within {seconds} s ({e})"))
}

/// The message a plain call panics with (it must panic, not abort).
#[track_caller]
fn panic_message<T>(call: impl FnOnce() -> T + UnwindSafe) -> String {
    let payload = catch_unwind(call)
        .map(|_| ())
        .expect_err("the plain call must panic");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload
            .downcast::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}

/// Whether this machine's kernel refuses a reservation beyond its memory, so that asking for
/// 4 TiB fails at once instead of succeeding and then committing pages until the OOM killer.
fn huge_reservations_fail() -> bool {
    match std::fs::read_to_string("/proc/sys/vm/overcommit_memory") {
        Ok(mode) => mode.trim() != "1",
        Err(_) => false,
    }
}

#[track_caller]
fn check_size_overflow(error: &DispatchError, op: &str, shapes: &[&[usize]]) {
    match error.kind() {
        ErrorKind::SizeOverflow {
            op: actual_op,
            shapes: actual,
            ..
        } => {
            assert_eq!(*actual_op, op, "{error}");
            assert_eq!(actual, shapes, "{error}");
        }
        _ => panic!("expected a size overflow of `{op}`, got: {error}"),
    }
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("op `{op}`: size overflow")),
        "{text}"
    );
    for shape in shapes {
        assert!(text.contains(&format!("{shape:?}")), "{text}");
    }
}

#[track_caller]
fn check_out_of_memory(error: &DispatchError, op: &str, bytes: usize) {
    assert!(
        matches!(error.kind(), ErrorKind::OutOfMemory { op: o, bytes: b } if *o == op && *b == bytes),
        "expected `{op}` out of memory for {bytes} bytes, got: {error}"
    );
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("op `{op}`: out of memory")),
        "{text}"
    );
    assert!(text.contains(&format!("{bytes} bytes")), "{text}");
}

fn empty(shape: &[usize]) -> Tensor {
    Tensor::from_vec::<f32>(Vec::new(), shape).unwrap()
}

// ---- element counts ----

#[test]
fn from_vec_rejects_a_shape_whose_element_count_wraps() {
    // (2⁶² + 1) · 4 wraps to 4 in 64 bits: it must not pass for four values.
    let shape = [(1 << 62) + 1, 4];
    let error = Tensor::from_vec::<f32>(vec![0.0; 4], &shape).unwrap_err();
    check_size_overflow(&error, "Tensor::from_vec", &[&shape]);
    let error = Tensor::from_slice::<f32>(&[0.0; 4], &shape).unwrap_err();
    check_size_overflow(&error, "Tensor::from_slice", &[&shape]);
    // A count that fits `usize` but whose bytes exceed the largest possible allocation.
    let error = Tensor::from_vec::<f32>(Vec::new(), &[usize::MAX / 2]).unwrap_err();
    check_size_overflow(&error, "Tensor::from_vec", &[&[usize::MAX / 2]]);
    // Overflowing the other way round, and in three dimensions.
    for shape in [
        [4, (1 << 62) + 1, 1],
        [1 << 32, 1 << 32, 1],
        [usize::MAX, 2, 1],
    ] {
        let error = Tensor::from_vec::<f32>(vec![0.0; 4], &shape).unwrap_err();
        check_size_overflow(&error, "Tensor::from_vec", &[&shape]);
    }
}

#[test]
fn from_fn_panics_on_an_overflowing_shape_and_try_from_fn_errs() {
    let shape = [usize::MAX, 2];
    let error = Tensor::try_from_fn(&shape, |_| 0.0f32).unwrap_err();
    check_size_overflow(&error, "Tensor::from_fn", &[&shape]);
    assert_eq!(
        panic_message(|| Tensor::from_fn(&shape, |_| 0.0f32)),
        error.to_string()
    );
    let error = Tensor::try_from_fn(&[UNMAPPABLE], |_| 0.0f32).unwrap_err();
    check_out_of_memory(&error, "Tensor::from_fn", UNMAPPABLE * 4);
    assert_eq!(
        panic_message(|| Tensor::from_fn(&[UNMAPPABLE], |_| 0.0f32)),
        error.to_string()
    );
    assert_eq!(
        Tensor::try_from_fn(&[3], |i| i as f32)
            .unwrap()
            .to_vec::<f32>(),
        [0.0, 1.0, 2.0]
    );
}

/// A device tensor's storage, for `from_backend`; counts reads back to the host.
#[derive(Debug, Default)]
struct Remote {
    values: Vec<f32>,
    reads: std::sync::atomic::AtomicUsize,
}

impl BackendStorage for Remote {
    fn len(&self) -> usize {
        self.values.len()
    }
    fn dtype(&self) -> DType {
        DType::F32
    }
    fn read_bytes(&self) -> Result<Vec<u8>> {
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(self.values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }
}

#[test]
fn from_backend_rejects_a_shape_whose_element_count_wraps() {
    let shape = [(1 << 62) + 1, 4];
    let storage = Remote {
        values: vec![0.0; 4],
        ..Remote::default()
    };
    let error = Tensor::from_backend(storage, &shape, Device::PrivateUse1).unwrap_err();
    check_size_overflow(&error, "Tensor::from_backend", &[&shape]);
}

#[test]
fn a_zero_dimension_makes_any_shape_empty() {
    // The count is 0 whatever the other dimensions are, even when their product alone overflows.
    for shape in [
        &[0][..],
        &[FOUR_TIB, 0],
        &[0, usize::MAX],
        &[usize::MAX, 2, 0],
        &[2, 0, usize::MAX, usize::MAX],
    ] {
        let t = empty(shape);
        assert_eq!((t.shape(), t.numel()), (shape, 0));
    }
}

// ---- matmul ----

#[test]
fn matmul_of_huge_empty_operands_is_a_size_overflow_not_a_segfault() {
    // [2³², 0] × [0, 2³²]: both operands are valid and empty, but the result would have 2⁶⁴
    // elements, which wrapped to 0 and let matrixmultiply write past a 0-length buffer.
    let (x, y) = (empty(&[1 << 32, 0]), empty(&[0, 1 << 32]));
    on_both_cpu_backends(|backend| {
        let error = try_matmul(&x, &y).unwrap_err();
        check_size_overflow(&error, "matmul", &[x.shape(), y.shape()]);
        assert_eq!(
            panic_message(|| matmul(&x, &y)),
            error.to_string(),
            "{backend}"
        );
    });
}

#[test]
fn matmul_output_beyond_memory_is_an_error_naming_the_bytes() {
    // 2²³ × 2²³ outputs from two 32 MiB operands: 2⁴⁶ floats.
    let side = 1 << 23;
    let (x, y) = (
        Tensor::from_fn(&[side, 1], |_| 1.0f32),
        Tensor::from_fn(&[1, side], |_| 1.0f32),
    );
    on_both_cpu_backends(|backend| {
        let error = try_matmul(&x, &y).unwrap_err();
        check_out_of_memory(&error, "matmul", side * side * 4);
        assert_eq!(
            panic_message(|| matmul(&x, &y)),
            error.to_string(),
            "{backend}"
        );
    });
    if huge_reservations_fail() {
        // The 4 TiB output.
        let side = 1 << 20;
        let (x, y) = (
            Tensor::from_fn(&[side, 1], |_| 1.0f32),
            Tensor::from_fn(&[1, side], |_| 1.0f32),
        );
        on_both_cpu_backends(|_| {
            let error = try_matmul(&x, &y).unwrap_err();
            check_out_of_memory(&error, "matmul", FOUR_TIB * 4);
        });
    }
}

#[test]
fn matmul_with_huge_empty_dimensions_finishes_at_once() {
    on_both_cpu_backends(|backend| {
        let cases: [(&[usize], &[usize], &[usize]); 4] = [
            // Huge m, empty k and n: an empty [2⁴⁰, 0] result, without 2⁴⁰ loop turns.
            (&[FOUR_TIB, 0], &[0, 0], &[FOUR_TIB, 0]),
            // Huge k, nothing else.
            (&[0, FOUR_TIB], &[FOUR_TIB, 0], &[0, 0]),
            // Huge n, empty m.
            (&[0, 0], &[0, FOUR_TIB], &[0, FOUR_TIB]),
            // Huge k with 1 × 1 output: an empty sum.
            (&[1, 0], &[0, 1], &[1, 1]),
        ];
        for (a, b, expected) in cases {
            let (x, y) = (empty(a), empty(b));
            let result = finishes_within(10, move || {
                try_matmul(&x, &y).map(|r| (r.shape().to_vec(), r.to_vec::<f32>()))
            });
            let (shape, values) = result.unwrap_or_else(|e| panic!("{backend} {a:?} × {b:?}: {e}"));
            assert_eq!(shape, expected, "{backend}");
            assert_eq!(values, vec![0.0; values.len()], "{backend}");
        }
        // A zero inner dimension with a huge but non-empty result: the memory it needs is refused.
        let error = try_matmul(&empty(&[UNMAPPABLE, 0]), &empty(&[0, 1])).unwrap_err();
        check_out_of_memory(&error, "matmul", UNMAPPABLE * 4);
    });
}

// ---- full ----

#[test]
fn full_of_an_overflowing_shape_is_a_size_overflow_not_a_capacity_panic() {
    on_both_cpu_backends(|backend| {
        for shape in [
            &[usize::MAX, 2][..],
            &[1 << 62, 1 << 3],
            &[usize::MAX / 4 + 1],
        ] {
            let error = try_full(shape, 1.0, DType::F32, Device::Cpu).unwrap_err();
            check_size_overflow(&error, "full", &[shape]);
            assert_eq!(
                panic_message(|| full(shape, 1.0, DType::F32, Device::Cpu)),
                error.to_string(),
                "{backend}"
            );
        }
    });
}

#[test]
fn full_beyond_memory_is_an_error_naming_the_bytes_not_an_abort() {
    on_both_cpu_backends(|backend| {
        let error = try_full(&[UNMAPPABLE], 1.0, DType::F32, Device::Cpu).unwrap_err();
        check_out_of_memory(&error, "full", UNMAPPABLE * 4);
        assert!(error.to_string().contains("256 TiB"), "{error}");
        assert_eq!(
            panic_message(|| full(&[UNMAPPABLE], 1.0, DType::F32, Device::Cpu)),
            error.to_string(),
            "{backend}"
        );
        if huge_reservations_fail() {
            // The reproduction: 4 TiB.
            let error = try_full(&[FOUR_TIB], 1.0, DType::F32, Device::Cpu).unwrap_err();
            check_out_of_memory(&error, "full", FOUR_TIB * 4);
            let error = try_full(&[1 << 20, 1 << 20], 0.0, DType::F32, Device::Cpu).unwrap_err();
            check_out_of_memory(&error, "full", FOUR_TIB * 4);
        }
    });
}

#[test]
fn boxed_and_traced_calls_return_size_errors_too() {
    // A boxed `full` whose shape overflows (each entry fits the boxed `Int`, the product does not).
    let mut stack = Stack::new();
    stack.push(Value::List(vec![Value::Int(1 << 62), Value::Int(8)]));
    stack.push(1.0f64);
    stack.push(DType::F32);
    stack.push(Device::Cpu);
    let error = call_boxed("full", &mut stack).unwrap_err();
    check_size_overflow(&error, "full", &[&[1 << 62, 8]]);
    // Through the tracing mode's boxed fallback: the kernel's error comes back unchanged.
    let (x, y) = (empty(&[1 << 32, 0]), empty(&[0, 1 << 32]));
    let (result, _) = switchyard::trace(|| try_matmul(&x, &y));
    check_size_overflow(&result.unwrap_err(), "matmul", &[x.shape(), y.shape()]);
    let (result, _) = switchyard::trace(|| try_full(&[UNMAPPABLE], 0.0, DType::F32, Device::Cpu));
    check_out_of_memory(&result.unwrap_err(), "full", UNMAPPABLE * 4);
}

// ---- every op on empty and huge-but-empty shapes ----

/// Shapes with no elements: plain, 2-D, and with dimensions far beyond memory.
const EMPTY_SHAPES: [&[usize]; 6] = [
    &[0],
    &[2, 0],
    &[0, 3],
    &[FOUR_TIB, 0],
    &[0, usize::MAX],
    &[usize::MAX, 3, 0],
];

#[test]
fn every_op_takes_empty_and_huge_empty_shapes_at_once() {
    on_both_cpu_backends(|backend| {
        for shape in EMPTY_SHAPES {
            let context = format!("{backend} {shape:?}");
            let outcome = finishes_within(10, move || {
                let (x, y) = (empty(shape), empty(shape));
                type Binary = fn(&Tensor, &Tensor) -> Result<Tensor>;
                type Unary = fn(&Tensor) -> Result<Tensor>;
                let binaries: [(&str, Binary); 4] = [
                    ("add", try_add),
                    ("sub", try_sub),
                    ("mul", try_mul),
                    ("div", try_div),
                ];
                let unaries: [(&str, Unary); 3] =
                    [("neg", try_neg), ("relu", try_relu), ("exp", try_exp)];
                let mut results = Vec::new();
                for (name, op) in binaries {
                    results.push((name, op(&x, &y)));
                }
                for (name, op) in unaries {
                    results.push((name, op(&x)));
                }
                results.push(("full", try_full(shape, 2.0, DType::F32, Device::Cpu)));
                results.push(("to", try_to(&x, Device::Cpu)));
                let sums = (try_sum(&x), try_mean(&x));
                (results, sums)
            });
            let (results, (total, average)) = outcome;
            for (name, result) in results {
                let result = result.unwrap_or_else(|e| panic!("{context} {name}: {e}"));
                assert_eq!(result.shape(), shape, "{context} {name}");
                assert_eq!(result.numel(), 0, "{context} {name}");
                assert!(result.to_vec::<f32>().is_empty(), "{context} {name}");
            }
            // The sum of nothing is 0, its mean NaN (as in PyTorch).
            assert_eq!(total.unwrap().to_vec::<f32>(), [0.0], "{context}");
            assert!(average.unwrap().to_vec::<f32>()[0].is_nan(), "{context}");
        }
    });
}

#[test]
fn plain_ops_on_huge_empty_shapes_return_empty_results() {
    let x = empty(&[FOUR_TIB, 0]);
    let results = finishes_within(10, move || {
        [
            add(&x, &x),
            neg(&x),
            relu(&x),
            exp(&x),
            to(&x, Device::Cpu),
            full(&[FOUR_TIB, 0], 1.0, DType::F32, Device::Cpu),
            matmul(&x, &empty(&[0, 0])),
        ]
    });
    for result in results {
        assert_eq!(result.numel(), 0, "{result:?}");
    }
    assert_eq!(sum(&empty(&[FOUR_TIB, 0])).to_vec::<f32>(), [0.0]);
    assert!(mean(&empty(&[FOUR_TIB, 0])).to_vec::<f32>()[0].is_nan());
}

// ---- printing ----

#[test]
fn printing_a_huge_empty_tensor_finishes_at_once() {
    let (display, debug) = finishes_within(10, || {
        let t = empty(&[FOUR_TIB, 0]);
        (t.to_string(), format!("{t:?}"))
    });
    assert_eq!(display, "[]");
    assert!(
        debug.starts_with("Tensor(shape=[1099511627776, 0], dtype=f32, device=cpu"),
        "{debug}"
    );
    assert!(debug.ends_with(", [])"), "{debug}");
    // A device tensor: nothing to read back, so nothing is read.
    let remote =
        Tensor::from_backend(Remote::default(), &[FOUR_TIB, 0], Device::PrivateUse1).unwrap();
    assert_eq!(remote.to_string(), "[]");
    let storage = remote.backend_storage::<Remote>().unwrap();
    assert_eq!(storage.reads.load(std::sync::atomic::Ordering::Relaxed), 0);
}

#[test]
fn printing_summarises_large_tensors_like_pytorch() {
    // Up to 1000 elements print in full.
    let small = Tensor::from_fn(&[10], |i| i as f32);
    assert_eq!(small.to_string(), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
    // Above 1000: the first and last 3 of every dimension longer than 6, `...` between.
    let long = Tensor::from_fn(&[2000], |i| i as f32);
    assert_eq!(long.to_string(), "[0, 1, 2, ..., 1997, 1998, 1999]");
    let matrix = Tensor::from_fn(&[100, 100], |i| i as f32);
    assert_eq!(
        matrix.to_string(),
        "[[0, 1, 2, ..., 97, 98, 99], [100, 101, 102, ..., 197, 198, 199], \
         [200, 201, 202, ..., 297, 298, 299], ..., \
         [9700, 9701, 9702, ..., 9797, 9798, 9799], [9800, 9801, 9802, ..., 9897, 9898, 9899], \
         [9900, 9901, 9902, ..., 9997, 9998, 9999]]"
    );
    // Short dimensions of a large tensor print in full.
    let tall = Tensor::from_fn(&[1000, 2], |i| i as f32);
    assert_eq!(
        tall.to_string(),
        "[[0, 1], [2, 3], [4, 5], ..., [1994, 1995], [1996, 1997], [1998, 1999]]"
    );
}

#[test]
fn printing_a_large_tensor_shows_a_bounded_number_of_values() {
    // Many short dimensions (2¹⁶ elements, none elided by the per-dimension rule): the print
    // stops after 1000 values instead of listing all of them.
    let t = Tensor::from_fn(&[2; 16], |i| i as f32);
    let text = t.to_string();
    let values = text
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .count();
    assert!(values <= 1000, "{values} values printed");
    assert!(text.starts_with("[[[[[[[[[[[[[[[[0, 1], [2, 3]]"), "{text}");
    assert!(text.contains("..."), "{text}");
    // 16M elements print as fast as 16: nothing is copied, only the shown values are read.
    let big = Tensor::from_fn(&[1 << 24], |i| i as f32);
    let text = finishes_within(10, move || big.to_string());
    assert_eq!(text, "[0, 1, 2, ..., 16777213, 16777214, 16777215]");
}

// ---- unwind safety ----

fn assert_unwind_safe<T: UnwindSafe + RefUnwindSafe>() {}

#[test]
fn tensor_crosses_catch_unwind_without_assert_unwind_safe() {
    assert_unwind_safe::<Tensor>();
    assert_unwind_safe::<&Tensor>();
    assert_unwind_safe::<switchyard_example_downstream::ToyStorage>();
    let t = Tensor::vector(&[1.0, -2.0]);
    // The closure borrows `t`: it compiles only if `&Tensor` is `UnwindSafe`.
    let result = catch_unwind(|| relu(&t));
    assert_eq!(result.unwrap().to_vec::<f32>(), [1.0, 0.0]);
    // Shapes [2] and [3] do not broadcast: `add` panics with the shape error.
    let caught = catch_unwind(|| add(&t, &Tensor::vector(&[1.0, 2.0, 3.0])));
    assert!(caught.is_err());
    assert_eq!(t.to_vec::<f32>(), [1.0, -2.0]);
}

// ---- empty views ----

#[test]
fn an_empty_view_beyond_its_storage_reads_as_empty() {
    // `[3, 0]` holds nothing; its row 2 starts, by its strides, past the empty storage.
    let x = empty(&[3, 0]);
    let row = x.try_select(0, 2).unwrap();
    assert_eq!(row.shape(), [0]);
    assert!(row.as_slice::<f32>().unwrap().is_empty());
    assert_eq!(row.to_vec::<f32>(), Vec::<f32>::new());
    assert_eq!(row.to_string(), "[]");
    // A matmul of such a view reads nothing either.
    let rows = x.try_narrow(0, 2, 1).unwrap();
    let product = try_matmul(&rows, &empty(&[0, 2])).unwrap();
    assert_eq!(product.to_vec::<f32>(), [0.0, 0.0]);
}

#[test]
fn an_integer_matmul_with_no_columns_does_no_work_per_row() {
    // 2⁴⁰ rows of nothing: the naive kernel (the one that serves `i32`) must not walk them.
    let x = Tensor::from_vec::<i32>(Vec::new(), &[1 << 40, 0]).unwrap();
    let y = Tensor::from_vec::<i32>(Vec::new(), &[0, 0]).unwrap();
    let product = try_matmul(&x, &y).unwrap();
    assert_eq!(product.shape(), [1 << 40, 0]);
    assert_eq!(product.dtype(), DType::I32);
}
