//! The autograd pairing rule (ARCHITECTURE.md, "Autograd keys pair with the backend"): a call
//! consults only the autograd key paired with its highest backend key, whatever autograd keys
//! the arguments or the thread's include set contribute. (The model-based test covers the rule
//! over random registrations; these are the cases the issue reported, by name.)

use switchyard::ops::{mul, sum};
use switchyard::{
    DispatchArg, DispatchKey, DispatchKeySet, ErrorKind, Tensor, boxable, include, kernel, op,
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

/// Which kernel ran: the index of the key it was registered at.
#[op(name = "pairing::which")]
pub fn which(x: &Keys) -> i64;

macro_rules! answer_at {
    ($($name:ident => $key:ident),* $(,)?) => {$(
        #[kernel(op = which, key = $key)]
        fn $name(_: &Keys) -> i64 {
            DispatchKey::$key.index() as i64
        }
    )*};
}

answer_at! {
    at_autograd_wgpu => AutogradWgpu,
    at_autograd_private_use1 => AutogradPrivateUse1,
    at_autograd_cpu => AutogradCpu,
    at_wgpu => Wgpu,
    at_private_use1 => PrivateUse1,
    at_cpu_naive => CpuNaive,
}

/// Two arguments on different devices, for an op that allows it (a copy between devices does).
#[op(name = "pairing::across", mixes_devices)]
pub fn across(x: &Keys, y: &Keys) -> i64;

/// The case: the GPU's autograd slot is a fallthrough for this op, the private device's
/// has a kernel; a call with a GPU and a private-device argument, both requiring grad, must not
/// run the private device's autograd kernel: its highest backend is the GPU.
#[kernel(op = across, key = AutogradPrivateUse1)]
fn across_autograd_private_use1(_: &Keys, _: &Keys) -> i64 {
    at(DispatchKey::AutogradPrivateUse1)
}

#[kernel(op = across, key = Wgpu)]
fn across_wgpu(_: &Keys, _: &Keys) -> i64 {
    at(DispatchKey::Wgpu)
}

/// The index `which` answers for kernels at `key`.
fn at(key: DispatchKey) -> i64 {
    key.index() as i64
}

const CPU_GRAD: DispatchKeySet = DispatchKeySet::CPU.union(DispatchKeySet::AUTOGRAD_CPU);

#[test]
fn including_every_autograd_key_consults_the_one_paired_with_the_call_backend() {
    let _all = include(DispatchKeySet::AUTOGRAD);
    assert_eq!(
        which(&Keys(DispatchKeySet::CPU)),
        at(DispatchKey::AutogradCpu)
    );
    assert_eq!(
        which(&Keys(DispatchKeySet::WGPU)),
        at(DispatchKey::AutogradWgpu)
    );
    assert_eq!(
        which(&Keys(DispatchKeySet::PRIVATE_USE1)),
        at(DispatchKey::AutogradPrivateUse1)
    );
    // Boxed calls follow the same rule.
    let mut stack = switchyard::Stack::new();
    stack.push(switchyard::Value::custom(
        Keys(DispatchKeySet::CPU),
        DispatchKeySet::CPU,
    ));
    which::handle().call_boxed(&mut stack).unwrap();
    assert!(
        matches!(stack.pop(), Some(switchyard::Value::Int(i)) if i == at(DispatchKey::AutogradCpu))
    );
}

#[test]
fn an_autograd_key_of_another_backend_is_ignored() {
    // An argument (a foreign tensor type, say) reporting the GPU's autograd key on the CPU: the
    // CPU kernel runs, not the GPU's autograd slot.
    let odd = Keys(DispatchKeySet::CPU | DispatchKeySet::AUTOGRAD_WGPU);
    assert_eq!(which(&odd), at(DispatchKey::CpuNaive));
    let _wgpu_grad = include(DispatchKey::AutogradWgpu);
    assert_eq!(which(&Keys(DispatchKeySet::CPU)), at(DispatchKey::CpuNaive));
    // With the CPU's own autograd key too, that one is consulted.
    assert_eq!(which(&Keys(CPU_GRAD)), at(DispatchKey::AutogradCpu));
}

#[test]
fn a_lower_backends_autograd_slot_never_serves_a_call_on_a_higher_backend() {
    let gpu = Keys(DispatchKeySet::WGPU | DispatchKeySet::AUTOGRAD_WGPU);
    let toy = Keys(DispatchKeySet::PRIVATE_USE1 | DispatchKeySet::AUTOGRAD_PRIVATE_USE1);
    // Without a kernel at the GPU's autograd slot, the call says so (it is the slot consulted).
    let err = try_across(&gpu, &toy).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::MissingKernel {
                key: DispatchKey::AutogradWgpu,
                ..
            }
        ),
        "{err}"
    );
    // With that slot a fallthrough, the call continues to the GPU kernel.
    let _skip = across::handle()
        .register_fallthrough(DispatchKey::AutogradWgpu)
        .unwrap();
    assert_eq!(across(&gpu, &toy), at(DispatchKey::Wgpu));
    assert_eq!(across(&toy, &gpu), at(DispatchKey::Wgpu));
}

#[test]
fn excluding_the_paired_autograd_key_wins_over_any_included_one() {
    let _all = include(DispatchKeySet::AUTOGRAD);
    let _no_cpu_grad = switchyard::exclude(DispatchKey::AutogradCpu);
    assert_eq!(which(&Keys(CPU_GRAD)), at(DispatchKey::CpuNaive));
    let _no_grad = switchyard::exclude(DispatchKeySet::AUTOGRAD);
    assert_eq!(which(&Keys(DispatchKeySet::WGPU)), at(DispatchKey::Wgpu));
}

#[test]
fn without_a_backend_key_no_autograd_key_is_consulted() {
    let err = try_which(&Keys(DispatchKeySet::AUTOGRAD_CPU)).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::NoDispatchKeys { .. }),
        "{err}"
    );
}

/// With real tensors: a CPU tensor that requires grad, under an include of the GPU's autograd
/// key, is differentiated by the CPU's autograd slot (the `Autograd` alias kernel) and gets its
/// gradient on the CPU; a CPU tensor that does not require grad records nothing.
#[test]
fn a_cpu_tensor_that_requires_grad_meets_the_cpu_autograd_slot_under_any_include() {
    let mut x = Tensor::vector(&[1.0, 2.0]);
    x.requires_grad_(true);
    let _wgpu_grad = include(DispatchKey::AutogradWgpu);
    let y = sum(&mul(&x, &x));
    assert_eq!(y.grad_fn(), Some("sum"));
    y.backward();
    assert_eq!(x.grad().unwrap().to_vec::<f32>(), [2.0, 4.0]);
    let plain = Tensor::vector(&[1.0, 2.0]);
    assert!(!mul(&plain, &plain).requires_grad());
}

/// A tensor that requires grad carries the autograd key the engine pairs with its device.
#[test]
fn every_device_carries_the_autograd_key_paired_with_its_backend() {
    use switchyard::Device;
    for device in Device::ALL {
        let autograd = device.autograd_keys();
        let key = autograd.highest().expect("one autograd key");
        assert_eq!(autograd, key.set(), "{device}: exactly one key");
        assert_eq!(
            key.autograd_backends(),
            device.keys(),
            "{device}: {key} pairs with the device's backend keys"
        );
    }
}
