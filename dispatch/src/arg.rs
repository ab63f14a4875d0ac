//! Which arguments contribute dispatch keys.

use crate::dtype::DType;
use crate::key::DispatchKeySet;

/// A type that may be an argument of an op. Tensors and devices contribute their dispatch keys;
/// scalars and strings contribute none.
///
/// **What the keys mean.** A value's backend keys say which device it is on. The engine derives
/// *device families* from them ([`crate::families`]): the CPU's two keys, `CpuSimd` and
/// `CpuNaive`, are one family (a value may report either or both; a tensor that reports both gets
/// `CpuSimd` kernels with `CpuNaive` beneath), every other backend key is a family of its own. A
/// call whose arguments meet two families fails with `DeviceMismatch`, unless its op is
/// `#[op(mixes_devices)]`. Functionality keys (autograd, modes, `Custom1..4`) may be added freely.
///
/// Every parameter of an `#[op]` must implement this trait; that is checked at compile time, so a
/// type that the dispatcher would silently ignore cannot slip in.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of an op",
    label = "not a dispatch argument",
    note = "op parameters implement `switchyard::DispatchArg`: tensors and `Device` contribute \
            dispatch keys, scalars and strings contribute none; implement it for your type \
            (return `DispatchKeySet::EMPTY` if it carries no device)"
)]
pub trait DispatchArg {
    /// The keys this argument adds to the call's key set.
    fn dispatch_keys(&self) -> DispatchKeySet;
}

#[diagnostic::do_not_recommend]
impl<T: DispatchArg + ?Sized> DispatchArg for &T {
    #[inline(always)]
    fn dispatch_keys(&self) -> DispatchKeySet {
        (**self).dispatch_keys()
    }
}

/// A written argument (`x: &mut Tensor`) contributes its value's keys, as `&T` does.
#[diagnostic::do_not_recommend]
impl<T: DispatchArg + ?Sized> DispatchArg for &mut T {
    #[inline(always)]
    fn dispatch_keys(&self) -> DispatchKeySet {
        (**self).dispatch_keys()
    }
}

#[diagnostic::do_not_recommend]
impl<T: DispatchArg> DispatchArg for Option<T> {
    #[inline(always)]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.as_ref()
            .map_or(DispatchKeySet::EMPTY, T::dispatch_keys)
    }
}

#[diagnostic::do_not_recommend]
impl<T: DispatchArg> DispatchArg for [T] {
    #[inline]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.iter().fold(DispatchKeySet::EMPTY, |keys, item| {
            keys | item.dispatch_keys()
        })
    }
}

#[diagnostic::do_not_recommend]
impl<T: DispatchArg, const N: usize> DispatchArg for [T; N] {
    #[inline]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.as_slice().dispatch_keys()
    }
}

#[diagnostic::do_not_recommend]
impl<T: DispatchArg> DispatchArg for Vec<T> {
    #[inline]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.as_slice().dispatch_keys()
    }
}

macro_rules! keyless {
    ($($ty:ty),* $(,)?) => {$(
        /// Carries no device, so contributes no key.
        #[diagnostic::do_not_recommend]
        impl DispatchArg for $ty {
            #[inline(always)]
            fn dispatch_keys(&self) -> DispatchKeySet {
                DispatchKeySet::EMPTY
            }
        }
    )*};
}

keyless!(
    f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, char, str, String
);

/// A dtype argument (a factory's `full(…, DType::F64, …)`) selects the dtype column, as a tensor
/// of that dtype would.
#[diagnostic::do_not_recommend]
impl DispatchArg for DType {
    #[inline(always)]
    fn dispatch_keys(&self) -> DispatchKeySet {
        self.key_bit()
    }
}

// A dtype boxes as a custom value that carries its bit.
crate::boxable!(DType);

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for a tensor: a value on a device.
    struct OnDevice(DispatchKeySet);
    impl DispatchArg for OnDevice {
        fn dispatch_keys(&self) -> DispatchKeySet {
            self.0
        }
    }

    #[test]
    fn containers_union_their_items() {
        let cpu = OnDevice(DispatchKeySet::CPU);
        let gpu = OnDevice(DispatchKeySet::WGPU);
        assert_eq!(
            <&OnDevice as DispatchArg>::dispatch_keys(&&cpu),
            DispatchKeySet::CPU
        );
        let mut gpu_mut = OnDevice(DispatchKeySet::WGPU);
        assert_eq!(
            <&mut OnDevice as DispatchArg>::dispatch_keys(&&mut gpu_mut),
            DispatchKeySet::WGPU
        );
        assert_eq!(Some(&cpu).dispatch_keys(), DispatchKeySet::CPU);
        assert_eq!(None::<&OnDevice>.dispatch_keys(), DispatchKeySet::EMPTY);
        assert_eq!(
            [&cpu, &gpu].as_slice().dispatch_keys(),
            DispatchKeySet::CPU | DispatchKeySet::WGPU
        );
        assert_eq!(2.0f32.dispatch_keys(), DispatchKeySet::EMPTY);
        assert_eq!("name".dispatch_keys(), DispatchKeySet::EMPTY);
        assert_eq!(
            [1usize, 2].as_slice().dispatch_keys(),
            DispatchKeySet::EMPTY
        );
    }
}
