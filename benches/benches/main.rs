//! Criterion benchmarks of switchyard, one module per group.

mod dispatch_overhead;
mod semantics;
mod simd;
mod small;
mod train_step;
mod wgpu;

criterion::criterion_main!(
    dispatch_overhead::group,
    semantics::group,
    simd::group,
    small::group,
    train_step::group,
    wgpu::group
);
