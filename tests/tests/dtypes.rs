//! Precision as a dispatch dimension: kernels declare the dtypes they serve (`dtypes = "f32"`),
//! tables resolve per (key, column), and a call whose column a higher key does not serve falls
//! through to the next key that does.
//!
//! `Typed` is a fake tensor whose keys are the CPU's two keys and the bits of its dtypes, as a
//! tensor library's `DispatchArg` reports them. This file is its own test binary, so its runtime
//! registrations and fallbacks touch no other test.

use switchyard::{
    ColumnSet, DTypeColumn, DTypeSet, DispatchArg, DispatchKey, DispatchKeySet, ErrorKind,
    OpHandle, Stack, ToValue, Value, boxable, exclude, include, kernel, op, register_fallback,
};
use switchyard_backends as _;
use switchyard_dispatch::DType;

/// A fake CPU tensor carrying the bits of `0` (none: an untyped value).
#[derive(Clone, Debug)]
pub struct Typed(DTypeSet);

impl DispatchArg for Typed {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::CPU.with_dtypes(self.0)
    }
}
boxable!(Typed);

fn t(dtype: DType) -> Typed {
    Typed(DTypeSet::of(&[dtype]))
}

fn untyped() -> Typed {
    Typed(DTypeSet::EMPTY)
}

// ---- one op: SIMD serves f32 only, naive serves everything ----

#[op(name = "dtypes::add")]
pub fn add(x: &Typed, y: &Typed) -> String;

#[kernel(op = "add", key = CpuSimd, dtypes = "f32")]
fn add_simd_f32(_x: &Typed, _y: &Typed) -> String {
    "simd f32".into()
}

#[kernel(op = "add", key = CpuNaive)]
fn add_naive(_x: &Typed, _y: &Typed) -> String {
    "naive".into()
}

/// A layer at `Custom1` that redispatches below itself and reports the keys it passed on.
#[kernel(op = "add", key = Custom1)]
fn add_layer(keys: DispatchKeySet, x: &Typed, y: &Typed) -> switchyard::Result<String> {
    let below = keys.below(DispatchKey::Custom1);
    Ok(format!("{below} > {}", add::redispatch(below, x, y)?))
}

#[test]
fn f32_runs_simd_and_f64_falls_through_to_naive() {
    assert_eq!(add(&t(DType::F32), &t(DType::F32)), "simd f32");
    assert_eq!(add(&t(DType::F64), &t(DType::F64)), "naive");
    assert_eq!(add(&t(DType::I32), &t(DType::I32)), "naive");
    // Two dtypes: the mixed column, which the SIMD kernel does not serve.
    assert_eq!(add(&t(DType::F32), &t(DType::I32)), "naive");
    // No dtype at all: the untyped column.
    assert_eq!(add(&untyped(), &untyped()), "naive");
    // An untyped value beside an f32 tensor: the call carries f32 only.
    assert_eq!(add(&untyped(), &t(DType::F32)), "simd f32");
    // Excluding `CpuSimd` still forces the naive backend for f32.
    let _naive = exclude(DispatchKey::CpuSimd);
    assert_eq!(add(&t(DType::F32), &t(DType::F32)), "naive");
}

#[test]
fn every_dtype_bit_set_is_the_mixed_column() {
    let all = Typed(DTypeSet::ALL);
    assert_eq!(add(&all, &all), "naive");
    let keys = DispatchKeySet::CPU.with_dtypes(DTypeSet::ALL);
    assert_eq!(keys.column(), DTypeColumn::Mixed);
    assert_eq!(keys.dtypes(), DTypeSet::ALL);
    assert_eq!(keys.highest(), Some(DispatchKey::CpuSimd));
    assert_eq!(keys.keys().count(), 2);
    assert_eq!(keys.keys_only(), DispatchKeySet::CPU);
    assert_eq!(
        keys.to_string(),
        "{CpuSimd, CpuNaive; bool|u8|i32|i64|f16|bf16|f32|f64}"
    );
    // Dtype bits alone: no key, so `highest` is `None` and the family rules see nothing.
    let only = DispatchKeySet::EMPTY.with_dtypes(DTypeSet::ALL);
    assert_eq!(only.highest(), None);
    assert!(switchyard::families(only).is_empty());
    assert_eq!(only.to_string(), "{; bool|u8|i32|i64|f16|bf16|f32|f64}");
    assert_eq!(DispatchKeySet::CPU.to_string(), "{CpuSimd, CpuNaive}");
    assert_eq!(
        DispatchKeySet::CPU
            .with_dtypes(DTypeSet::of(&[DType::F32]))
            .to_string(),
        "{CpuSimd, CpuNaive; f32}"
    );
    // `below` keeps the dtype bits: a redispatch stays in its column.
    assert_eq!(
        keys.below(DispatchKey::CpuSimd),
        DispatchKeySet::CPU_NAIVE.with_dtypes(DTypeSet::ALL)
    );
}

#[test]
fn thread_local_sets_never_add_or_remove_dtype_bits() {
    let f64_bits = DispatchKeySet::EMPTY.with_dtypes(DTypeSet::of(&[DType::F64]));
    let f32_bits = DispatchKeySet::EMPTY.with_dtypes(DTypeSet::of(&[DType::F32]));
    {
        // Including a dtype bit does not make an f32 call mixed; excluding one does not make it
        // untyped.
        let _in = include(f64_bits | DispatchKeySet::CUSTOM1);
        let _out = exclude(f32_bits);
        assert_eq!(
            add(&t(DType::F32), &t(DType::F32)),
            "{CpuSimd, CpuNaive; f32} > simd f32"
        );
        let local = switchyard::local_keys();
        assert_eq!(local.included, DispatchKeySet::CUSTOM1);
        assert!(local.excluded.dtypes().is_empty());
    }
    assert_eq!(switchyard::local_keys(), Default::default());
}

#[test]
fn redispatch_keeps_the_column() {
    let _layer = include(DispatchKey::Custom1);
    assert_eq!(
        add(&t(DType::F32), &t(DType::F32)),
        "{CpuSimd, CpuNaive; f32} > simd f32"
    );
    assert_eq!(
        add(&t(DType::F64), &t(DType::F64)),
        "{CpuSimd, CpuNaive; f64} > naive"
    );
    // Redispatch straight to a key set carrying dtype bits.
    let f32_keys = DispatchKeySet::CPU.with_dtypes(DTypeSet::of(&[DType::F32]));
    assert_eq!(
        add::redispatch(f32_keys, &untyped(), &untyped()).unwrap(),
        "simd f32"
    );
    assert_eq!(
        add::redispatch(DispatchKeySet::CPU, &t(DType::F32), &t(DType::F32)).unwrap(),
        "naive",
        "the keys given, not the arguments, pick the column"
    );
}

#[test]
fn boxed_calls_read_the_dtype_bits_of_boxed_values() {
    let call = |x: Typed, y: Typed| {
        let mut stack = Stack::new();
        stack.push(x.to_value());
        stack.push(y.to_value());
        add::handle().call_boxed(&mut stack).unwrap();
        String::from_value_test(stack.pop().unwrap())
    };
    assert_eq!(call(t(DType::F32), t(DType::F32)), "simd f32");
    assert_eq!(call(t(DType::F64), t(DType::F64)), "naive");
    assert_eq!(call(t(DType::F32), t(DType::I32)), "naive");
}

trait FromValueTest {
    fn from_value_test(value: Value) -> String;
}

impl FromValueTest for String {
    fn from_value_test(value: Value) -> String {
        match value {
            Value::Str(s) => s.to_string(),
            other => panic!("not a string: {other:?}"),
        }
    }
}

/// A boxed fallback at `Custom2` that continues below itself, boxed: the keys it gets carry the
/// call's dtypes, and so does its redispatch.
fn pass_through(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> switchyard::Result<()> {
    assert!(!keys.dtypes().is_empty() || keys.column() == DTypeColumn::Untyped);
    op.redispatch_boxed(keys.below(DispatchKey::Custom2), stack)
}

#[test]
fn a_boxed_fallback_sees_and_passes_on_the_dtypes() {
    let _fallback = register_fallback(DispatchKey::Custom2, "pass_through", pass_through).unwrap();
    let _on = include(DispatchKey::Custom2);
    assert_eq!(add(&t(DType::F32), &t(DType::F32)), "simd f32");
    assert_eq!(add(&t(DType::F64), &t(DType::F64)), "naive");
    assert_eq!(add(&untyped(), &untyped()), "naive");
}

// ---- kernels per column at one key ----

#[op(name = "dtypes::mix")]
pub fn mix(x: &Typed, y: &Typed) -> String;

#[kernel(op = "mix", key = CpuNaive, dtypes = "float")]
fn mix_float(_x: &Typed, _y: &Typed) -> String {
    "float".into()
}

#[kernel(op = "mix", key = CpuNaive, dtypes = "mixed")]
fn mix_promoting(x: &Typed, y: &Typed) -> String {
    let promoted = x.0.union(y.0).promoted().map_or("?", DType::name);
    format!("mixed, promoted to {promoted}")
}

#[test]
fn a_mixed_kernel_catches_mixed_calls_and_others_serve_their_own() {
    assert_eq!(mix(&t(DType::F64), &t(DType::F64)), "float");
    assert_eq!(
        mix(&t(DType::F32), &t(DType::F64)),
        "mixed, promoted to f64"
    );
    assert_eq!(mix(&t(DType::F32), &t(DType::F32)), "float");
    assert_eq!(
        mix(&t(DType::I32), &t(DType::F32)),
        "mixed, promoted to f32"
    );
    assert_eq!(
        mix(&t(DType::F16), &t(DType::BF16)),
        "mixed, promoted to f32"
    );
    // Two kernels at one key with disjoint columns are no conflict.
    assert!(mix::handle().conflicts().unwrap().is_empty());
}

#[test]
fn an_unserved_dtype_is_an_error_naming_the_dtype_and_what_is_served() {
    let error = try_mix(&t(DType::I64), &t(DType::I64)).unwrap_err();
    match error.kind() {
        ErrorKind::MissingKernel {
            op,
            key,
            column,
            served,
            ..
        } => {
            assert_eq!(*op, "dtypes::mix");
            assert_eq!(*key, DispatchKey::CpuNaive);
            assert_eq!(*column, DTypeColumn::I64);
            let float_or_mixed = ColumnSet::token("float")
                .unwrap()
                .union(DTypeColumn::Mixed.set());
            assert_eq!(*served, [(DispatchKey::CpuNaive, float_or_mixed)]);
        }
        other => panic!("{other:?}"),
    }
    let text = error.to_string();
    assert!(
        text.contains("op `dtypes::mix`: no kernel for dtype i64 at dispatch key `CpuNaive`"),
        "{text}"
    );
    assert!(
        text.contains("kernels at `CpuNaive` serve float|mixed"),
        "{text}"
    );
    // Untyped calls are a column of their own, which a kernel declaring dtypes does not serve.
    let text = try_mix(&untyped(), &untyped()).unwrap_err().to_string();
    assert!(
        text.contains("no kernel for untyped calls at dispatch key `CpuNaive`"),
        "{text}"
    );
}

#[test]
fn the_table_dump_groups_columns_with_one_resolution() {
    let dump = add::handle().table_dump();
    assert!(
        dump.contains("CpuSimd              f32 → [kernel]"),
        "{dump}"
    );
    assert!(dump.contains("add_simd_f32"), "{dump}");
    assert!(dump.contains("other dtypes → fallthrough"), "{dump}");
    // A key whose every column resolves alike prints one plain line.
    let naive_line = dump
        .lines()
        .find(|l| l.trim_start().starts_with("CpuNaive"))
        .unwrap();
    assert!(
        naive_line.contains("[kernel]") && naive_line.contains("add_naive"),
        "{dump}"
    );
    assert!(!naive_line.contains('→'), "{dump}");
    // The registry dump names what each kernel serves, when it declares it.
    let all = switchyard::dump();
    assert!(all.contains("add_simd_f32 (dtypes: f32)"), "{all}");
    assert!(all.contains("mix_promoting (dtypes: mixed)"), "{all}");
}

// ---- runtime registration with dtypes ----

#[op(name = "dtypes::scale")]
pub fn scale(x: &Typed) -> String;

#[kernel(op = "scale", key = CpuNaive)]
fn scale_naive(_x: &Typed) -> String {
    "naive".into()
}

fn scale_f64(_: DispatchKeySet, _: &Typed) -> switchyard::Result<String> {
    Ok("runtime f64".into())
}

fn scale_other(_: DispatchKeySet, _: &Typed) -> switchyard::Result<String> {
    Ok("runtime f64 again".into())
}

#[test]
fn runtime_registrations_declare_dtypes_too() {
    {
        let _f64 = scale::register_dtypes(DispatchKey::CpuSimd, DType::F64, "scale_f64", scale_f64)
            .unwrap();
        assert_eq!(scale(&t(DType::F64)), "runtime f64");
        assert_eq!(scale(&t(DType::F32)), "naive");
        assert_eq!(scale(&untyped()), "naive");
        // A second kernel for the same (key, column) conflicts; one for another column does not.
        let refused = scale::register_dtypes(
            DispatchKey::CpuSimd,
            ColumnSet::token("float").unwrap(),
            "scale_other",
            scale_other,
        )
        .unwrap_err();
        assert!(
            matches!(refused.kind(), ErrorKind::DuplicateKernel { .. }),
            "{refused}"
        );
        let _i32 =
            scale::register_dtypes(DispatchKey::CpuSimd, DType::I32, "scale_other", scale_other)
                .unwrap();
        assert_eq!(scale(&t(DType::I32)), "runtime f64 again");
        assert_eq!(scale(&t(DType::F64)), "runtime f64");
    }
    assert_eq!(scale(&t(DType::F64)), "naive");
    // A kernel that serves nothing would never run: refused, naming it.
    let nothing = scale::register_dtypes(
        DispatchKey::CpuSimd,
        ColumnSet::EMPTY,
        "scale_nothing",
        scale_other,
    )
    .unwrap_err();
    assert!(
        nothing
            .to_string()
            .contains("`scale_nothing` serves no dtype"),
        "{nothing}"
    );
}

// ---- alias kernels with dtypes serve only those columns ----

#[op(name = "dtypes::decomposed")]
pub fn decomposed(x: &Typed) -> String;

#[kernel(op = "decomposed", key = CompositeExplicit, dtypes = "f32")]
fn decomposed_f32(_x: &Typed) -> String {
    "explicit f32".into()
}

#[test]
fn an_alias_kernel_with_dtypes_serves_only_them() {
    assert_eq!(decomposed(&t(DType::F32)), "explicit f32");
    let error = try_decomposed(&t(DType::F64)).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::MissingKernel { .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("no kernel for dtype f64"),
        "{error}"
    );
    let dump = decomposed::handle().table_dump();
    assert!(dump.contains("f32 → [composite explicit]"), "{dump}");
}

// ---- the macro's tokens are the runtime's ----

#[op(name = "dtypes::every_token")]
pub fn every_token(x: &Typed) -> i64;

/// Every token the runtime knows, in one attribute: a token missing from the macro fails to
/// compile; one the macro has but the runtime lacks fails its `const` evaluation.
#[kernel(
    op = "every_token",
    key = CpuNaive,
    dtypes = "bool, u8, i32, i64, f16, bf16, f32, f64, float, int, mixed, untyped, builtin, all"
)]
fn every_token_kernel(_x: &Typed) -> i64 {
    1
}

#[test]
fn the_macro_accepts_exactly_the_runtime_tokens() {
    let names: Vec<&str> = ColumnSet::TOKENS.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "bool", "u8", "i32", "i64", "f16", "bf16", "f32", "f64", "float", "int", "mixed",
            "untyped", "builtin", "all"
        ]
    );
    assert_eq!(every_token(&t(DType::Bool)), 1);
    assert_eq!(ColumnSet::parse("f32, int").unwrap().to_string(), "int|f32");
    assert!(
        ColumnSet::parse("f31")
            .unwrap_err()
            .contains("unknown dtype `f31`")
    );
    assert!(ColumnSet::parse("").is_err());
}
