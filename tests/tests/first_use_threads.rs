//! Thread safety of building op tables: 8 threads released together by a barrier call 50 ops
//! (declared here, so nothing has built their tables yet) in different orders, so that tables
//! are built concurrently at first use, by the typed call path and by `handle().slot()` at once.
//! Every result is checked.
//!
//! This file holds a single test on purpose: another test in the same binary could build the
//! tables first and the race would not happen.

use std::sync::Barrier;
use std::thread;

use switchyard::ops::{add, sum};
use switchyard::{DispatchKey, SlotOrigin, Tensor};
use switchyard_backends as _; // links the CPU kernels of `add` and `sum`

/// Op number `i` adds `i` to every element. A kernel that `x + offset` would give for another
/// op's offset is caught by the per-op expected values.
fn plus(x: &Tensor, offset: f32) -> Tensor {
    let values = x.as_slice::<f32>().expect("a CPU tensor");
    Tensor::from_vec::<f32>(values.iter().map(|v| v + offset).collect(), x.shape()).unwrap()
}

/// Declares one op and its `CpuNaive` kernel per `(op, kernel, offset)`, and `OPS`: every op with
/// its name, kernel name and offset, in declaration order.
macro_rules! ops {
    ($(($op:ident, $kernel:ident, $offset:literal)),* $(,)?) => {
        $(
            #[switchyard::op]
            pub fn $op(x: &Tensor) -> Tensor;

            #[switchyard::kernel(op = $op, key = CpuNaive)]
            fn $kernel(x: &Tensor) -> Tensor {
                plus(x, $offset)
            }
        )*

        /// `(call, handle, op name, kernel name, offset)` of every op above.
        const OPS: &[Op] = &[
            $((
                $op,
                $op::handle,
                stringify!($op),
                stringify!($kernel),
                $offset,
            )),*
        ];
    };
}

type Op = (
    fn(&Tensor) -> Tensor,
    fn() -> switchyard::OpHandle,
    &'static str,
    &'static str,
    f32,
);

ops! {
    (op00, k00, 0.0), (op01, k01, 1.0), (op02, k02, 2.0), (op03, k03, 3.0), (op04, k04, 4.0),
    (op05, k05, 5.0), (op06, k06, 6.0), (op07, k07, 7.0), (op08, k08, 8.0), (op09, k09, 9.0),
    (op10, k10, 10.0), (op11, k11, 11.0), (op12, k12, 12.0), (op13, k13, 13.0), (op14, k14, 14.0),
    (op15, k15, 15.0), (op16, k16, 16.0), (op17, k17, 17.0), (op18, k18, 18.0), (op19, k19, 19.0),
    (op20, k20, 20.0), (op21, k21, 21.0), (op22, k22, 22.0), (op23, k23, 23.0), (op24, k24, 24.0),
    (op25, k25, 25.0), (op26, k26, 26.0), (op27, k27, 27.0), (op28, k28, 28.0), (op29, k29, 29.0),
    (op30, k30, 30.0), (op31, k31, 31.0), (op32, k32, 32.0), (op33, k33, 33.0), (op34, k34, 34.0),
    (op35, k35, 35.0), (op36, k36, 36.0), (op37, k37, 37.0), (op38, k38, 38.0), (op39, k39, 39.0),
    (op40, k40, 40.0), (op41, k41, 41.0), (op42, k42, 42.0), (op43, k43, 43.0), (op44, k44, 44.0),
    (op45, k45, 45.0), (op46, k46, 46.0), (op47, k47, 47.0), (op48, k48, 48.0), (op49, k49, 49.0),
}

const THREADS: usize = 8;
const ROUNDS: usize = 4;

/// What thread number `thread` does, `ROUNDS` times: call every op once, starting at a
/// thread-specific offset (a rotation by 7 per thread, so the 8 orders differ; odd threads walk
/// backwards), and check each result.
fn run_thread(thread: usize, barrier: &Barrier) {
    barrier.wait();
    for round in 0..ROUNDS {
        // Values exact in f32, different per thread and per round.
        let input =
            Tensor::from_vec::<f32>(vec![thread as f32, round as f32, -0.5, 100.0], &[2, 2])
                .unwrap();
        for step in 0..OPS.len() {
            let position = if thread.is_multiple_of(2) {
                (step + 7 * thread) % OPS.len()
            } else {
                (OPS.len() * 2 - 1 - step - 7 * thread) % OPS.len()
            };
            let (call, handle, name, kernel, offset) = OPS[position];
            // Half of the threads first reach the table through introspection, which also builds it.
            if (thread + round) % 2 == 1 {
                match handle().slot(DispatchKey::CpuNaive) {
                    Ok(SlotOrigin::Kernel(meta)) => assert_eq!(meta.name, kernel, "{name}"),
                    other => panic!("{name}: CpuNaive slot is {other:?}"),
                }
            }
            let out = call(&input);
            assert_eq!(out.shape(), &[2, 2], "{name}");
            let expected = [
                thread as f32 + offset,
                round as f32 + offset,
                offset - 0.5,
                100.0 + offset,
            ];
            assert_eq!(
                out.to_vec::<f32>(),
                expected,
                "{name} on thread {thread}, round {round}"
            );
        }
        // Standard ops race at first use too: 0 + 1 + … + 49 = 1225 per element.
        let total = OPS.iter().fold(Tensor::vector(&[0.0, 1.0]), |acc, op| {
            add(&acc, &Tensor::vector(&[op.4, op.4]))
        });
        assert_eq!(total.to_vec::<f32>(), [1225.0, 1226.0]);
        assert_eq!(sum(&total).to_vec::<f32>(), [2451.0]);
    }
}

#[test]
fn eight_threads_build_fifty_tables_at_first_use() {
    assert_eq!(OPS.len(), 50);
    let barrier = Barrier::new(THREADS);
    thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let barrier = &barrier;
                scope.spawn(move || run_thread(thread, barrier))
            })
            .collect();
        for (thread, worker) in workers.into_iter().enumerate() {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(Box::new(format!(
                    "thread {thread} failed: {:?}",
                    panic
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| panic.downcast_ref::<&str>().copied())
                )));
            }
        }
    });

    // After the race: every op is findable by its name and resolved exactly one kernel.
    for &(call, handle, name, kernel, offset) in OPS {
        let handle = handle();
        assert_eq!(handle.bare_name(), name);
        assert_eq!(handle.name(), format!("first_use_threads::{name}"));
        let found = switchyard::find_op(name).unwrap_or_else(|| panic!("find_op({name:?})"));
        assert_eq!(found.name(), handle.name());
        let registrations = handle.registrations();
        assert_eq!(registrations.len(), 1, "{name}: {registrations:?}");
        assert_eq!(registrations[0].0, DispatchKey::CpuNaive, "{name}");
        assert_eq!(registrations[0].1.name, kernel, "{name}");
        assert_eq!(
            handle.slot(DispatchKey::CpuSimd).unwrap(),
            SlotOrigin::Fallthrough,
            "{name}"
        );
        assert_eq!(
            call(&Tensor::scalar(0.25)).to_vec::<f32>(),
            [0.25 + offset],
            "{name}"
        );
    }
}
