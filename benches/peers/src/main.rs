//! `peers`: Switchyard's CPU ops beside candle and ndarray (and PyTorch's, from
//! `torch_peers.py`), and the README's table from them. `--help` lists the options.
//!
//! One binary plays three parts: the parent (parses options, starts the busy neighbour, runs a
//! child per thread setting, prints and writes the tables), the child (`--child SETTING`:
//! measures, prints JSON on stdout) and the neighbour (`--spin`).

mod args;
mod busy;
mod cases;
mod check;
mod data;
mod libs;
mod machine;
mod measure;
mod readme;
mod report;
mod results;
mod threads;

use std::process::ExitCode;

use args::{Args, USAGE};
use cases::Case;
use measure::Plan;
use results::{Report, TorchReport};

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("peers: {e}");
            return ExitCode::from(2);
        }
    };
    if args.help {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if let Some(core) = args.spin {
        busy::spin(core);
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peers: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let plan = if args.quick {
        Plan::quick()
    } else {
        Plan::full()
    };
    if let Some(setting) = args.child {
        let result = measure::run(setting, &Case::all(args.only), plan)?;
        println!(
            "{}",
            serde_json::to_string(&result).expect("results serialise")
        );
        return Ok(());
    }

    let reports = if args.from.is_empty() {
        let report = measure_all(args, plan)?;
        if let Some(path) = &args.json {
            results::write(path, &report)?;
        }
        vec![report]
    } else {
        args.from
            .iter()
            .map(|path| results::read::<Report>(path))
            .collect::<Result<_, _>>()?
    };
    let torch = match &args.torch {
        Some(path) => Some(results::read::<TorchReport>(path)?),
        None => None,
    };
    let markdown = report::markdown(&reports, torch.as_ref());
    print!("{markdown}");
    if let Some(path) = &args.write_readme {
        readme::write(path, &markdown)?;
        eprintln!("peers: wrote the tables into {}", path.display());
    }
    Ok(())
}

/// Runs a child per thread setting (with the busy neighbour, if asked, spinning throughout).
fn measure_all(args: &Args, plan: Plan) -> Result<Report, String> {
    let neighbour = match args.busy {
        Some(core) => Some(
            busy::Neighbour::start(core)
                .map_err(|e| format!("cannot start the busy neighbour: {e}"))?,
        ),
        None => None,
    };
    let machine = machine::Machine::here();
    let mut settings = Vec::new();
    for setting in args.settings() {
        let stdout = threads::run_child(setting, &args.child_args()).map_err(|e| e.to_string())?;
        let result = serde_json::from_slice(&stdout)
            .map_err(|e| format!("the {} child's output: {e}", setting.name()))?;
        settings.push(result);
    }
    Ok(Report {
        machine,
        options: args.describe(),
        plan: plan.describe(),
        neighbour: neighbour.map(|n| n.description().to_string()),
        settings,
    })
}
