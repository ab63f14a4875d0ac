//! What a fake run would have allocated: per device, the bytes live now, their peak and their
//! total, counted as each fake storage is made and dropped.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use switchyard::DType;

use crate::device::Device;

/// The bytes a real run would have held on one device.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct DeviceBytes {
    /// Held by the fake tensors alive now.
    pub live: usize,
    /// The most `live` has been.
    pub peak: usize,
    /// Every allocation added up (what a run without reuse would ask for).
    pub total: usize,
    /// Storages made.
    pub allocations: u64,
}

/// What a fake run would have allocated on each device ([`FakeMode::memory`](super::FakeMode::memory)).
///
/// Bytes are counted as the device's allocator would hold them: on the CPU, the caching
/// allocator's block sizes (a storage of up to 64 bytes lives in its tensor's header and holds
/// no block; a larger one rounds up to its bucket), so that `peak` equals what
/// [`memory_stats`](crate::memory_stats) reports as `peak` for the same run made for real; on
/// other devices, the storage's own bytes (elements × dtype size).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct FakeMemory {
    per_device: [DeviceBytes; Device::ALL.len()],
}

impl FakeMemory {
    /// What `device` would have held.
    pub fn device(&self, device: Device) -> DeviceBytes {
        self.per_device[device.slot()]
    }

    /// The devices that would have allocated anything, with their figures, highest priority
    /// first.
    pub fn devices(&self) -> impl Iterator<Item = (Device, DeviceBytes)> + '_ {
        Device::ALL
            .into_iter()
            .map(|d| (d, self.device(d)))
            .filter(|(_, bytes)| bytes.allocations > 0)
    }
}

impl fmt::Debug for FakeMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.devices()).finish()
    }
}

/// One fake mode's counters, shared by the storages it charged (each takes its bytes back when
/// it drops, even after the mode ended).
#[derive(Default)]
pub(crate) struct Account {
    memory: Mutex<FakeMemory>,
}

impl Account {
    pub(crate) fn snapshot(&self) -> FakeMemory {
        *self.memory.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a storage of `len` elements of `dtype` on `device`; the returned charge gives its
    /// bytes back when dropped.
    pub(crate) fn charge(self: &Arc<Self>, device: Device, dtype: DType, len: usize) -> Charge {
        let bytes = held_bytes(device, dtype, len);
        let mut memory = self.memory.lock().unwrap_or_else(PoisonError::into_inner);
        let row = &mut memory.per_device[device.slot()];
        row.live = row.live.saturating_add(bytes);
        row.peak = row.peak.max(row.live);
        row.total = row.total.saturating_add(bytes);
        row.allocations += 1;
        Charge {
            account: Arc::clone(self),
            device,
            bytes,
        }
    }
}

/// A fake storage's bytes in its mode's [`Account`], given back on drop.
pub(crate) struct Charge {
    account: Arc<Account>,
    device: Device,
    bytes: usize,
}

impl Drop for Charge {
    fn drop(&mut self) {
        let mut memory = self
            .account
            .memory
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let row = &mut memory.per_device[self.device.slot()];
        row.live = row.live.saturating_sub(self.bytes);
    }
}

impl fmt::Debug for Charge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes on {}", self.bytes, self.device)
    }
}

/// The bytes `device`'s allocator would hold for `len` elements of `dtype` (saturating: a fake
/// shape may describe more memory than exists).
fn held_bytes(device: Device, dtype: DType, len: usize) -> usize {
    let bytes = len.saturating_mul(dtype.size_of());
    match device {
        Device::Cpu => crate::storage::cpu_held_bytes(bytes),
        _ => bytes,
    }
}
