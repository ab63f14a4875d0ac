//! How tensors and devices meet the engine: their dispatch keys and their boxed forms.

use std::fmt;
use std::sync::Arc;

use switchyard::boxing::{SharedTensor, TensorValue};
use switchyard::{DispatchArg, DispatchKeySet};

use crate::device::Device;
use crate::storage::header::Header;
use crate::tensor::{Tensor, TensorInner};

#[diagnostic::do_not_recommend]
impl DispatchArg for Tensor {
    #[inline(always)]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.keys()
    }
}

/// A factory's device argument selects the backend, like a tensor on that device would.
#[diagnostic::do_not_recommend]
impl DispatchArg for Device {
    #[inline(always)]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.keys()
    }
}

impl TensorValue for TensorInner {
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.keys
    }

    /// `Tensor[2, 3]:f32@cpu`.
    fn summary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dtype = crate::user_dtype::dtype_label(self.keys, self.dtype);
        write!(f, "Tensor{:?}:{dtype}@{}", self.sizes, self.device)
    }
}

/// A tensor boxes as its shared inner value: one reference count, no allocation (and none at all
/// when a stack only borrows it).
impl SharedTensor for Tensor {
    type Shared = TensorInner;

    #[inline]
    fn shared(&self) -> &Arc<TensorInner> {
        self.inner.lend_arc()
    }

    #[inline]
    fn into_shared(self) -> Arc<TensorInner> {
        self.inner.into_arc()
    }

    #[inline]
    fn from_shared(shared: Arc<TensorInner>) -> Tensor {
        Tensor {
            inner: Header::from_arc(shared),
        }
    }
}

switchyard::boxable_tensor!(Tensor);

// A device boxes as a custom value that carries its keys, as any user type would.
switchyard::boxable!(Device);

#[cfg(test)]
mod tests {
    use switchyard::{FromValue, ToValue, Value};

    use super::*;

    #[test]
    fn tensors_and_devices_carry_their_keys() {
        let cpu = Tensor::scalar(1.0);
        let f32_cpu = DispatchKeySet::CPU | switchyard::DType::F32.key_bit();
        assert_eq!(<&Tensor as DispatchArg>::dispatch_keys(&&cpu), f32_cpu);
        let f64_cpu = Tensor::from_scalar(1.0f64).unwrap();
        assert_eq!(
            [cpu.clone(), f64_cpu].as_slice().dispatch_keys(),
            f32_cpu | switchyard::DType::F64.key_bit(),
            "a call carries every argument's dtype bit"
        );
        assert_eq!(Device::Wgpu.dispatch_keys(), DispatchKeySet::WGPU);
        assert_eq!(cpu.to_value().dispatch_keys(), f32_cpu);
        assert_eq!(
            Device::Wgpu.to_value().dispatch_keys(),
            DispatchKeySet::WGPU
        );
    }

    #[test]
    fn a_boxed_tensor_is_the_same_tensor() {
        let t = Tensor::vector(&[1.0, 2.0]);
        let boxed = t.to_value();
        assert_eq!(boxed.to_string(), "Tensor[2]:f32@cpu");
        let back = Tensor::from_value(boxed.clone()).unwrap();
        assert!(back.same_storage(&t));
        assert!(
            boxed
                .as_tensor()
                .unwrap()
                .same(&Value::from(&t).as_tensor().unwrap().clone())
        );
        let err = Tensor::from_value(Value::Str("x".into())).unwrap_err();
        assert_eq!(err.to_string(), "expected Tensor, found str `\"x\"`");
        assert_eq!(Device::from_value(Device::Cpu.to_value()), Ok(Device::Cpu));
    }

    #[test]
    fn tensor_and_its_result_are_one_and_two_pointers() {
        assert_eq!(size_of::<Tensor>(), size_of::<usize>());
        assert_eq!(
            size_of::<Result<Tensor, switchyard::DispatchError>>(),
            2 * size_of::<usize>(),
            "a (tag, pointer) pair, returned in two registers"
        );
    }
}
