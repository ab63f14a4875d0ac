//! Dtypes from any crate: user dtype slots declared with `declare_dtype!`, served by kernels with
//! `dtypes = [CONST]`, resolved per (key, column) with fall-through like built-in dtypes, named
//! in errors, dumps and the trace; a slot two declarations claim fails only calls carrying it.
//!
//! `Typed` is a fake CPU tensor carrying one dtype bit, built-in or user, as a tensor library's
//! `DispatchArg` reports it. This file is its own test binary: the slot it declares twice
//! (`PrivateUse3`) is a conflict in this binary only.

use switchyard::{
    ColumnSet, DTypeColumn, DTypeKind, DispatchArg, DispatchKey, DispatchKeySet, ErrorKind,
    UserDType, kernel, op,
};
use switchyard_backends as _;
use switchyard_dispatch::DType;

/// The complex dtype of some library: two `f32`s.
pub const COMPLEX64: UserDType = UserDType::PrivateUse1;
switchyard::declare_dtype!(COMPLEX64, "complex64", bytes = 8, kind = Other);

/// An 8-bit quantized integer.
pub const Q8: UserDType = UserDType::PrivateUse2;
switchyard::declare_dtype!(Q8, "q8", bytes = 1, kind = Int);

// Two libraries claiming one slot: a conflict (the lines are asserted below).
switchyard::declare_dtype!(UserDType::PrivateUse3, "fp8_a", bytes = 1, kind = Float);
switchyard::declare_dtype!(UserDType::PrivateUse3, "fp8_b", bytes = 1, kind = Float);
const FIRST_CLAIM_LINE: u32 = 25;

/// A fake CPU tensor carrying the given dtype bits.
#[derive(Clone, Debug)]
pub struct Typed(DispatchKeySet);

impl DispatchArg for Typed {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::CPU | self.0
    }
}
switchyard::boxable!(Typed);

fn user(dtype: UserDType) -> Typed {
    Typed(dtype.key_bit())
}

fn builtin(dtype: DType) -> Typed {
    Typed(dtype.key_bit())
}

// ---- one op: SIMD serves f32 and complex64, naive serves every column ("all") ----

#[op(name = "user_dtypes::add")]
pub fn add(x: &Typed, y: &Typed) -> String;

#[kernel(op = add, key = CpuSimd, dtypes = ["f32", COMPLEX64])]
fn add_simd(_x: &Typed, _y: &Typed) -> String {
    "simd".into()
}

#[kernel(op = add, key = CpuNaive, dtypes = "all")]
fn add_naive(_x: &Typed, _y: &Typed) -> String {
    "naive".into()
}

#[test]
fn a_user_dtype_has_its_column_and_falls_through_like_a_builtin() {
    let c = user(COMPLEX64);
    assert_eq!(add(&c, &c), "simd");
    // q8: the SIMD kernel does not serve its column, so the call falls through to naive.
    assert_eq!(add(&user(Q8), &user(Q8)), "naive");
    assert_eq!(add(&builtin(DType::F32), &builtin(DType::F32)), "simd");
    assert_eq!(add(&builtin(DType::F64), &builtin(DType::F64)), "naive");
    // A user dtype beside built-in dtypes: its own column (its kernels decide what mixing
    // means); two user dtypes: the mixed column (no promotion).
    assert_eq!(add(&c, &builtin(DType::F32)), "simd");
    assert_eq!(add(&user(Q8), &builtin(DType::F32)), "naive");
    assert_eq!(add(&c, &user(Q8)), "naive");
    let beside = DispatchKeySet::CPU | COMPLEX64.key_bit() | DType::F32.key_bit();
    assert_eq!(beside.column(), COMPLEX64.column());
    let mixed = DispatchKeySet::CPU | COMPLEX64.key_bit() | Q8.key_bit();
    assert_eq!(mixed.column(), DTypeColumn::Mixed);
    let table = add::handle().table_dump();
    assert!(
        table.contains("f32|complex64 → [kernel]") && table.contains("other dtypes → fallthrough"),
        "{table}"
    );
}

#[test]
fn a_declaration_names_the_slot() {
    assert_eq!(COMPLEX64.name(), Some("complex64"));
    assert_eq!(COMPLEX64.size_of(), Some(8));
    assert_eq!(COMPLEX64.kind(), Some(DTypeKind::Other));
    assert_eq!(Q8.kind(), Some(DTypeKind::Int));
    assert_eq!(UserDType::from_name("q8"), Some(Q8));
    assert_eq!(UserDType::PrivateUse4.to_string(), "PrivateUse4");
    assert_eq!(COMPLEX64.column().to_string(), "complex64");
    assert_eq!(
        ColumnSet::from(COMPLEX64)
            .union(DTypeColumn::F32.set())
            .to_string(),
        "f32|complex64"
    );
    let keys = DispatchKeySet::CPU | COMPLEX64.key_bit() | DType::F32.key_bit();
    assert_eq!(keys.to_string(), "{CpuSimd, CpuNaive; f32|complex64}");
    // A user dtype is no built-in dtype.
    assert_eq!(keys.dtypes(), switchyard::DTypeSet::of(&[DType::F32]));
    assert_eq!(keys.keys_only(), DispatchKeySet::CPU);
}

// ---- an op without a kernel for q8: errors name the user dtype ----

#[op(name = "user_dtypes::scale")]
pub fn scale(x: &Typed) -> String;

#[kernel(op = scale, key = CpuNaive, dtypes = ["f32", COMPLEX64])]
fn scale_naive(_x: &Typed) -> String {
    "naive".into()
}

#[test]
fn errors_name_user_dtypes() {
    let error = try_scale(&user(Q8)).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::MissingKernel { column, key: DispatchKey::CpuNaive, .. }
                if *column == Q8.column()
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with(
            "op `user_dtypes::scale`: no kernel for dtype q8 at dispatch key `CpuNaive` (call \
             keys {CpuSimd, CpuNaive; q8})"
        ),
        "{message}"
    );
    assert!(
        message.contains("kernels at `CpuNaive` serve f32|complex64"),
        "{message}"
    );
    let mixed = try_scale(&Typed(COMPLEX64.key_bit() | Q8.key_bit())).unwrap_err();
    assert!(
        mixed
            .to_string()
            .contains("no kernel for mixed dtypes (complex64|q8)"),
        "{mixed}"
    );
    assert_eq!(scale(&user(COMPLEX64)), "naive");
    assert_eq!(
        scale(&Typed(COMPLEX64.key_bit() | DType::F32.key_bit())),
        "naive"
    );
}

/// (The dispatch trace prints a call's keys as their `Display`, asserted in
/// `a_declaration_names_the_slot`.)
#[test]
fn the_dump_names_user_dtypes() {
    let dump = switchyard::dump();
    assert!(dump.contains("add_simd (dtypes: f32|complex64)"), "{dump}");
    assert!(
        dump.lines().any(|l| l.starts_with("dtype PrivateUse1")
            && l.contains("`complex64` (8 bytes, other) declared at tests/tests/user_dtypes.rs:")),
        "{dump}"
    );
}

// ---- a slot claimed twice ----

#[test]
fn a_slot_claimed_twice_fails_only_calls_carrying_it() {
    let fp8 = user(UserDType::PrivateUse3);
    let error = try_add(&fp8, &fp8).unwrap_err();
    let ErrorKind::UserDTypeConflict {
        op,
        dtype,
        first,
        second,
    } = error.kind()
    else {
        panic!("{error:?}");
    };
    assert_eq!((*op, *dtype), ("user_dtypes::add", UserDType::PrivateUse3));
    assert_eq!((first.name, second.name), ("fp8_a", "fp8_b"));
    assert_eq!(
        (first.line, second.line),
        (FIRST_CLAIM_LINE, FIRST_CLAIM_LINE + 1)
    );
    let message = error.to_string();
    assert!(
        message.starts_with(
            "op `user_dtypes::add`: the call carries user dtype slot `PrivateUse3`, which two \
             declarations claim: `fp8_a` (1 byte, float) declared at tests/tests/user_dtypes.rs:"
        ),
        "{message}"
    );
    assert!(message.contains("and `fp8_b`"), "{message}");
    // With another dtype too (the mixed column), and at any op.
    assert!(matches!(
        try_add(&fp8, &builtin(DType::F32)).unwrap_err().kind(),
        ErrorKind::UserDTypeConflict { .. }
    ));
    assert!(try_scale(&fp8).is_err());
    // Nothing else changes: other dtypes, mixed calls without it, and the dump lists it.
    assert_eq!(add(&user(COMPLEX64), &user(COMPLEX64)), "simd");
    assert_eq!(add(&user(COMPLEX64), &builtin(DType::F32)), "simd");
    assert_eq!(
        UserDType::PrivateUse3.to_string(),
        "PrivateUse3 (claimed twice)"
    );
    let dump = switchyard::dump();
    assert!(
        dump.contains("dtype PrivateUse3: claimed by `fp8_a`") && dump.contains("and by `fp8_b`"),
        "{dump}"
    );
}

// ---- a kernel that declares no dtypes serves the built-in ones only ----

#[op(name = "user_dtypes::plain")]
pub fn plain(x: &Typed) -> String;

#[kernel(op = plain, key = CpuNaive)]
fn plain_naive(_x: &Typed) -> String {
    "naive".into()
}

#[test]
fn a_kernel_without_dtypes_never_serves_a_user_dtype() {
    assert_eq!(plain(&builtin(DType::F64)), "naive");
    assert_eq!(plain(&Typed(DispatchKeySet::empty())), "naive");
    for call in [user(Q8), Typed(Q8.key_bit() | DType::F32.key_bit())] {
        let message = try_plain(&call).unwrap_err().to_string();
        assert!(
            message.contains("no kernel for dtype q8")
                && message.contains("at `CpuNaive` serve builtin"),
            "{message}"
        );
    }
}
