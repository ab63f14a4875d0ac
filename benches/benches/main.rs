//! Criterion benchmarks of switchyard, one module per group.

mod dispatch_overhead;
mod simd;

criterion::criterion_main!(dispatch_overhead::group, simd::group);
