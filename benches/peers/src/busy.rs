//! The busy neighbour (`--busy`, `--busy-core N`): a process of this binary that spins on one
//! core for the whole run, as another program on the machine would. It shows how each library
//! copes when one of the cores it counts on is taken: a pool that splits work evenly and waits
//! for every part stalls on the part whose core is busy; one whose idle workers take over the
//! parts not yet begun does not.

use std::io::{self, Read};
use std::process::{Child, Command, Stdio};

/// The spinning process, stopped when this is dropped.
#[derive(Debug)]
pub struct Neighbour {
    child: Child,
    description: String,
}

impl Neighbour {
    /// Starts the spinner, pinned to `core` if given (else wherever the scheduler puts it).
    pub fn start(core: Option<usize>) -> io::Result<Neighbour> {
        let mut command = Command::new(std::env::current_exe()?);
        command.arg("--spin");
        if let Some(core) = core {
            command.arg(core.to_string());
        }
        // Its stdin is our pipe: when we end, however we end, it reads EOF and exits.
        let child = command.stdin(Stdio::piped()).spawn()?;
        let description = match core {
            Some(core) => format!("a process spinning on core {core} (pinned)"),
            None => "a process spinning on one core (not pinned)".to_string(),
        };
        Ok(Neighbour { child, description })
    }

    pub fn description(&self) -> &str {
        &self.description
    }
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        // Killing the one process we started, by its handle; it may have exited already.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The spinner's body (`peers --spin [CORE]`): spins until its stdin closes.
pub fn spin(core: Option<usize>) -> ! {
    if let Some(core) = core
        && let Err(e) = pin(core)
    {
        eprintln!("peers --spin: cannot pin to core {core}: {e}");
        std::process::exit(2);
    }
    std::thread::spawn(|| {
        let _ = io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    let mut x = 0u64;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

#[cfg(target_os = "linux")]
fn pin(core: usize) -> io::Result<()> {
    // SAFETY: `cpu_set_t` is plain bits, for which all zeros is the empty set; `CPU_SET` writes
    // inside it (a core beyond its 1024 bits is refused above), and `sched_setaffinity` reads
    // `size_of::<cpu_set_t>()` bytes of it, for this process (pid 0).
    unsafe {
        if core >= 8 * size_of::<libc::cpu_set_t>() {
            return Err(io::Error::other("no such core"));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        if libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn pin(_core: usize) -> io::Result<()> {
    Err(io::Error::other(
        "pinning is implemented for Linux only; use --busy",
    ))
}
