//! The measurement of one thread setting, interleaved: for each case every library is prepared
//! and warmed up, then sampled round-robin (one sample of each library per round, the starting
//! library rotating), so that a slow spell of this shared machine falls on all of them alike. A
//! library's time is the median of its rounds' time per call.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::cases::Case;
use crate::check;
use crate::libs::{Call, Library};
use crate::results::{Measured, Row, SettingResult};
use crate::threads::{self, Setting};

/// How long and how often each library is measured.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Calls before sampling, at least this long (caches, pools and page tables warm).
    pub warmup: Duration,
    /// A sample is at least this long, so the clock's resolution (tens of ns) does not matter;
    /// a call longer than this is a sample of one call.
    pub sample: Duration,
    /// Samples per library, interleaved.
    pub rounds: usize,
}

impl Plan {
    pub fn full() -> Plan {
        Plan {
            warmup: Duration::from_millis(200),
            sample: Duration::from_millis(10),
            rounds: 15,
        }
    }

    pub fn quick() -> Plan {
        Plan {
            warmup: Duration::from_millis(20),
            sample: Duration::from_millis(2),
            rounds: 5,
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "{} rounds, samples ≥ {} ms, warm-up ≥ {} ms",
            self.rounds,
            self.sample.as_millis(),
            self.warmup.as_millis()
        )
    }
}

/// Measures `cases` at `setting` in this process (the child for that setting).
pub fn run(setting: Setting, cases: &[Case], plan: Plan) -> Result<SettingResult, String> {
    let warnings = threads::apply(setting);
    for warning in &warnings {
        eprintln!("peers: warning: {warning}");
    }
    let mut rows = Vec::with_capacity(cases.len());
    for &case in cases {
        let row = measure(setting, case, plan)?;
        progress(setting, &row);
        rows.push(row);
    }
    Ok(SettingResult {
        setting,
        environment: setting.environment(),
        // After the cases: candle's pools exist by then, so asking does not start them early.
        threads: threads::counts(setting),
        warnings,
        rows,
    })
}

fn measure(setting: Setting, case: Case, plan: Plan) -> Result<Row, String> {
    let inputs = case.inputs();
    let mut prepared: Vec<_> = Library::measured(setting)
        .iter()
        .filter_map(|&library| Some((library, library.prepare(case, &inputs)?)))
        .collect();

    // Switchyard comes first (`Library::ALL`), and serves every case.
    let want = prepared[0].1.output();
    for (library, call) in &mut prepared[1..] {
        check::agree(case, &inputs, &want, &call.output()).map_err(|e| {
            format!(
                "{} {}: {} disagrees with Switchyard: {e}",
                case.op,
                case.size_label(),
                library.name()
            )
        })?;
    }
    // Each library holds its own copy; the shared one is not needed while timing.
    drop((want, inputs));

    let calls: Vec<u64> = prepared
        .iter_mut()
        .map(|(_, call)| warm_up(call.as_mut(), plan))
        .collect();
    let n = prepared.len();
    let mut samples = vec![Vec::with_capacity(plan.rounds); n];
    for round in 0..plan.rounds {
        for k in 0..n {
            let i = (round + k) % n;
            samples[i].push(sample(prepared[i].1.as_mut(), calls[i]));
        }
    }

    let results = prepared
        .iter()
        .zip(samples)
        .zip(calls)
        .map(|(((library, _), samples_ns), calls_per_sample)| Measured {
            library: *library,
            median_ns: median(&samples_ns),
            samples_ns,
            calls_per_sample,
        })
        .collect();
    Ok(Row {
        case,
        work: case.work(),
        results,
    })
}

/// Calls in doubling batches until the warm-up time has passed (two batches at least, so the
/// estimate comes from warm calls); returns the calls per sample that estimate gives.
fn warm_up(call: &mut dyn Call, plan: Plan) -> u64 {
    let start = Instant::now();
    let mut batch = 1u64;
    loop {
        let per_call = sample(call, batch);
        if batch >= 2 && start.elapsed() >= plan.warmup {
            let calls = plan.sample.as_nanos() as f64 / per_call.max(1.0);
            return calls.ceil().max(1.0) as u64;
        }
        batch *= 2;
    }
}

/// The mean time per call of `calls` calls, in nanoseconds.
fn sample(call: &mut dyn Call, calls: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        call.run();
    }
    start.elapsed().as_nanos() as f64 / calls as f64
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

fn progress(setting: Setting, row: &Row) {
    let times: Vec<String> = row
        .results
        .iter()
        .map(|m| format!("{} {}", m.library.name(), crate::report::time(m.median_ns)))
        .collect();
    // Progress is a courtesy: a closed stderr must not stop the measurement.
    let _ = writeln!(
        std::io::stderr(),
        "peers [{}] {} {}: {}",
        setting.name(),
        row.case.op,
        row.case.size_label(),
        times.join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_value() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
