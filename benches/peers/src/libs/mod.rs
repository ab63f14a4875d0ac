//! The libraries measured, each behind the same small interface: prepare a case's inputs once as
//! its own tensors, then make calls as its users do (a new output tensor each call).

mod candle;
mod ndarray;
mod switchyard;

use serde::{Deserialize, Serialize};

use crate::cases::Case;
use crate::threads::Setting;

/// A library measured in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Library {
    Switchyard,
    Candle,
    /// ndarray's plain forms: one thread.
    Ndarray,
    /// ndarray's rayon forms (`Zip::par_map_collect`, chunks summed in parallel).
    NdarrayRayon,
}

impl Library {
    /// The columns' order; Switchyard, the subject, first.
    pub const ALL: [Library; 4] = [
        Library::Switchyard,
        Library::Candle,
        Library::Ndarray,
        Library::NdarrayRayon,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Library::Switchyard => "Switchyard",
            Library::Candle => "candle",
            Library::Ndarray => "ndarray",
            Library::NdarrayRayon => "ndarray + rayon",
        }
    }

    /// The libraries measured at `setting`: ndarray's rayon forms only where threads are
    /// allowed, beside its plain forms (at 1K a parallel form costs more than it saves, and a
    /// user would not take it there).
    pub fn measured(setting: Setting) -> &'static [Library] {
        match setting {
            Setting::Single => &Library::ALL[..3],
            Setting::Default => &Library::ALL,
        }
    }

    /// `case` ready to call, its inputs copied into this library's tensors; `None` where the
    /// library has no such form (ndarray's `dot` with rayon).
    pub fn prepare(self, case: Case, inputs: &[Vec<f32>]) -> Option<Prepared> {
        match self {
            Library::Switchyard => Some(switchyard::prepare(case, inputs)),
            Library::Candle => Some(candle::prepare(case, inputs)),
            Library::Ndarray => Some(ndarray::prepare(case, inputs)),
            Library::NdarrayRayon => ndarray::prepare_parallel(case, inputs),
        }
    }

    /// The threads its calls may use in this process (after [`crate::threads::apply`]).
    pub fn threads(self) -> String {
        match self {
            Library::Switchyard => switchyard::threads(),
            Library::Candle => candle::threads(),
            Library::Ndarray => "1".to_string(),
            Library::NdarrayRayon => ndarray::threads(),
        }
    }
}

/// One library's calls for one case.
pub trait Call {
    /// One call; its output is dropped (freed, or returned to a pool, as the library does).
    fn run(&mut self);
    /// One call's output as values, to check that the libraries agree before they are timed.
    fn output(&mut self) -> Vec<f32>;
}

/// One library's calls for one case, ready.
pub type Prepared = Box<dyn Call>;

/// A [`Call`] from the library's inputs, its op as a plain function (every library pays the same
/// indirect call, a nanosecond) and the conversion of its output to values.
struct Calls<I, O> {
    inputs: I,
    op: fn(&I) -> O,
    values: fn(&O) -> Vec<f32>,
}

impl<I, O> Call for Calls<I, O> {
    fn run(&mut self) {
        // `black_box` on both sides: the inputs are not known to be the same each call, and the
        // output is used, so no call can be hoisted or removed.
        std::hint::black_box((self.op)(std::hint::black_box(&self.inputs)));
    }

    fn output(&mut self) -> Vec<f32> {
        (self.values)(&(self.op)(&self.inputs))
    }
}

fn prepared<I: 'static, O: 'static>(
    inputs: I,
    op: fn(&I) -> O,
    values: fn(&O) -> Vec<f32>,
) -> Prepared {
    Box::new(Calls { inputs, op, values })
}
