//! Boxed calls: by handle and by name, with every kind of argument, and bad input as errors.

use switchyard::DType;
use switchyard::FromValue;
use switchyard::ops::full;
use switchyard::{
    Device, DispatchArg, DispatchKeySet, ErrorKind, Stack, Tensor, Value, boxable, call_boxed,
    find_op, kernel, op, op_named,
};
use switchyard_backends as _;

fn tensor(value: &Value) -> Tensor {
    Tensor::from_value(value.clone()).expect("a tensor result")
}

#[test]
fn standard_ops_run_boxed() {
    let x = Tensor::vector(&[1.0, 2.0, 3.0]);
    let y = Tensor::vector(&[4.0, 5.0, 6.0]);
    let mut stack: Stack<'_> = [Value::from(&x), Value::from(&y)].into_iter().collect();
    call_boxed("mul", &mut stack).unwrap();
    assert_eq!(stack.len(), 1);
    assert_eq!(
        tensor(&stack.values()[0]).to_vec::<f32>(),
        [4.0, 10.0, 18.0]
    );

    // A factory: a list, a float and a device; it dispatches on the device.
    let mut stack = Stack::new();
    stack.push(Value::List(vec![Value::Int(2), Value::Int(2)]));
    stack.push(1.5f64);
    stack.push(DType::F32);
    stack.push(Device::Cpu);
    find_op("full").unwrap().call_boxed(&mut stack).unwrap();
    let out = stack.pop().unwrap();
    assert_eq!(tensor(&out).shape(), [2, 2]);
    assert_eq!(
        tensor(&out).to_vec::<f32>(),
        full(&[2, 2], 1.5, DType::F32, Device::Cpu).to_vec::<f32>()
    );
}

/// A user type, boxed through the escape hatch.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub width: usize,
}

impl DispatchArg for Window {
    fn dispatch_keys(&self) -> DispatchKeySet {
        DispatchKeySet::EMPTY
    }
}
boxable!(Window);

#[op(name = "boxed::widen")]
pub fn widen(x: &Tensor, window: Window) -> Window;

#[kernel(op = "widen", key = CpuNaive)]
fn widen_naive(x: &Tensor, window: Window) -> Window {
    Window {
        width: window.width + x.numel(),
    }
}

#[test]
fn user_types_box_through_the_escape_hatch() {
    let x = Tensor::vector(&[1.0, 2.0]);
    assert_eq!(widen(&x, Window { width: 1 }), Window { width: 3 });
    let mut stack = Stack::new();
    stack.push(&x);
    stack.push(Value::custom(Window { width: 5 }, DispatchKeySet::EMPTY));
    widen::handle().call_boxed(&mut stack).unwrap();
    match stack.pop() {
        Some(Value::Custom(custom)) => {
            assert_eq!(custom.downcast_ref::<Window>(), Some(&Window { width: 7 }));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn wrong_arity_is_an_error_naming_the_schema() {
    let mut stack = Stack::new();
    stack.push(Tensor::vector(&[1.0]));
    let err = call_boxed("mul", &mut stack).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::BoxedArity {
                op: "switchyard::mul",
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "op `switchyard::mul`: boxed call with 1 argument(s), but \
         `switchyard::mul(x: Tensor, y: Tensor) -> Tensor` takes 2"
    );
    let mut too_many: Stack<'_> = (0..3).map(|_| Value::from(Tensor::scalar(1.0))).collect();
    let err = call_boxed("mul", &mut too_many).unwrap_err();
    assert!(err.to_string().contains("with 3 argument(s)"), "{err}");
}

#[test]
fn wrong_type_is_an_error_naming_the_argument() {
    let mut stack = Stack::new();
    stack.push(Tensor::vector(&[1.0]));
    stack.push("two");
    let err = call_boxed("mul", &mut stack).unwrap_err();
    assert_eq!(
        err.to_string(),
        "op `switchyard::mul`: boxed `y` has the wrong type: expected Tensor, found str \
         `\"two\"` (schema `switchyard::mul(x: Tensor, y: Tensor) -> Tensor`)"
    );
    // A negative shape entry is out of range for `usize`.
    let mut stack = Stack::new();
    stack.push(Value::List(vec![Value::Int(-2)]));
    stack.push(0.0f64);
    stack.push(DType::F32);
    stack.push(Device::Cpu);
    let err = call_boxed("full", &mut stack).unwrap_err();
    assert!(
        err.to_string().contains(
            "boxed `shape` has the wrong type: expected int in range of usize, found int `-2`"
        ),
        "{err}"
    );
}

#[test]
fn unknown_op_names_similar_ones() {
    let err = call_boxed("mull", &mut Stack::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no op named `mull` is linked into this binary; similar names: switchyard::full, \
         switchyard::mul, switchyard::mul_"
    );
    // (No standard op's name is part of this one: `where` is part of "…anywhere", so such a
    // name gets a list of similar names instead of the hint.)
    let err = op_named("no_such_op_known").unwrap_err();
    assert!(
        err.to_string()
            .contains("`switchyard::dump()` lists every op"),
        "{err}"
    );
}

#[op(name = "boxed::raw", unboxed)]
pub fn raw(x: &Tensor) -> &'static str;

#[kernel(op = "raw", key = CpuNaive)]
fn raw_naive(x: &Tensor) -> &'static str {
    let _ = x;
    "raw"
}

#[test]
fn unboxed_ops_refuse_boxed_calls_and_fallbacks() {
    let x = Tensor::vector(&[1.0]);
    assert_eq!(raw(&x), "raw");
    let mut stack = Stack::new();
    stack.push(&x);
    let err = raw::handle().call_boxed(&mut stack).unwrap_err();
    assert!(
        err.to_string().contains("declared `#[op(unboxed)]`"),
        "{err}"
    );
    // Under a mode, the mode's boxed fallback cannot serve it: an error, not a silent skip.
    let (result, _) = switchyard::trace(|| try_raw(&x));
    let err = result.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Unboxed { key: Some(_), .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("fallback at `BuiltinTrace`"),
        "{err}"
    );
    assert!(
        raw::handle()
            .table_dump()
            .contains("cannot serve an unboxed op")
    );
}

#[test]
fn boxed_to_honours_mixes_devices() {
    // `to` is `#[op(mixes_devices)]`: a CPU tensor and another device in one call is its job.
    let copy: switchyard::ops::to::KernelFn = |_, x, device| {
        assert_eq!(device, switchyard::Device::PrivateUse3);
        Ok(x.clone())
    };
    let _kernel = switchyard::ops::to::register(
        switchyard::DispatchKey::PrivateUse3,
        "to_private_use3",
        copy,
    )
    .unwrap();
    let x = Tensor::vector(&[1.0, 2.0]);
    let typed = switchyard::ops::try_to(&x, switchyard::Device::PrivateUse3).unwrap();
    assert_eq!(typed.to_vec::<f32>(), [1.0, 2.0]);
    let mut stack = Stack::new();
    stack.push(&x);
    stack.push(switchyard::Device::PrivateUse3);
    switchyard::call_boxed("to", &mut stack).unwrap();
    let boxed = stack.pop().expect("`to` left its result");
    assert_eq!(tensor(&boxed).to_vec::<f32>(), [1.0, 2.0]);
}
