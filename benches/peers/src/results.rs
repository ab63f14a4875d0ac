//! What a run writes (`--json`) and the generator reads back (`--from`), and what
//! `torch_peers.py --json` writes (`--torch`).

use std::fs;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::cases::{Case, Op, Work};
use crate::libs::Library;
use crate::machine::Machine;
use crate::threads::Setting;

/// One run of this binary: where, how, and each thread setting's rows.
#[derive(Debug, Serialize, Deserialize)]
pub struct Report {
    pub machine: Machine,
    /// The options the run was given (`--quick`, `--busy`, …), as typed.
    pub options: String,
    /// Rounds, sample and warm-up lengths.
    pub plan: String,
    /// The busy neighbour, if `--busy` or `--busy-core` started one.
    pub neighbour: Option<String>,
    pub settings: Vec<SettingResult>,
}

/// One thread setting, measured in its own child process.
#[derive(Debug, Serialize, Deserialize)]
pub struct SettingResult {
    pub setting: Setting,
    /// How the child's environment was set.
    pub environment: String,
    /// The threads each library could use, as it reports them.
    pub threads: Vec<(Library, String)>,
    /// Anything that did not go as asked (Switchyard's thread API not doing what it says).
    pub warnings: Vec<String>,
    pub rows: Vec<Row>,
}

/// One case: each library's measurement.
#[derive(Debug, Serialize, Deserialize)]
pub struct Row {
    pub case: Case,
    pub work: Work,
    pub results: Vec<Measured>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Measured {
    pub library: Library,
    /// The median over rounds of the time per call.
    pub median_ns: f64,
    /// Each round's time per call, in round order.
    pub samples_ns: Vec<f64>,
    pub calls_per_sample: u64,
}

impl Row {
    pub fn of(&self, library: Library) -> Option<&Measured> {
        self.results.iter().find(|m| m.library == library)
    }
}

/// `torch_peers.py --json`: PyTorch's medians, from a separate process.
#[derive(Debug, Serialize, Deserialize)]
pub struct TorchReport {
    /// `PyTorch 2.15.0`.
    pub library: String,
    /// The options it was run with.
    pub options: String,
    pub date: String,
    pub settings: Vec<TorchSetting>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TorchSetting {
    pub setting: Setting,
    /// `torch.get_num_threads()` while it measured.
    pub threads: usize,
    pub rows: Vec<TorchRow>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TorchRow {
    pub op: Op,
    pub size: usize,
    pub median_ns: f64,
}

impl TorchReport {
    /// PyTorch's median for `case` at `setting`, if it was measured.
    pub fn median_ns(&self, setting: Setting, case: Case) -> Option<f64> {
        let rows = &self.settings.iter().find(|s| s.setting == setting)?.rows;
        let row = rows
            .iter()
            .find(|r| r.op == case.op && r.size == case.size)?;
        Some(row.median_ns)
    }

    pub fn threads(&self, setting: Setting) -> Option<usize> {
        Some(self.settings.iter().find(|s| s.setting == setting)?.threads)
    }
}

pub fn read<T: DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a results file: {e}", path.display()))
}

pub fn write<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).expect("results serialise");
    fs::write(path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))
}
