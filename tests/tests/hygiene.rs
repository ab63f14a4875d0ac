//! Generated code neither captures nor shadows the user's names: an op parameter
//! named `keys`, user types named like the generated items (`K`, `Signature`, `KernelFn`,
//! `Kernel`, `OpKernel`), a kernel function named `lift`, `self::`/`super::` paths in an op's
//! signature, and two ops of one name declared on the same line of two files.

use switchyard::{
    DispatchArg, DispatchKeySet, FromValue, Stack, Tensor, Value, boxable, call_boxed, kernel, op,
};
use switchyard_backends as _;

/// Declares boxable user types that carry one number and contribute no dispatch keys.
macro_rules! user_types {
    ($($name:ident),*) => {$(
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name(pub f32);

        impl DispatchArg for $name {
            fn dispatch_keys(&self) -> DispatchKeySet {
                DispatchKeySet::EMPTY
            }
        }
        boxable!($name);
    )*};
}

user_types!(K, Signature, KernelFn, Kernel, OpKernel, Scale);

fn first(x: &Tensor) -> f32 {
    x.as_slice::<f32>().expect("a CPU tensor")[0]
}

// ---- a parameter named `keys` ----

#[op(name = "hygiene::shift")]
pub fn shift(x: &Tensor, keys: f32) -> f32;

#[kernel(op = shift, key = CpuNaive)]
fn shift_naive(x: &Tensor, keys: f32) -> f32 {
    first(x) + keys
}

#[test]
fn a_parameter_named_keys_is_the_users() {
    let x = Tensor::vector(&[1.0]);
    assert_eq!(shift(&x, 10.0), 11.0);
    assert_eq!(
        shift::redispatch(DispatchKeySet::CPU_NAIVE, &x, 5.0).unwrap(),
        6.0
    );
    let mut stack = Stack::from(vec![Value::from(x), Value::Float(2.0)]);
    call_boxed("hygiene::shift", &mut stack).unwrap();
    assert_eq!(f32::from_value(stack.pop().unwrap()), Ok(3.0));
}

// ---- user types named like generated items ----

#[op(name = "hygiene::weigh")]
pub fn weigh(x: &Tensor, k: K, signature: Signature, kernel_fn: KernelFn) -> Signature;

#[kernel(op = weigh, key = CpuNaive)]
fn weigh_naive(x: &Tensor, k: K, signature: Signature, kernel_fn: KernelFn) -> Signature {
    Signature(first(x) + k.0 * signature.0 * kernel_fn.0)
}

#[test]
fn user_types_named_like_generated_items_keep_their_meaning() {
    let x = Tensor::vector(&[1.0]);
    assert_eq!(
        weigh(&x, K(2.0), Signature(3.0), KernelFn(4.0)),
        Signature(25.0)
    );
    // The module's public names are still the generated ones.
    let plain: weigh::Signature = weigh_naive;
    assert_eq!(
        plain(&x, K(1.0), Signature(1.0), KernelFn(1.0)),
        Signature(2.0)
    );
    let mut stack = Stack::new();
    stack.push(x);
    for value in [
        K(1.0).to_value(),
        Signature(2.0).to_value(),
        KernelFn(3.0).to_value(),
    ] {
        stack.push(value);
    }
    weigh::handle().call_boxed(&mut stack).unwrap();
    assert_eq!(
        Signature::from_value(stack.pop().unwrap()),
        Ok(Signature(7.0))
    );
}

use switchyard::ToValue;

// ---- kernel-side names: a kernel called `lift`, an entry taking `Kernel` and `OpKernel` ----

#[op(name = "hygiene::mix")]
pub fn mix(x: &Tensor, kernel: Kernel, op_kernel: OpKernel) -> f32;

#[kernel(op = mix, key = CpuNaive)]
fn lift(x: &Tensor, kernel: Kernel, op_kernel: OpKernel) -> f32 {
    first(x) + kernel.0 - op_kernel.0
}

#[cfg(target_arch = "x86_64")]
#[kernel(op = mix, key = CpuSimd, cpu = "sse2")]
#[target_feature(enable = "sse2")]
fn mix_sse2(x: &Tensor, kernel: Kernel, op_kernel: OpKernel) -> f32 {
    lift(x, kernel, op_kernel)
}

#[test]
fn kernel_names_do_not_capture_the_users() {
    let x = Tensor::vector(&[1.0]);
    assert_eq!(mix(&x, Kernel(5.0), OpKernel(2.0)), 4.0);
    let naive = mix::redispatch(DispatchKeySet::CPU_NAIVE, &x, Kernel(1.0), OpKernel(1.0));
    assert_eq!(naive.unwrap(), 1.0);
    let names: Vec<&str> = mix::handle()
        .registrations()
        .iter()
        .map(|(_, meta)| meta.name)
        .collect();
    assert!(names.contains(&"lift"), "{names:?}");
}

// ---- `self::` and `super::` in a nested module's op ----

/// An op one module down: its `super::Scale` is the test's `Scale`, its `self::Offset` this
/// module's.
mod nested {
    use switchyard::{Tensor, kernel, op};

    #[derive(Clone, Debug, PartialEq)]
    pub struct Offset(pub f32);

    impl switchyard::DispatchArg for Offset {
        fn dispatch_keys(&self) -> switchyard::DispatchKeySet {
            switchyard::DispatchKeySet::EMPTY
        }
    }
    switchyard::boxable!(Offset);

    #[op(name = "hygiene::affine")]
    pub fn affine(x: &Tensor, scale: super::Scale, offset: self::Offset) -> self::Offset;

    #[kernel(op = affine, key = CpuNaive)]
    fn affine_naive(x: &Tensor, scale: super::Scale, offset: self::Offset) -> self::Offset {
        Offset(super::first(x) * scale.0 + offset.0)
    }
}

#[test]
fn self_and_super_paths_mean_what_they_mean_at_the_op() {
    let x = Tensor::vector(&[2.0]);
    let out = nested::affine(&x, Scale(3.0), nested::Offset(1.0));
    assert_eq!(out, nested::Offset(7.0));
    assert_eq!(
        nested::affine::handle().schema(),
        "hygiene::affine(x: Tensor, scale: Scale, offset: Offset) -> Offset"
    );
}

// ---- two ops of one name, on the same line and column of two files ----

#[path = "hygiene/twin_a.rs"]
mod twin_a;
#[path = "hygiene/twin_b.rs"]
mod twin_b;

#[test]
fn ops_of_one_name_on_one_line_of_two_files_are_distinct() {
    let x = Tensor::vector(&[10.0]);
    assert_eq!(twin_a::twin(&x), 11.0);
    assert_eq!(twin_b::twin(&x), 12.0);
    assert_eq!(twin_a::twin::handle().registrations().len(), 1);
    assert_eq!(twin_b::twin::handle().registrations().len(), 1);
}
