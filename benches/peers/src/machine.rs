//! The report's header: the machine, the date, and how this binary was built.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo.
    pub cpu: String,
    /// Logical CPUs the machine has, and those this process may use.
    pub cpus: usize,
    pub available: usize,
    /// The load average (1, 5, 15 minutes) when the run began: other work on a shared machine.
    pub load: String,
    /// UTC, to the minute.
    pub date: String,
    pub rustc: String,
    /// `release` or `debug`, and the `RUSTFLAGS`.
    pub build: String,
    /// The SIMD the compiler was allowed to assume everywhere (runtime detection aside).
    pub compiled_for: String,
}

impl Machine {
    pub fn here() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
            .map_or_else(
                || std::env::consts::ARCH.to_string(),
                |(_, name)| name.trim().to_string(),
            );
        let available = std::thread::available_parallelism().map_or(1, usize::from);
        let cpus = cpuinfo
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count()
            .max(available);
        let profile = if cfg!(debug_assertions) {
            "debug (numbers meaningless)"
        } else {
            "release"
        };
        let flags = env!("PEERS_RUSTFLAGS");
        let build = if flags.is_empty() {
            format!("{profile}, no RUSTFLAGS")
        } else {
            format!("{profile}, RUSTFLAGS=\"{flags}\"")
        };
        let load = std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "unknown".into());
        Machine {
            cpu,
            cpus,
            available,
            load,
            date: utc_now(),
            rustc: env!("PEERS_RUSTC_VERSION").to_string(),
            build,
            compiled_for: compiled_for(),
        }
    }
}

/// Which of the features that matter here the whole build may use without detection: a
/// generic x86-64 build has none (Switchyard and candle still pick AVX2 or AVX-512 kernels at
/// run time; plain loops stay SSE2); `-C target-cpu=native` turns them on everywhere.
fn compiled_for() -> String {
    let features = [
        ("avx2", cfg!(target_feature = "avx2")),
        ("fma", cfg!(target_feature = "fma")),
        ("avx512f", cfg!(target_feature = "avx512f")),
        ("neon", cfg!(target_feature = "neon")),
    ];
    let on: Vec<_> = features
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
    if on.is_empty() {
        format!("generic {}", std::env::consts::ARCH)
    } else {
        format!("{} with {}", std::env::consts::ARCH, on.join(", "))
    }
}

/// `YYYY-MM-DD HH:MM UTC` without a date crate (days to a civil date: Howard Hinnant's
/// `civil_from_days`).
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60
    )
}

fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_782), (2026, 11, 25));
    }
}
