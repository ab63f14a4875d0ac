//! The macro's key names and the runtime's `DispatchKey` agree: a kernel is registered by name at
//! every runtime key (both spellings, and by path), each returning the name of its key, and a
//! redispatch to each key lands on that key's kernel. Also: thread-local include and exclude
//! guards decide which kernel a plain call reaches.
//!
//! A key that the macro accepts but the runtime lacks (or the reverse) fails to compile here.

use switchyard::{DispatchKey, DispatchKeySet, ErrorKind, SlotOrigin, Tensor, kernel, op};

/// The library's own keys (what `trace()` and `profile()` use), which take no user registrations:
/// the macros refuse them by name (ui case `fallback-builtin-key`).
const BUILTIN: [(DispatchKey, &str); 2] = [
    (DispatchKey::BuiltinProfile, "BuiltinProfile"),
    (DispatchKey::BuiltinTrace, "BuiltinTrace"),
];

/// Every other runtime key and its name, written out by hand, highest priority first.
const EXPECTED: [(DispatchKey, &str); 24] = [
    (DispatchKey::Profiler, "Profiler"),
    (DispatchKey::Tracing, "Tracing"),
    (DispatchKey::Mode1, "Mode1"),
    (DispatchKey::Mode2, "Mode2"),
    (DispatchKey::Mode3, "Mode3"),
    (DispatchKey::Autocast, "Autocast"),
    (DispatchKey::AutogradMeta, "AutogradMeta"),
    (DispatchKey::AutogradWgpu, "AutogradWgpu"),
    (DispatchKey::AutogradPrivateUse1, "AutogradPrivateUse1"),
    (DispatchKey::AutogradPrivateUse2, "AutogradPrivateUse2"),
    (DispatchKey::AutogradPrivateUse3, "AutogradPrivateUse3"),
    (DispatchKey::AutogradCpu, "AutogradCpu"),
    (DispatchKey::Custom1, "Custom1"),
    (DispatchKey::Custom2, "Custom2"),
    (DispatchKey::Custom3, "Custom3"),
    (DispatchKey::Custom4, "Custom4"),
    (DispatchKey::Fake, "Fake"),
    (DispatchKey::Meta, "Meta"),
    (DispatchKey::Wgpu, "Wgpu"),
    (DispatchKey::PrivateUse1, "PrivateUse1"),
    (DispatchKey::PrivateUse2, "PrivateUse2"),
    (DispatchKey::PrivateUse3, "PrivateUse3"),
    (DispatchKey::CpuSimd, "CpuSimd"),
    (DispatchKey::CpuNaive, "CpuNaive"),
];

// ---- one kernel per key, keys in CamelCase ----

/// Returns the name of the key whose kernel ran.
#[op(unboxed)]
pub fn every_key(x: &Tensor) -> &'static str;

#[kernel(op = every_key, key = Profiler)]
fn camel_profiler(_x: &Tensor) -> &'static str {
    "Profiler"
}
#[kernel(op = every_key, key = Tracing)]
fn camel_tracing(_x: &Tensor) -> &'static str {
    "Tracing"
}
#[kernel(op = every_key, key = Mode1)]
fn camel_mode1(_x: &Tensor) -> &'static str {
    "Mode1"
}
#[kernel(op = every_key, key = Mode2)]
fn camel_mode2(_x: &Tensor) -> &'static str {
    "Mode2"
}
#[kernel(op = every_key, key = Mode3)]
fn camel_mode3(_x: &Tensor) -> &'static str {
    "Mode3"
}
#[kernel(op = every_key, key = Autocast)]
fn camel_autocast(_x: &Tensor) -> &'static str {
    "Autocast"
}
#[kernel(op = every_key, key = AutogradMeta)]
fn camel_autograd_meta(_x: &Tensor) -> &'static str {
    "AutogradMeta"
}
#[kernel(op = every_key, key = AutogradWgpu)]
fn camel_autograd_wgpu(_x: &Tensor) -> &'static str {
    "AutogradWgpu"
}
#[kernel(op = every_key, key = AutogradPrivateUse1)]
fn camel_autograd_private_use1(_x: &Tensor) -> &'static str {
    "AutogradPrivateUse1"
}
#[kernel(op = every_key, key = AutogradPrivateUse2)]
fn camel_autograd_private_use2(_x: &Tensor) -> &'static str {
    "AutogradPrivateUse2"
}
#[kernel(op = every_key, key = AutogradPrivateUse3)]
fn camel_autograd_private_use3(_x: &Tensor) -> &'static str {
    "AutogradPrivateUse3"
}
#[kernel(op = every_key, key = AutogradCpu)]
fn camel_autograd_cpu(_x: &Tensor) -> &'static str {
    "AutogradCpu"
}
#[kernel(op = every_key, key = Custom1)]
fn camel_custom1(_x: &Tensor) -> &'static str {
    "Custom1"
}
#[kernel(op = every_key, key = Custom2)]
fn camel_custom2(_x: &Tensor) -> &'static str {
    "Custom2"
}
#[kernel(op = every_key, key = Custom3)]
fn camel_custom3(_x: &Tensor) -> &'static str {
    "Custom3"
}
#[kernel(op = every_key, key = Custom4)]
fn camel_custom4(_x: &Tensor) -> &'static str {
    "Custom4"
}
#[kernel(op = every_key, key = Fake)]
fn camel_fake(_x: &Tensor) -> &'static str {
    "Fake"
}
#[kernel(op = every_key, key = Meta)]
fn camel_meta(_x: &Tensor) -> &'static str {
    "Meta"
}
#[kernel(op = every_key, key = Wgpu)]
fn camel_wgpu(_x: &Tensor) -> &'static str {
    "Wgpu"
}
#[kernel(op = every_key, key = PrivateUse1)]
fn camel_private_use1(_x: &Tensor) -> &'static str {
    "PrivateUse1"
}
#[kernel(op = every_key, key = PrivateUse2)]
fn camel_private_use2(_x: &Tensor) -> &'static str {
    "PrivateUse2"
}
#[kernel(op = every_key, key = PrivateUse3)]
fn camel_private_use3(_x: &Tensor) -> &'static str {
    "PrivateUse3"
}
#[kernel(op = every_key, key = CpuSimd)]
fn camel_cpu_simd(_x: &Tensor) -> &'static str {
    "CpuSimd"
}
#[kernel(op = every_key, key = CpuNaive)]
fn camel_cpu_naive(_x: &Tensor) -> &'static str {
    "CpuNaive"
}

// ---- one kernel per key, keys in SCREAMING_CASE (the `DispatchKeySet` constants' spelling) ----

/// Returns the name of the key whose kernel ran.
#[op(name = "keys::every_key_screaming", unboxed)]
pub fn every_key_screaming(x: &Tensor) -> &'static str;

#[kernel(op = "every_key_screaming", key = PROFILER)]
fn screaming_profiler(_x: &Tensor) -> &'static str {
    "Profiler"
}
#[kernel(op = "every_key_screaming", key = TRACING)]
fn screaming_tracing(_x: &Tensor) -> &'static str {
    "Tracing"
}
#[kernel(op = "every_key_screaming", key = MODE1)]
fn screaming_mode1(_x: &Tensor) -> &'static str {
    "Mode1"
}
#[kernel(op = "every_key_screaming", key = MODE2)]
fn screaming_mode2(_x: &Tensor) -> &'static str {
    "Mode2"
}
#[kernel(op = "every_key_screaming", key = MODE3)]
fn screaming_mode3(_x: &Tensor) -> &'static str {
    "Mode3"
}
#[kernel(op = "every_key_screaming", key = AUTOCAST)]
fn screaming_autocast(_x: &Tensor) -> &'static str {
    "Autocast"
}
#[kernel(op = "every_key_screaming", key = AUTOGRAD_META)]
fn screaming_autograd_meta(_x: &Tensor) -> &'static str {
    "AutogradMeta"
}
#[kernel(op = "every_key_screaming", key = AUTOGRAD_WGPU)]
fn screaming_autograd_wgpu(_x: &Tensor) -> &'static str {
    "AutogradWgpu"
}
#[kernel(op = "every_key_screaming", key = AUTOGRAD_PRIVATE_USE1)]
fn screaming_autograd_private_use1(_x: &Tensor) -> &'static str {
    "AutogradPrivateUse1"
}
#[kernel(op = "every_key_screaming", key = AUTOGRAD_PRIVATE_USE2)]
fn screaming_autograd_private_use2(_x: &Tensor) -> &'static str {
    "AutogradPrivateUse2"
}
#[kernel(op = "every_key_screaming", key = AUTOGRAD_PRIVATE_USE3)]
fn screaming_autograd_private_use3(_x: &Tensor) -> &'static str {
    "AutogradPrivateUse3"
}
#[kernel(op = "every_key_screaming", key = AUTOGRAD_CPU)]
fn screaming_autograd_cpu(_x: &Tensor) -> &'static str {
    "AutogradCpu"
}
#[kernel(op = "every_key_screaming", key = CUSTOM1)]
fn screaming_custom1(_x: &Tensor) -> &'static str {
    "Custom1"
}
#[kernel(op = "every_key_screaming", key = CUSTOM2)]
fn screaming_custom2(_x: &Tensor) -> &'static str {
    "Custom2"
}
#[kernel(op = "every_key_screaming", key = CUSTOM3)]
fn screaming_custom3(_x: &Tensor) -> &'static str {
    "Custom3"
}
#[kernel(op = "every_key_screaming", key = CUSTOM4)]
fn screaming_custom4(_x: &Tensor) -> &'static str {
    "Custom4"
}
#[kernel(op = "every_key_screaming", key = FAKE)]
fn screaming_fake(_x: &Tensor) -> &'static str {
    "Fake"
}
#[kernel(op = "every_key_screaming", key = META)]
fn screaming_meta(_x: &Tensor) -> &'static str {
    "Meta"
}
#[kernel(op = "every_key_screaming", key = WGPU)]
fn screaming_wgpu(_x: &Tensor) -> &'static str {
    "Wgpu"
}
#[kernel(op = "every_key_screaming", key = PRIVATE_USE1)]
fn screaming_private_use1(_x: &Tensor) -> &'static str {
    "PrivateUse1"
}
#[kernel(op = "every_key_screaming", key = PRIVATE_USE2)]
fn screaming_private_use2(_x: &Tensor) -> &'static str {
    "PrivateUse2"
}
#[kernel(op = "every_key_screaming", key = PRIVATE_USE3)]
fn screaming_private_use3(_x: &Tensor) -> &'static str {
    "PrivateUse3"
}
#[kernel(op = "every_key_screaming", key = CPU_SIMD)]
fn screaming_cpu_simd(_x: &Tensor) -> &'static str {
    "CpuSimd"
}
#[kernel(op = "every_key_screaming", key = CPU_NAIVE)]
fn screaming_cpu_naive(_x: &Tensor) -> &'static str {
    "CpuNaive"
}

// ---- keys given as paths to `DispatchKey` constants ----

/// A downstream crate's name for a key.
pub const MY_KEY: DispatchKey = DispatchKey::Custom2;

/// Returns the name of the key whose kernel ran.
#[op(unboxed)]
pub fn by_path(x: &Tensor) -> &'static str;

#[kernel(op = by_path, key = crate::MY_KEY)]
fn path_crate_const(_x: &Tensor) -> &'static str {
    "Custom2"
}
#[kernel(op = by_path, key = switchyard::DispatchKey::Custom3)]
fn path_absolute_variant(_x: &Tensor) -> &'static str {
    "Custom3"
}
#[kernel(op = by_path, key = DispatchKey::Wgpu)]
fn path_imported_enum(_x: &Tensor) -> &'static str {
    "Wgpu"
}
// Another crate's constant (the toy device of the downstream example: `PrivateUse1`).
#[kernel(op = by_path, key = switchyard_example_downstream::TOY)]
fn path_other_crate(_x: &Tensor) -> &'static str {
    "PrivateUse1"
}

// ---- (a) the macro's key list equals the runtime's ----

#[test]
fn expected_list_is_dispatch_key_all() {
    let keys: Vec<DispatchKey> = BUILTIN.iter().chain(&EXPECTED).map(|(k, _)| *k).collect();
    assert_eq!(keys, DispatchKey::ALL, "BUILTIN and EXPECTED are stale");
    for (key, name) in BUILTIN.iter().chain(&EXPECTED) {
        assert_eq!(key.name(), *name);
        assert_eq!(key.is_builtin(), BUILTIN.contains(&(*key, *name)), "{key}");
    }
}

type Redispatch = fn(DispatchKeySet, &Tensor) -> switchyard::Result<&'static str>;

/// Redispatching to each key alone runs that key's kernel; so does redispatching to the key with
/// every lower key added (the highest key wins).
#[track_caller]
fn check_every_key_reaches_its_kernel(op: &str, redispatch: Redispatch) {
    let x = Tensor::vector(&[1.0]);
    for (i, (key, name)) in EXPECTED.iter().enumerate() {
        assert_eq!(redispatch(key.set(), &x), Ok(*name), "{op} at {key}");
        let key_and_below: DispatchKeySet = EXPECTED[i..].iter().map(|(k, _)| *k).collect();
        assert_eq!(
            redispatch(key_and_below, &x),
            Ok(*name),
            "{op} at {key_and_below}"
        );
    }
}

#[track_caller]
fn check_registrations(handle: switchyard::OpHandle, prefix: &str) {
    let registrations = handle.registrations();
    assert_eq!(registrations.len(), EXPECTED.len(), "{registrations:?}");
    let registered: DispatchKeySet = registrations
        .iter()
        .filter_map(|(k, _)| k.runtime())
        .collect();
    assert_eq!(registered, DispatchKeySet::all() - DispatchKeySet::BUILTIN);
    let slots = handle.slots().unwrap();
    assert_eq!(slots.len(), DispatchKey::ALL.len());
    for (key, origin) in slots.into_iter().filter(|(key, _)| !key.is_builtin()) {
        let SlotOrigin::Kernel(meta) = origin else {
            panic!("{}: slot {key} is {origin}", handle.name());
        };
        // `camel_autograd_private_use1` for `AutogradPrivateUse1`, and so on.
        let mut expected = String::from(prefix);
        for (i, c) in key.name().chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                expected.push('_');
            }
            expected.push(c.to_ascii_lowercase());
        }
        assert_eq!(meta.name, expected, "{}: slot {key}", handle.name());
        assert!(
            meta.location.file.ends_with("keys.rs"),
            "{:?}",
            meta.location
        );
    }
}

#[test]
fn camel_case_key_names_reach_every_runtime_key() {
    check_every_key_reaches_its_kernel("every_key", every_key::redispatch);
    check_registrations(every_key::handle(), "camel_");
    assert_eq!(every_key::handle().name(), "keys::every_key");
}

#[test]
fn screaming_case_key_names_reach_every_runtime_key() {
    check_every_key_reaches_its_kernel("every_key_screaming", every_key_screaming::redispatch);
    check_registrations(every_key_screaming::handle(), "screaming_");
    assert_eq!(
        every_key_screaming::handle().name(),
        "keys::every_key_screaming"
    );
}

#[test]
fn keys_given_as_paths() {
    let x = Tensor::vector(&[1.0]);
    let expected = [
        (DispatchKey::Custom2, "Custom2", "path_crate_const"),
        (DispatchKey::Custom3, "Custom3", "path_absolute_variant"),
        (DispatchKey::Wgpu, "Wgpu", "path_imported_enum"),
        (DispatchKey::PrivateUse1, "PrivateUse1", "path_other_crate"),
    ];
    for (key, value, _) in expected {
        assert_eq!(by_path::redispatch(key.set(), &x), Ok(value), "{key}");
    }
    let registrations = by_path::handle().registrations();
    // Sorted by key: lowest first.
    let mut sorted = expected;
    sorted.sort_by_key(|(k, _, _)| *k);
    let summary: Vec<(DispatchKey, &str)> = registrations
        .iter()
        .map(|(k, m)| (k.runtime().unwrap(), m.name))
        .collect();
    let wanted: Vec<(DispatchKey, &str)> = sorted.iter().map(|(k, _, n)| (*k, *n)).collect();
    assert_eq!(summary, wanted);

    // The other keys have nothing: a CPU call is a missing-kernel error naming the op and what exists.
    let error = try_by_path(&x).unwrap_err();
    match error.kind() {
        ErrorKind::MissingKernel {
            op, key, available, ..
        } => {
            assert_eq!(*op, "keys::by_path");
            assert_eq!(*key, DispatchKey::CpuNaive);
            assert_eq!(
                *available,
                DispatchKeySet::CUSTOM2
                    | DispatchKeySet::CUSTOM3
                    | DispatchKeySet::WGPU
                    | DispatchKeySet::PRIVATE_USE1
            );
        }
        other => panic!("expected a missing kernel, got {other:?}"),
    }
    // A redispatch that skips every key with a kernel finds none either.
    assert!(by_path::redispatch(DispatchKey::Custom1.set(), &x).is_err());
}

// ---- (b) thread-local guards ----

#[test]
fn include_tracing_reaches_the_tracing_kernel_and_exclude_wins() {
    let x = Tensor::vector(&[1.0, 2.0]);
    // A CPU tensor carries {CpuSimd, CpuNaive}: the higher one has a kernel here.
    assert_eq!(every_key(&x), "CpuSimd");
    {
        let _tracing = switchyard::include(DispatchKey::Tracing);
        assert_eq!(every_key(&x), "Tracing");
        assert_eq!(every_key_screaming(&x), "Tracing");
        {
            let _no_tracing = switchyard::exclude(DispatchKey::Tracing);
            assert_eq!(every_key(&x), "CpuSimd");
            {
                // Excluded stays excluded even when included again.
                let _again = switchyard::include(DispatchKey::Tracing);
                assert_eq!(every_key(&x), "CpuSimd");
            }
            let _naive = switchyard::exclude(DispatchKey::CpuSimd);
            assert_eq!(every_key(&x), "CpuNaive");
        }
        assert_eq!(every_key(&x), "Tracing");
        {
            // The profiler is above tracing.
            let _profiler = switchyard::include(DispatchKey::Profiler);
            assert_eq!(every_key(&x), "Profiler");
        }
        // `redispatch` ignores the thread-local sets.
        assert_eq!(
            every_key::redispatch(DispatchKeySet::CPU, &x),
            Ok("CpuSimd")
        );
        // Guards are per thread: another thread sees no include.
        std::thread::scope(|scope| {
            let other = scope.spawn(|| every_key(&x));
            assert_eq!(other.join().unwrap(), "CpuSimd");
        });
    }
    // Everything restored.
    assert_eq!(every_key(&x), "CpuSimd");
    assert_eq!(switchyard::local_keys(), switchyard::LocalKeys::default());
}

#[test]
fn exclude_before_include_still_wins() {
    let x = Tensor::vector(&[3.0]);
    let _no_tracing = switchyard::exclude(DispatchKey::Tracing);
    let _tracing = switchyard::include(DispatchKey::Tracing);
    assert_eq!(every_key(&x), "CpuSimd");
    let _both = switchyard::include(DispatchKey::Tracing.set() | DispatchKey::Custom1.set());
    assert_eq!(every_key(&x), "Custom1");
}
