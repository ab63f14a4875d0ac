//! Criterion benchmarks of switchyard, one module per group.

mod dispatch_overhead;
mod wgpu;

criterion::criterion_main!(dispatch_overhead::group, wgpu::group);
