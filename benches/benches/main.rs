//! Criterion benchmarks of switchyard, one module per group.

mod dispatch_overhead;

criterion::criterion_main!(dispatch_overhead::group);
