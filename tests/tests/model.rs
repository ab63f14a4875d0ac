//! Model-based property test of table computation and dispatch (the precedence rules of
//! ARCHITECTURE.md).
//!
//! Random sets of runtime registrations (kernels at random keys, a composite body or not,
//! `CompositeExplicit`, the `Autograd` alias, per-op fallthroughs, boxed fallbacks and
//! fallthrough fallbacks) and random calls (argument keys, thread-local includes and excludes),
//! typed and boxed. What runs must be what a small reference model of those rules predicts.
//!
//! With the dtype dimension: each kernel serves random dtype columns (half of them every column),
//! each call's argument carries random dtype bits (none, one or several), and includes and
//! excludes carry random dtype bits too (which guards must ignore). The model resolves the call's
//! column by the same rules with only the kernels that serve it.
//!
//! With autograd pairing: includes, excludes and arguments carry any autograd keys; the call
//! consults only the one paired with its highest backend key (the model's `paired`).
//!
//! This file is its own test binary, so its global fallbacks touch no other test.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use switchyard::{
    AliasKey, ColumnSet, DTypeColumn, DTypeSet, DispatchArg, DispatchError, DispatchKey,
    DispatchKeySet, ErrorKind, NUM_KEYS, OpHandle, Registration, Stack, Value, boxable, exclude,
    include, op, register_fallback, register_fallthrough,
};
use switchyard_backends as _;

/// An argument that carries whatever keys the test gives it.
#[derive(Clone, Debug)]
pub struct Keys(DispatchKeySet);

impl DispatchArg for Keys {
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.0
    }
}
boxable!(Keys);

#[op(name = "model::probe")]
pub fn probe(x: &Keys) -> i64;

type KernelFn = probe::KernelFn;

/// Kernel `N` answers `N`, so the test sees which one ran.
fn kernel<const N: i64>(_: DispatchKeySet, _: &Keys) -> switchyard::Result<i64> {
    Ok(N)
}

/// Boxed fallback `N` answers `N` without running anything below it.
fn fallback<const N: i64>(
    _: &OpHandle,
    _: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> switchyard::Result<()> {
    stack.clear();
    stack.push(Value::Int(N));
    Ok(())
}

const EXPLICIT: i64 = 100;
const IMPLICIT: i64 = 101;
const AUTOGRAD: i64 = 102;
const FALLBACK: i64 = 200;

/// The kernel for key index `i` answers `i`; for the aliases, the constants above.
const KERNELS: [KernelFn; NUM_KEYS] = [
    kernel::<0>,
    kernel::<1>,
    kernel::<2>,
    kernel::<3>,
    kernel::<4>,
    kernel::<5>,
    kernel::<6>,
    kernel::<7>,
    kernel::<8>,
    kernel::<9>,
    kernel::<10>,
    kernel::<11>,
    kernel::<12>,
    kernel::<13>,
    kernel::<14>,
    kernel::<15>,
    kernel::<16>,
    kernel::<17>,
    kernel::<18>,
    kernel::<19>,
    kernel::<20>,
    kernel::<21>,
    kernel::<22>,
    kernel::<23>,
    kernel::<24>,
    kernel::<25>,
];
const FALLBACKS: [switchyard::BoxedKernel; NUM_KEYS] = [
    fallback::<200>,
    fallback::<201>,
    fallback::<202>,
    fallback::<203>,
    fallback::<204>,
    fallback::<205>,
    fallback::<206>,
    fallback::<207>,
    fallback::<208>,
    fallback::<209>,
    fallback::<210>,
    fallback::<211>,
    fallback::<212>,
    fallback::<213>,
    fallback::<214>,
    fallback::<215>,
    fallback::<216>,
    fallback::<217>,
    fallback::<218>,
    fallback::<219>,
    fallback::<220>,
    fallback::<221>,
    fallback::<222>,
    fallback::<223>,
    fallback::<224>,
    fallback::<225>,
];

/// Keys whose fallback is fixed by the framework: `CpuSimd` and `Autocast` fall through, and the
/// built-in `trace`/`profile` modes redispatch below their own keys (transparent when nothing
/// records).
const FIXED_FALLBACK: DispatchKeySet = DispatchKeySet::CPU_SIMD
    .union(DispatchKeySet::AUTOCAST)
    .union(DispatchKeySet::BUILTIN);

/// Keys left out of the model: `Fake` is the tensor crate's layer, whose fallback rewrites the
/// call's tensors (tests/meta_tensors.rs covers it); no registration or call here names it.
const UNMODELLED: DispatchKeySet = DispatchKeySet::FAKE;

#[derive(Clone, Copy, Debug, PartialEq)]
enum PerKey {
    Nothing,
    Kernel,
    /// Per-op fallthrough.
    Skip,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fallback {
    Nothing,
    Boxed,
    Fallthrough,
}

#[derive(Clone, Debug)]
struct Registrations {
    per_key: [PerKey; NUM_KEYS],
    /// The columns each key's kernel serves, and each alias kernel's (explicit, implicit,
    /// autograd).
    columns: [ColumnSet; NUM_KEYS],
    alias_columns: [ColumnSet; 3],
    fallbacks: [Fallback; NUM_KEYS],
    explicit: bool,
    implicit: bool,
    autograd: bool,
}

#[derive(Clone, Debug)]
struct Call {
    args: DispatchKeySet,
    include: DispatchKeySet,
    exclude: DispatchKeySet,
    boxed: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Ran(i64),
    Missing(DispatchKey),
    NoKeys,
    Mismatch,
}

// ---- the reference model: the precedence rules, written out directly ----

fn device_of(key: DispatchKey) -> Option<DispatchKeySet> {
    match key {
        DispatchKey::CpuNaive | DispatchKey::CpuSimd => Some(DispatchKeySet::CPU),
        DispatchKey::PrivateUse1 => Some(DispatchKeySet::PRIVATE_USE1),
        DispatchKey::PrivateUse2 => Some(DispatchKeySet::PRIVATE_USE2),
        DispatchKey::PrivateUse3 => Some(DispatchKeySet::PRIVATE_USE3),
        DispatchKey::Wgpu => Some(DispatchKeySet::WGPU),
        DispatchKey::Meta => Some(DispatchKeySet::META),
        _ => None,
    }
}

fn backend_of_autograd(key: DispatchKey) -> Option<DispatchKeySet> {
    match key {
        DispatchKey::AutogradCpu => Some(DispatchKeySet::CPU),
        DispatchKey::AutogradPrivateUse1 => Some(DispatchKeySet::PRIVATE_USE1),
        DispatchKey::AutogradPrivateUse2 => Some(DispatchKeySet::PRIVATE_USE2),
        DispatchKey::AutogradPrivateUse3 => Some(DispatchKeySet::PRIVATE_USE3),
        DispatchKey::AutogradWgpu => Some(DispatchKeySet::WGPU),
        DispatchKey::AutogradMeta => Some(DispatchKeySet::META),
        _ => None,
    }
}

enum Slot {
    Run(i64),
    Skip,
    Transparent,
    Missing,
}

fn model_slot(r: &Registrations, key: DispatchKey) -> Slot {
    let i = key.index();
    let has_kernel = |k: DispatchKey| r.per_key[k.index()] == PerKey::Kernel;
    match r.per_key[i] {
        PerKey::Kernel => return Slot::Run(i as i64),
        PerKey::Skip => return Slot::Skip,
        PerKey::Nothing => {}
    }
    // A composite fills a backend key unless a lower key of the same device has a kernel.
    let composite_fills =
        device_of(key).is_some_and(|device| !device.keys().any(|k| k < key && has_kernel(k)));
    if r.explicit && composite_fills {
        return Slot::Run(EXPLICIT);
    }
    let autograd_backend = backend_of_autograd(key);
    let backend_has_kernel =
        autograd_backend.is_some_and(|b| b.keys().any(has_kernel)) || r.explicit;
    if r.implicit && (composite_fills || (autograd_backend.is_some() && !backend_has_kernel)) {
        return Slot::Run(IMPLICIT);
    }
    if r.autograd && autograd_backend.is_some() {
        return Slot::Run(AUTOGRAD);
    }
    match key {
        DispatchKey::CpuSimd | DispatchKey::Autocast => return Slot::Skip,
        DispatchKey::BuiltinTrace | DispatchKey::BuiltinProfile => return Slot::Transparent,
        _ => {}
    }
    match r.fallbacks[i] {
        Fallback::Boxed => Slot::Run(FALLBACK + i as i64),
        Fallback::Fallthrough => Slot::Skip,
        Fallback::Nothing => Slot::Missing,
    }
}

/// The registrations a call in `column` sees: kernels that do not serve it are not there.
fn in_column(r: &Registrations, column: DTypeColumn) -> Registrations {
    let mut seen = r.clone();
    for key in DispatchKey::ALL {
        if seen.per_key[key.index()] == PerKey::Kernel && !r.columns[key.index()].has(column) {
            seen.per_key[key.index()] = PerKey::Nothing;
        }
    }
    seen.explicit &= r.alias_columns[0].has(column);
    seen.implicit &= r.alias_columns[1].has(column);
    seen.autograd &= r.alias_columns[2].has(column);
    seen
}

/// The autograd pairing rule (ARCHITECTURE.md, "Autograd keys pair with the backend"): of the
/// autograd keys that the arguments and includes carry, the call consults only the one paired
/// with the highest backend key they carry (none without a backend key); exclusions apply after.
fn paired(keys: DispatchKeySet) -> DispatchKeySet {
    let paired = match keys.keys().find(|k| k.is_backend()) {
        Some(backend) => DispatchKeySet::AUTOGRAD
            .keys()
            .filter(|&a| backend_of_autograd(a).is_some_and(|b| b.has(backend)))
            .collect(),
        None => DispatchKeySet::EMPTY,
    };
    keys - (DispatchKeySet::AUTOGRAD - paired)
}

fn model(r: &Registrations, call: &Call) -> Outcome {
    // The column comes from the arguments' dtypes alone: guards hold no dtype bits.
    let r = &in_column(r, call.args.column());
    let include = call.include.keys_only();
    let exclude = call.exclude.keys_only();
    let families = call
        .args
        .keys()
        .filter_map(device_of)
        .fold(Vec::new(), |mut seen, d| {
            if !seen.contains(&d) {
                seen.push(d);
            }
            seen
        });
    if families.len() > 1 {
        return Outcome::Mismatch;
    }
    let keys = (paired(call.args | include) - exclude).keys_only();
    // What is still to dispatch on: a transparent mode redispatches with the keys below it.
    let mut remaining = keys;
    for key in keys.keys() {
        match model_slot(r, key) {
            Slot::Run(id) => return Outcome::Ran(id),
            Slot::Missing => return Outcome::Missing(key),
            Slot::Skip => {}
            Slot::Transparent => remaining = remaining.below(key),
        }
    }
    if r.explicit {
        Outcome::Ran(EXPLICIT)
    } else if r.implicit {
        Outcome::Ran(IMPLICIT)
    } else {
        match remaining.highest() {
            Some(key) => Outcome::Missing(key),
            None => Outcome::NoKeys,
        }
    }
}

// ---- the system under test ----

fn register_all(r: &Registrations) -> Vec<Registration> {
    let mut live = Vec::new();
    for key in DispatchKey::ALL {
        let i = key.index();
        match r.per_key[i] {
            PerKey::Kernel => {
                live.push(probe::register_dtypes(key, r.columns[i], "k", KERNELS[i]).unwrap())
            }
            PerKey::Skip => live.push(probe::handle().register_fallthrough(key).unwrap()),
            PerKey::Nothing => {}
        }
        match r.fallbacks[i] {
            Fallback::Boxed => live.push(register_fallback(key, "fb", FALLBACKS[i]).unwrap()),
            Fallback::Fallthrough => live.push(register_fallthrough(key).unwrap()),
            Fallback::Nothing => {}
        }
    }
    let aliases = [
        (
            r.explicit,
            AliasKey::CompositeExplicit,
            kernel::<EXPLICIT> as KernelFn,
        ),
        (r.implicit, AliasKey::CompositeImplicit, kernel::<IMPLICIT>),
        (r.autograd, AliasKey::Autograd, kernel::<AUTOGRAD>),
    ];
    for ((on, alias, kernel), columns) in aliases.into_iter().zip(r.alias_columns) {
        if on {
            live.push(probe::register_dtypes(alias, columns, "alias", kernel).unwrap());
        }
    }
    live
}

fn outcome(result: Result<i64, DispatchError>) -> Outcome {
    match result {
        Ok(id) => Outcome::Ran(id),
        Err(e) => match e.kind() {
            ErrorKind::MissingKernel { key, .. } => Outcome::Missing(*key),
            ErrorKind::NoDispatchKeys { .. } => Outcome::NoKeys,
            ErrorKind::DeviceMismatch { .. } => Outcome::Mismatch,
            _ => panic!("unexpected error: {e}"),
        },
    }
}

fn run(call: &Call) -> Outcome {
    let _include = include(call.include);
    let _exclude = exclude(call.exclude);
    let arg = Keys(call.args);
    if call.boxed {
        let mut stack = Stack::new();
        stack.push(Value::custom(arg.clone(), arg.0));
        outcome(
            probe::handle()
                .call_boxed(&mut stack)
                .map(|()| match stack.pop() {
                    Some(Value::Int(id)) => id,
                    other => panic!("boxed result {other:?}"),
                }),
        )
    } else {
        outcome(try_probe(&arg))
    }
}

// ---- generators ----

fn keyset() -> impl Strategy<Value = DispatchKeySet> {
    // Sparse sets: each key with probability 1/4.
    proptest::collection::vec(proptest::bool::weighted(0.25), NUM_KEYS).prop_map(|bits| {
        DispatchKey::ALL
            .into_iter()
            .filter(|k| bits[k.index()] && !UNMODELLED.has(*k))
            .collect()
    })
}

/// Half the time every column (a kernel that declares no dtypes), else a random non-empty set.
fn columns() -> impl Strategy<Value = ColumnSet> {
    prop_oneof![
        1 => Just(ColumnSet::ALL),
        1 => (1u16..1 << DTypeColumn::ALL.len()).prop_map(|bits| {
            DTypeColumn::ALL
                .into_iter()
                .filter(|c| bits >> c.index() & 1 == 1)
                .collect()
        }),
    ]
}

/// Dtype bits: none, one dtype, or any set (mostly several).
fn dtype_bits() -> impl Strategy<Value = DispatchKeySet> {
    prop_oneof![
        1 => Just(DTypeSet::EMPTY),
        2 => (0u8..8).prop_map(|i| DTypeSet::from_bits(1 << i)),
        1 => any::<u8>().prop_map(DTypeSet::from_bits),
    ]
    .prop_map(|dtypes| DispatchKeySet::EMPTY.with_dtypes(dtypes))
}

fn registrations() -> impl Strategy<Value = Registrations> {
    let per_key = proptest::collection::vec(
        prop_oneof![4 => Just(PerKey::Nothing), 3 => Just(PerKey::Kernel), 1 => Just(PerKey::Skip)],
        NUM_KEYS,
    );
    let fallbacks = proptest::collection::vec(
        prop_oneof![5 => Just(Fallback::Nothing), 1 => Just(Fallback::Boxed), 1 => Just(Fallback::Fallthrough)],
        NUM_KEYS,
    );
    let per_key_columns = proptest::collection::vec(columns(), NUM_KEYS);
    let alias_columns = proptest::collection::vec(columns(), 3);
    (
        (per_key, per_key_columns, alias_columns),
        fallbacks,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |((per_key, columns, alias_columns), fallbacks, explicit, implicit, autograd)| {
                let mut r = Registrations {
                    per_key: per_key.try_into().unwrap(),
                    columns: columns.try_into().unwrap(),
                    alias_columns: alias_columns.try_into().unwrap(),
                    fallbacks: fallbacks.try_into().unwrap(),
                    explicit,
                    implicit,
                    autograd,
                };
                for key in FIXED_FALLBACK.union(UNMODELLED).keys() {
                    r.fallbacks[key.index()] = Fallback::Nothing;
                }
                // The library's own keys take no user registrations.
                for key in DispatchKeySet::BUILTIN.union(UNMODELLED).keys() {
                    r.per_key[key.index()] = PerKey::Nothing;
                }
                r
            },
        )
}

fn call() -> impl Strategy<Value = Call> {
    let with_dtypes = || (keyset(), dtype_bits()).prop_map(|(keys, dtypes)| keys | dtypes);
    (with_dtypes(), with_dtypes(), with_dtypes(), any::<bool>()).prop_map(
        |(args, include, exclude, boxed)| {
            // Arguments carry whole device families (ARCHITECTURE.md: a CPU argument carries both
            // CPU keys); includes and excludes are arbitrary.
            let args = if args.intersects(DispatchKeySet::CPU) {
                args | DispatchKeySet::CPU
            } else {
                args
            };
            Call {
                args,
                include,
                exclude,
                boxed,
            }
        },
    )
}

#[test]
fn dispatch_matches_the_reference_model() {
    // The model knows the framework's own fallbacks and no others (the engine's four, and the
    // tensor crate's at `Fake`, which no call here reaches): this binary links no crate that
    // registers more.
    assert!(switchyard::dump().contains("switchyard: "));
    assert!(
        switchyard::dump().contains(" 5 fallbacks;"),
        "{}",
        switchyard::dump()
    );
    // 2,500 sets of registrations, 8 calls each; 300 on wasm32, where `.ci/wasm` runs this
    // unoptimised under Node, many times slower (the same checks, fewer random sets). Each set's
    // runtime fallbacks rebuild the table of every op linked here (the standard ops', with their
    // meta and autocast kernels): in a debug build 10,000 sets took over 13 minutes on a 2-core
    // machine, most of the README's test command. `PROPTEST_CASES` asks for more.
    let mut runner = TestRunner::new(Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(if cfg!(target_family = "wasm") {
                300
            } else {
                2_500
            }),
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (registrations(), proptest::collection::vec(call(), 8));
    runner
        .run(&strategy, |(r, calls)| {
            let live = register_all(&r);
            for call in &calls {
                let expected = model(&r, call);
                let actual = run(call);
                prop_assert_eq!(
                    &actual,
                    &expected,
                    "call {:?}\n{}",
                    call,
                    probe::handle().table_dump()
                );
            }
            drop(live);
            Ok(())
        })
        .unwrap();
}
