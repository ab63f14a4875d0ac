// A registration that claims CPU features promises the kernel is sound on CPUs with them: only
// `unsafe` code can make one.
use switchyard::__private_v1::{CpuFeatures, KernelKey, KernelMeta, KernelRegistration, Location};
use switchyard::ops::exp;

fn main() {
    let meta = KernelMeta {
        cpu: CpuFeatures::AVX512F,
        ..KernelMeta::new("sneaky", Location { module: "m", file: "f", line: 1 })
    };
    let kernel: exp::KernelFn = |_, x| Ok(x.clone());
    let key = KernelKey::Key(switchyard::DispatchKey::CpuSimd);
    let _ = KernelRegistration::with_cpu(key, kernel, meta);
}
