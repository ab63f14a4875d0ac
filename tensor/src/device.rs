//! Devices: where a tensor's data lives.

use std::fmt;

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
}

impl Device {
    /// Every device, in the order of their backend keys' priority.
    pub const ALL: [Device; 5] = [
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
        }
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
        }
    }
}

// Errors name device families (the engine's `DeviceMismatch`, missing kernels) by these names.
// The `PrivateUse` devices are named by the crates that provide them.
switchyard::name_device!(CpuNaive, Device::Cpu.name());
switchyard::name_device!(Wgpu, Device::Wgpu.name());

/// The name the crate that provides the device registered with
/// [`switchyard::name_device!`] (`toy` for `examples/downstream`'s `PrivateUse1`), else
/// [`Device::name`]. Tensor summaries (`Tensor[2]:f32@toy`) and errors print it.
impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match switchyard::device_name(self.keys()) {
            Some(name) => f.write_str(&name),
            None => f.write_str(self.name()),
        }
    }
}
