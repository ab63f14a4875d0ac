//! The fallback at `Fake`: every op on fake tensors runs on their meta twins, and its results
//! come back as fake tensors of the device a real run would have put them on.

use switchyard::{
    DTypeColumn, DispatchError, DispatchKey, DispatchKeySet, FromValue, OpHandle, SlotOrigin,
    Stack, ToValue, Value, fallback,
};

use super::storage::{MetaStorage, charging};
use crate::device::Device;
use crate::storage::Holder;
use crate::tensor::Tensor;

/// One op on fake tensors (or, inside a fake mode, on any tensors).
///
/// An op that the device would run as its body (a composite such as `softmax` or `sub_`)
/// decomposes: the body runs on the fake tensors and each op it calls comes back here, as
/// PyTorch's fake tensors see composite ops decomposed. Any other op runs on meta tensors:
/// arguments become meta twins (a fake tensor's shares its storage; a real tensor's is a meta
/// tensor of its layout, charged nothing: its memory exists already), `Device` arguments become
/// `Device::Meta`, the op runs at the meta backend (its meta kernel, or its body there) with the
/// layers above this key excluded (modes, traces and autograd see the fake op, never the meta
/// computation inside it), and its tensor results become fake tensors of the device a real run
/// would have used: a `Device` argument's (factories, `to`), else the first fake or real tensor
/// argument's. A result that is one of the twins is the argument it stands for (an op that
/// returns its input, a written `&mut` argument).
#[fallback(key = Fake)]
fn fake_fallback(
    op: &OpHandle,
    keys: DispatchKeySet,
    stack: &mut Stack<'_>,
) -> Result<(), DispatchError> {
    let below = keys.below(DispatchKey::Fake);
    if decomposes(op, below) {
        return op.redispatch_boxed(below, stack);
    }
    let start = stack.len().checked_sub(op.arity()).ok_or_else(|| {
        DispatchError::kernel(
            op.name(),
            format!(
                "the fake-tensor fallback found {} values on the stack for an op of {} arguments",
                stack.len(),
                op.arity()
            ),
        )
    })?;
    let mut twins = Twins::default();
    let mut device = None;
    for value in &mut stack.values_mut()[start..] {
        twins.replace(value, &mut device);
    }
    let device = device.or(twins.first_device).unwrap_or(Device::Meta);
    let meta_keys = below.difference(DispatchKeySet::BACKENDS) | DispatchKeySet::META;
    let account = super::current_account().map(|account| (account, device));
    charging(account, || {
        let _hidden = switchyard::exclude(ABOVE_FAKE);
        op.redispatch_boxed(meta_keys, stack)
    })?;
    for value in &mut stack.values_mut()[start..] {
        twins.restore(value, device);
    }
    Ok(())
}

/// Whether the call's device runs `op` as its body: the first slot of the call's backend keys
/// (highest first) that does not fall through is the composite.
fn decomposes(op: &OpHandle, keys: DispatchKeySet) -> bool {
    let backends = keys.intersection(DispatchKeySet::BACKENDS);
    let Ok(slots) = op.slots_in(DTypeColumn::of_keys(keys)) else {
        return false;
    };
    slots
        .iter()
        .filter(|(key, _)| backends.has(*key))
        .map(|(_, origin)| origin)
        .find(|origin| !matches!(origin, SlotOrigin::Fallthrough))
        .is_some_and(|origin| matches!(origin, SlotOrigin::Composite))
}

/// Every key above `Fake`: the layers a fake op hides its meta computation from.
const ABOVE_FAKE: DispatchKeySet = DispatchKeySet::from_bits_retain(
    DispatchKeySet::all().bits() & !((DispatchKeySet::FAKE.bits() << 1) - 1),
);

/// The meta twins made for one call, and the arguments they stand for.
#[derive(Default)]
struct Twins {
    made: Vec<(Tensor, Tensor)>,
    /// The device of the first fake or real tensor argument.
    first_device: Option<Device>,
}

impl Twins {
    /// Replaces a tensor by its meta twin and a device by `Device::Meta` (noting it in
    /// `device`), inside lists too.
    fn replace(&mut self, value: &mut Value, device: &mut Option<Device>) {
        match value {
            Value::Tensor(_) => {
                // Another library's tensor is left as it is.
                let Ok(tensor) = Tensor::from_value(value.clone()) else {
                    return;
                };
                if tensor.device() == Device::Meta {
                    return;
                }
                self.first_device.get_or_insert(tensor.device());
                let twin = meta_twin(&tensor);
                *value = twin.to_value();
                self.made.push((twin, tensor));
            }
            Value::List(values) | Value::Tuple(values) => {
                for value in values {
                    self.replace(value, device);
                }
            }
            Value::Custom(custom) => {
                if let Some(d) = custom.downcast_ref::<Device>() {
                    *device = Some(*d);
                    *value = Device::Meta.to_value();
                }
            }
            _ => {}
        }
    }

    /// Turns a meta result back into what a real run would have: the argument a twin stands
    /// for, or a fake tensor on `device`.
    fn restore(&self, value: &mut Value, device: Device) {
        match value {
            Value::Tensor(_) => {
                let Ok(tensor) = Tensor::from_value(value.clone()) else {
                    return;
                };
                if tensor.device() != Device::Meta || device == Device::Meta {
                    return;
                }
                *value = self.original_of(&tensor, device).to_value();
            }
            Value::List(values) | Value::Tuple(values) => {
                for value in values {
                    self.restore(value, device);
                }
            }
            _ => {}
        }
    }

    fn original_of(&self, result: &Tensor, device: Device) -> Tensor {
        for (twin, original) in &self.made {
            if result.same(twin) && original.device() == device {
                return original.clone();
            }
        }
        // A result on another device than an argument whose storage it shares (`to` of a
        // fake tensor): a real run would have copied it, so it gets a storage of its own.
        let moved = self
            .made
            .iter()
            .any(|(twin, original)| result.same_storage(twin) && original.device() != device);
        result.as_fake(device, moved)
    }
}

/// The meta tensor standing for `tensor`: a fake tensor's shares its storage (writes count its
/// versions); a real tensor's has a storage of its own, as long as the real one, charged nothing.
fn meta_twin(tensor: &Tensor) -> Tensor {
    let holder = if tensor.is_fake() {
        Holder::Of(tensor.storage().clone())
    } else {
        Holder::from_backend(Box::new(MetaStorage::uncharged(
            tensor.dtype(),
            tensor.storage().len(),
        )))
    };
    tensor.relabeled(holder, Device::Meta, DispatchKeySet::META)
}

impl Tensor {
    /// This meta tensor as a fake tensor on `device`: the same storage, or (`own_storage`) a new
    /// one, charged to the current fake mode.
    fn as_fake(&self, device: Device, own_storage: bool) -> Tensor {
        let holder = if own_storage {
            let storage = charging(
                super::current_account().map(|account| (account, device)),
                || MetaStorage::new(self.dtype(), self.storage().len()),
            );
            Holder::from_backend(Box::new(storage))
        } else {
            Holder::Of(self.storage().clone())
        };
        self.relabeled(holder, device, device.keys() | DispatchKeySet::FAKE)
    }
}
