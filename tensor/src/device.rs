//! Devices: where a tensor's data lives.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use switchyard::DispatchKeySet;

/// Where a tensor's data lives. A device decides the backend keys a tensor carries.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum Device {
    /// Host memory; served by the SIMD backend with the naive backend beneath it.
    Cpu,
    /// A GPU through `wgpu`.
    Wgpu,
    /// A downstream backend on [`switchyard::DispatchKey::PrivateUse1`].
    PrivateUse1,
    /// A downstream backend on [`switchyard::DispatchKey::PrivateUse2`].
    PrivateUse2,
    /// A downstream backend on [`switchyard::DispatchKey::PrivateUse3`].
    PrivateUse3,
    /// No data at all: a meta tensor has a shape, dtype and strides, and ops on it compute the
    /// result's (with the errors the real kernels give) without touching memory. See
    /// [`Tensor::empty_meta`](crate::Tensor::empty_meta) and [`fake`](crate::fake).
    Meta,
}

impl Device {
    /// Every device, in the order of their backend keys' priority (`Device::slot` is the place
    /// of each).
    pub const ALL: [Device; 6] = [
        Device::Meta,
        Device::Wgpu,
        Device::PrivateUse1,
        Device::PrivateUse2,
        Device::PrivateUse3,
        Device::Cpu,
    ];

    /// The backend keys a tensor on this device carries (its *device family*).
    #[inline(always)]
    pub const fn keys(self) -> DispatchKeySet {
        match self {
            Device::Cpu => DispatchKeySet::CPU,
            Device::Wgpu => DispatchKeySet::WGPU,
            Device::PrivateUse1 => DispatchKeySet::PRIVATE_USE1,
            Device::PrivateUse2 => DispatchKeySet::PRIVATE_USE2,
            Device::PrivateUse3 => DispatchKeySet::PRIVATE_USE3,
            Device::Meta => DispatchKeySet::META,
        }
    }

    /// The autograd key a tensor on this device carries while it requires grad: the one the
    /// engine pairs with [`Device::keys`] (`AutogradCpu` for the CPU, …), taken from the
    /// engine's pairing so that the two never disagree.
    #[inline]
    pub fn autograd_keys(self) -> DispatchKeySet {
        (self.keys() | DispatchKeySet::AUTOGRAD)
            .with_paired_autograd()
            .intersection(DispatchKeySet::AUTOGRAD)
    }

    /// The devices whose families meet `keys`, highest priority first.
    pub fn in_keys(keys: DispatchKeySet) -> impl Iterator<Item = Device> {
        Device::ALL
            .into_iter()
            .filter(move |d| d.keys().intersects(keys))
    }

    /// The device's built-in name (`privateuse1` for a downstream device);
    /// [`Display`](fmt::Display) prints the name its crate registered instead, when it did.
    pub const fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Wgpu => "wgpu",
            Device::PrivateUse1 => "privateuse1",
            Device::PrivateUse2 => "privateuse2",
            Device::PrivateUse3 => "privateuse3",
            Device::Meta => "meta",
        }
    }
}

// Errors name device families (the engine's `DeviceMismatch`, missing kernels) by these names.
// The `PrivateUse` devices are named by the crates that provide them.
switchyard::name_device!(CpuNaive, Device::Cpu.name());
switchyard::name_device!(Wgpu, Device::Wgpu.name());
switchyard::name_device!(Meta, Device::Meta.name());

/// The name the crate that provides the device registered with
/// [`switchyard::name_device!`] (`toy` for `examples/downstream`'s `PrivateUse1`), else
/// [`Device::name`]. Tensor summaries (`Tensor[2]:f32@toy`) and errors print it.
impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

// `Device::slot` is each device's place in `Device::ALL`.
const _: () = {
    let mut i = 0;
    while i < Device::ALL.len() {
        assert!(Device::ALL[i].slot() == i);
        i += 1;
    }
};

impl Device {
    /// Its place in [`Device::ALL`]: the index of per-device tables (names, fake-mode memory,
    /// autocast dtypes). An exhaustive match, so a new device must get a slot.
    pub(crate) const fn slot(self) -> usize {
        match self {
            Device::Meta => 0,
            Device::Wgpu => 1,
            Device::PrivateUse1 => 2,
            Device::PrivateUse2 => 3,
            Device::PrivateUse3 => 4,
            Device::Cpu => 5,
        }
    }

    /// What `Display` prints, looked up once per device: names are registered at link time
    /// (`name_device!` statics), so they never change while the program runs, and tensor
    /// summaries print this on every traced or profiled call.
    fn display_name(self) -> &'static str {
        static NAMES: [OnceLock<Cow<'static, str>>; Device::ALL.len()] =
            [const { OnceLock::new() }; Device::ALL.len()];
        NAMES[self.slot()].get_or_init(|| {
            switchyard::device_name(self.keys()).unwrap_or(Cow::Borrowed(self.name()))
        })
    }
}
