//! The command line (no parser crate: a dozen options).

use std::path::PathBuf;

use crate::cases::Op;
use crate::threads::Setting;

pub const USAGE: &str = "\
peers: Switchyard's CPU ops beside candle and ndarray, interleaved in one process per thread
setting (each setting in a child process of this binary), and the README's table from them.

usage: cargo run --release -- [OPTIONS]          (from benches/peers)

  --quick              a short run: 5 rounds of samples >= 2 ms (default: 15 of >= 10 ms)
  --only OP            one op: add, mul, exp, relu, sum, mean or matmul
  --threads SETTING    single, default or both (the default)
  --busy               a process spinning on one core, not pinned, for the whole run
  --busy-core N        the same, pinned to core N
  --json PATH          also write the results as JSON (what --from reads)
  --torch PATH         add PyTorch's columns, from `python3 torch_peers.py --json PATH`
  --from PATH          measure nothing: the tables of a results file (repeat for several runs,
                       e.g. a generic and a target-cpu=native build)
  --write-readme PATH  put the tables between the README's `<!-- peers:start` and
                       `<!-- peers:end -->` lines (refused, file untouched, without them)
  -h, --help           this text";

#[derive(Debug, Default)]
pub struct Args {
    pub quick: bool,
    pub only: Option<Op>,
    /// Empty: both.
    pub settings: Vec<Setting>,
    /// `Some(None)`: a neighbour on no particular core; `Some(Some(n))`: pinned to core `n`.
    pub busy: Option<Option<usize>>,
    pub json: Option<PathBuf>,
    pub torch: Option<PathBuf>,
    pub from: Vec<PathBuf>,
    pub write_readme: Option<PathBuf>,
    /// Internal: measure this setting and print its results on stdout.
    pub child: Option<Setting>,
    /// Internal: be the busy neighbour (`Some(None)`: not pinned).
    pub spin: Option<Option<usize>>,
    pub help: bool,
}

impl Args {
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
        let mut parsed = Args::default();
        let mut args = args.into_iter().peekable();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--quick" => parsed.quick = true,
                "--only" => parsed.only = Some(Op::parse(&value(&mut args, "--only")?)?),
                "--threads" => {
                    parsed.settings = match value(&mut args, "--threads")?.as_str() {
                        "both" => Vec::new(),
                        one => vec![Setting::parse(one)?],
                    }
                }
                "--busy" => parsed.busy = Some(None),
                "--busy-core" => parsed.busy = Some(Some(core(&value(&mut args, "--busy-core")?)?)),
                "--json" => parsed.json = Some(value(&mut args, "--json")?.into()),
                "--torch" => parsed.torch = Some(value(&mut args, "--torch")?.into()),
                "--from" => parsed.from.push(value(&mut args, "--from")?.into()),
                "--write-readme" => {
                    parsed.write_readme = Some(value(&mut args, "--write-readme")?.into())
                }
                "--child" => parsed.child = Some(Setting::parse(&value(&mut args, "--child")?)?),
                "--spin" => {
                    let pinned = match args.peek() {
                        Some(next) if !next.starts_with("--") => Some(core(&args.next().unwrap())?),
                        _ => None,
                    };
                    parsed.spin = Some(pinned);
                }
                "-h" | "--help" => parsed.help = true,
                other => return Err(format!("unknown option `{other}`; see --help")),
            }
        }
        if !parsed.from.is_empty() && (parsed.json.is_some() || parsed.busy.is_some()) {
            return Err("--from measures nothing: --json and --busy do not apply".into());
        }
        Ok(parsed)
    }

    /// The thread settings to measure.
    pub fn settings(&self) -> Vec<Setting> {
        if self.settings.is_empty() {
            Setting::ALL.to_vec()
        } else {
            self.settings.clone()
        }
    }

    /// The options a child needs (what it measures and how long).
    pub fn child_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if self.quick {
            args.push("--quick".to_string());
        }
        if let Some(op) = self.only {
            args.extend(["--only".to_string(), op.name().to_string()]);
        }
        args
    }

    /// The options that shape the numbers, as the report's header shows them.
    pub fn describe(&self) -> String {
        let mut args = self.child_args();
        if let [one] = self.settings.as_slice() {
            args.extend(["--threads".to_string(), one.name().to_string()]);
        }
        match self.busy {
            Some(None) => args.push("--busy".to_string()),
            Some(Some(core)) => args.extend(["--busy-core".to_string(), core.to_string()]),
            None => {}
        }
        args.join(" ")
    }
}

fn value(args: &mut impl Iterator<Item = String>, name: &str) -> Result<String, String> {
    args.next()
        .ok_or_else(|| format!("{name} needs a value; see --help"))
}

fn core(value: &str) -> Result<usize, String> {
    value
        .parse()
        .map_err(|_| format!("`{value}` is not a core number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Args, String> {
        Args::parse(line.split_whitespace().map(String::from))
    }

    #[test]
    fn options_parse_and_describe_themselves() {
        let args = parse("--quick --only exp --busy-core 1 --threads single").unwrap();
        assert_eq!(args.only, Some(Op::Exp));
        assert_eq!(args.settings(), [Setting::Single]);
        assert_eq!(args.child_args(), ["--quick", "--only", "exp"]);
        assert_eq!(
            args.describe(),
            "--quick --only exp --threads single --busy-core 1"
        );
        assert_eq!(parse("").unwrap().settings(), Setting::ALL);
        assert_eq!(parse("--spin").unwrap().spin, Some(None));
        assert_eq!(parse("--spin 1").unwrap().spin, Some(Some(1)));
    }

    #[test]
    fn mistakes_are_refused_with_a_reason() {
        assert!(parse("--only").unwrap_err().contains("needs a value"));
        assert!(
            parse("--only sub")
                .unwrap_err()
                .contains("unknown op `sub`")
        );
        assert!(
            parse("--threads two")
                .unwrap_err()
                .contains("single or default")
        );
        assert!(
            parse("--fast")
                .unwrap_err()
                .contains("unknown option `--fast`")
        );
        assert!(parse("--from a.json --json b.json").is_err());
    }
}
