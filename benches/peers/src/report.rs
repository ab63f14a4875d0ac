//! The markdown: a header line per run, a table per thread setting, with PyTorch's column when
//! its results are given. The same text goes to stdout and, with `--write-readme`, into
//! README.md.

use std::fmt::Write;

use crate::cases::Work;
use crate::libs::Library;
use crate::results::{Report, Row, SettingResult, TorchReport};
use crate::threads::Setting;

/// What the tables' numbers are, once above them.
pub const LEGEND: &str = "Each cell: the median time per call over the rounds, and the \
throughput it gives (bytes read and written; `matmul`: 2n³ floating-point operations). \
**Speed** is the fastest Rust peer's time ÷ Switchyard's: 1.00× or more means Switchyard is at \
least as fast. Switchyard, candle and ndarray are measured interleaved in one process (round \
robin, per case), so a slow spell of the machine falls on all of them alike; PyTorch runs in a \
process of its own, so its ratio is the less certain one.";

/// The markdown for `reports`, each with PyTorch's column if `torch` is given.
pub fn markdown(reports: &[Report], torch: Option<&TorchReport>) -> String {
    let mut out = format!("{LEGEND}\n");
    for report in reports {
        out.push('\n');
        out.push_str(&run(report, torch));
    }
    out
}

fn run(report: &Report, torch: Option<&TorchReport>) -> String {
    let m = &report.machine;
    let mut out = String::new();
    let options = if report.options.is_empty() {
        String::new()
    } else {
        format!(" {}", report.options)
    };
    let neighbour = report.neighbour.as_deref().unwrap_or("no busy neighbour");
    let _ = writeln!(
        out,
        "**Run:** {}, {} CPUs ({} available), load average {} at the start · {} · {} · {} ({}) · \
         `peers{options}` ({}) · {neighbour}.",
        m.cpu, m.cpus, m.available, m.load, m.date, m.rustc, m.build, m.compiled_for, report.plan
    );
    if let Some(torch) = torch {
        let options = if torch.options.is_empty() {
            String::new()
        } else {
            format!(" {}", torch.options)
        };
        let _ = writeln!(
            out,
            "PyTorch: {} (`torch_peers.py{options}`, {}), in its own process.",
            torch.library, torch.date
        );
    }
    for setting in &report.settings {
        out.push('\n');
        out.push_str(&table(setting, torch));
    }
    out
}

fn table(result: &SettingResult, torch: Option<&TorchReport>) -> String {
    let setting = result.setting;
    let mut out = String::new();
    let threads: Vec<String> = result
        .threads
        .iter()
        .map(|(library, threads)| match library {
            Library::NdarrayRayon => format!("{} {threads} (no rayon `dot`)", library.name()),
            _ => format!("{} {threads}", library.name()),
        })
        .collect();
    let torch_threads = torch
        .and_then(|t| t.threads(setting))
        .map_or(String::new(), |n| format!(", PyTorch {n}"));
    let _ = writeln!(
        out,
        "**{}**: threads {}{torch_threads}; each setting in a process of its own ({}).",
        setting.title(),
        threads.join(", "),
        result.environment
    );
    for warning in &result.warnings {
        let _ = writeln!(out, "\n**Warning:** {warning}");
    }
    out.push('\n');

    // The columns: the libraries this setting measured.
    let libraries: Vec<Library> = Library::ALL
        .into_iter()
        .filter(|&library| result.rows.iter().any(|row| row.of(library).is_some()))
        .collect();
    let mut header = String::from("| op | size |");
    let mut rule = String::from("|---|---:|");
    for library in &libraries {
        let _ = write!(header, " {} |", library.name());
        rule.push_str("---:|");
    }
    header.push_str(" speed vs best Rust peer |");
    rule.push_str("---:|");
    if torch.is_some() {
        header.push_str(" PyTorch | speed vs PyTorch |");
        rule.push_str("---:|---:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    for row in &result.rows {
        let _ = writeln!(out, "{}", table_row(row, &libraries, setting, torch));
    }
    out
}

fn table_row(
    row: &Row,
    libraries: &[Library],
    setting: Setting,
    torch: Option<&TorchReport>,
) -> String {
    let case = row.case;
    let mut line = format!("| `{}` | {} |", case.op, case.size_label());
    for &library in libraries {
        let cell = row.of(library).map_or("—".to_string(), |m| {
            with_throughput(m.median_ns, row.work)
        });
        let _ = write!(line, " {cell} |");
    }
    let subject = row.of(Library::Switchyard).map(|m| m.median_ns);
    let best_peer = row
        .results
        .iter()
        .filter(|m| m.library != Library::Switchyard)
        .min_by(|a, b| a.median_ns.total_cmp(&b.median_ns));
    let speed = match (subject, best_peer) {
        (Some(s), Some(best)) => format!("{} ({})", ratio(best.median_ns / s), best.library.name()),
        _ => "—".to_string(),
    };
    let _ = write!(line, " {speed} |");
    if let Some(torch) = torch {
        match (torch.median_ns(setting, case), subject) {
            (Some(t), Some(s)) => {
                let _ = write!(
                    line,
                    " {} | {} |",
                    with_throughput(t, row.work),
                    ratio(t / s)
                );
            }
            (Some(t), None) => {
                let _ = write!(line, " {} | — |", with_throughput(t, row.work));
            }
            (None, _) => line.push_str(" — | — |"),
        }
    }
    line
}

fn with_throughput(ns: f64, work: Work) -> String {
    let per_second = |amount: f64| amount / ns; // per ns × 1e9 / 1e9 = giga per second
    match work {
        Work::Bytes(bytes) => format!("{} · {} GB/s", time(ns), significant(per_second(bytes))),
        Work::Flops(flops) => format!("{} · {} GFLOP/s", time(ns), significant(per_second(flops))),
    }
}

/// Two decimals below 10× (where the tables' ratios mostly are), fewer above.
fn ratio(speed: f64) -> String {
    let decimals = if speed >= 100.0 {
        0
    } else if speed >= 10.0 {
        1
    } else {
        2
    };
    format!("{speed:.decimals$}×")
}

/// A duration in the unit that keeps it between 1 and 1000, three significant digits.
pub fn time(ns: f64) -> String {
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", significant(value))
}

/// Three significant digits (no exponent): `0.512`, `7.48`, `42.1`, `117`, `1234`.
fn significant(value: f64) -> String {
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else if value >= 1.0 {
        2
    } else {
        3
    };
    format!("{value:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{Case, Op};
    use crate::results::{Measured, TorchRow, TorchSetting};

    fn measured(library: Library, median_ns: f64) -> Measured {
        Measured {
            library,
            median_ns,
            samples_ns: vec![median_ns],
            calls_per_sample: 1,
        }
    }

    #[test]
    fn the_speed_is_the_best_peer_over_switchyard() {
        let case = Case {
            op: Op::Add,
            size: 1024,
        };
        let row = Row {
            case,
            work: case.work(),
            results: vec![
                measured(Library::Switchyard, 200.0),
                measured(Library::Candle, 400.0),
                measured(Library::Ndarray, 100.0),
            ],
        };
        let libraries = [Library::Switchyard, Library::Candle, Library::Ndarray];
        let line = table_row(&row, &libraries, Setting::Single, None);
        assert_eq!(
            line,
            "| `add` | 1K | 200 ns · 61.4 GB/s | 400 ns · 30.7 GB/s | 100 ns · 123 GB/s | 0.50× (ndarray) |"
        );

        // PyTorch's columns: its time and its own ratio, or dashes where it has no such case.
        let torch = TorchReport {
            library: "PyTorch".into(),
            options: String::new(),
            date: String::new(),
            settings: vec![TorchSetting {
                setting: Setting::Single,
                threads: 1,
                rows: vec![TorchRow {
                    op: Op::Add,
                    size: 1024,
                    median_ns: 1000.0,
                }],
            }],
        };
        let line = table_row(&row, &libraries, Setting::Single, Some(&torch));
        assert!(
            line.ends_with("| 0.50× (ndarray) | 1.00 µs · 12.3 GB/s | 5.00× |"),
            "{line}"
        );
        let line = table_row(&row, &libraries, Setting::Default, Some(&torch));
        assert!(line.ends_with("| 0.50× (ndarray) | — | — |"), "{line}");
    }

    #[test]
    fn times_and_throughputs_keep_three_digits() {
        assert_eq!(time(105.2), "105 ns");
        assert_eq!(time(7_480.0), "7.48 µs");
        assert_eq!(time(24_400_000.0), "24.4 ms");
        assert_eq!(time(1.5e9), "1.50 s");
        // 12 KiB in 105 ns: 117 GB/s.
        assert_eq!(
            with_throughput(105.0, Work::Bytes(12_288.0)),
            "105 ns · 117 GB/s"
        );
        assert_eq!(
            with_throughput(1e6, Work::Flops(2e9)),
            "1.00 ms · 2000 GFLOP/s"
        );
    }
}
