//! What `#[kernel(op = …, key = …)]` accepts besides a plain item and key name: an op's `name`
//! string when this file declares that op (the form dumps and errors print), and a
//! `DispatchKey` constant in scope by its bare name.

use switchyard::{DispatchKey, Tensor, kernel, op};
use switchyard_backends as _;

#[op(name = "nc::twice")]
pub fn twice(x: &Tensor) -> Tensor;

// The op's `name` string, not its item `twice`: resolved to the item that declares it.
#[kernel(op = "nc::twice", key = CpuNaive)]
fn twice_naive(x: &Tensor) -> Tensor {
    Tensor::from_fn(x.shape(), |i| 2.0 * x.as_slice::<f32>().unwrap()[i])
}

#[test]
fn an_op_name_string_names_the_item_declared_with_it() {
    assert_eq!(twice(&Tensor::vector(&[1.5])).to_vec::<f32>(), [3.0]);
}

/// Declared without a namespace: `op_references::thrice`.
#[op]
pub fn thrice(x: &Tensor) -> Tensor;

// Its full name, as dumps and errors print it: resolved to the item in this file.
#[kernel(op = "op_references::thrice", key = CpuNaive)]
fn thrice_naive(x: &Tensor) -> Tensor {
    Tensor::from_fn(x.shape(), |i| 3.0 * x.as_slice::<f32>().unwrap()[i])
}

// A standard op's full name is its item in `switchyard::ops`.
#[kernel(op = "switchyard::mul", key = Custom1)]
fn mul_custom(x: &Tensor, _y: &Tensor) -> Tensor {
    x.clone()
}

#[test]
fn a_full_op_name_names_the_item_declared_with_it() {
    assert_eq!(thrice::handle().name(), "op_references::thrice");
    assert_eq!(thrice(&Tensor::vector(&[1.5])).to_vec::<f32>(), [4.5]);
    let registrations = switchyard::ops::mul::handle().registrations();
    assert!(
        registrations
            .iter()
            .any(|(key, meta)| *key == DispatchKey::Custom1 && meta.name == "mul_custom"),
        "{registrations:?}"
    );
}

const HOST: DispatchKey = DispatchKey::PrivateUse1;

#[op(name = "nc::host_only")]
pub fn host_only(x: &Tensor) -> Tensor;

// A constant in scope, by its bare name (not only `self::HOST`).
#[kernel(op = host_only, key = HOST)]
fn host_only_kernel(x: &Tensor) -> Tensor {
    x.clone()
}

#[test]
fn a_key_constant_in_scope_is_a_key() {
    let registrations = host_only::handle().registrations();
    assert!(
        registrations
            .iter()
            .any(|(key, meta)| *key == HOST && meta.name == "host_only_kernel"),
        "{registrations:?}"
    );
}
