//! The two thread settings, each run in a child process of this binary.
//!
//! A child per setting because candle sizes its thread pools once per process, at first use, from
//! `CANDLE_NUM_THREADS` (its elementwise pool) and `RAYON_NUM_THREADS` (rayon's global pool, on
//! which its `matmul` and ndarray's parallel forms run): one process cannot measure candle at one
//! thread and then at its default. Switchyard's count is set through its API in the child
//! (`set_num_threads(1)`, `reset_num_threads()`), as a user would.

use std::io;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::libs::Library;

/// The variables that size the peers' pools; set to 1 for the single-threaded child, removed
/// for the default one (so that the defaults are the libraries' own, not the shell's).
const POOL_VARS: [&str; 2] = ["CANDLE_NUM_THREADS", "RAYON_NUM_THREADS"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Setting {
    /// Every library on one thread.
    Single,
    /// Every library at its default thread count.
    Default,
}

impl Setting {
    pub const ALL: [Setting; 2] = [Setting::Single, Setting::Default];

    pub fn name(self) -> &'static str {
        match self {
            Setting::Single => "single",
            Setting::Default => "default",
        }
    }

    pub fn parse(name: &str) -> Result<Setting, String> {
        Setting::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("unknown thread setting `{name}`; expected single or default"))
    }

    /// The tables' heading.
    pub fn title(self) -> &'static str {
        match self {
            Setting::Single => "Single-threaded",
            Setting::Default => "Default threads",
        }
    }

    /// How the child's environment is set, for the output.
    pub fn environment(self) -> String {
        match self {
            Setting::Single => POOL_VARS.map(|var| format!("`{var}=1`")).join(", "),
            Setting::Default => {
                let vars = POOL_VARS.map(|var| format!("`{var}`")).join(", ");
                format!("{vars} unset")
            }
        }
    }
}

/// Sets Switchyard's thread count in this (child) process, and checks that the API did what it
/// says: a mismatch is returned as a warning for the report, not hidden.
pub fn apply(setting: Setting) -> Vec<String> {
    let mut warnings = Vec::new();
    match setting {
        Setting::Single => {
            if let Err(e) = switchyard_backends::set_num_threads(1) {
                warnings.push(format!("Switchyard refused one thread: {e}"));
            }
            let threads = switchyard_backends::num_threads();
            if threads != 1 {
                warnings.push(format!(
                    "Switchyard: num_threads() is {threads} after set_num_threads(1)"
                ));
            }
        }
        Setting::Default => {
            switchyard_backends::reset_num_threads();
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            let threads = switchyard_backends::num_threads();
            if std::env::var_os("SWITCHYARD_NUM_THREADS").is_none() && threads != cores {
                warnings.push(format!(
                    "Switchyard: num_threads() is {threads} after reset_num_threads(), with {cores} cores available"
                ));
            }
        }
    }
    warnings
}

/// The threads each library may use in this process, for the report.
pub fn counts(setting: Setting) -> Vec<(Library, String)> {
    Library::measured(setting)
        .iter()
        .map(|&library| (library, library.threads()))
        .collect()
}

/// Runs this binary as the child for `setting` with `args` (the run's own options) and returns
/// what it printed on stdout (its results, as JSON). Its progress goes to our stderr.
pub fn run_child(setting: Setting, args: &[String]) -> io::Result<Vec<u8>> {
    let mut command = Command::new(std::env::current_exe()?);
    command
        .arg("--child")
        .arg(setting.name())
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    for var in POOL_VARS {
        match setting {
            Setting::Single => command.env(var, "1"),
            Setting::Default => command.env_remove(var),
        };
    }
    let output = command.output()?;
    if !output.status.success() {
        return Err(io::Error::other(format!(
            "the {} child process failed ({})",
            setting.name(),
            output.status
        )));
    }
    Ok(output.stdout)
}
