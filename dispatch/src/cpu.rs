//! CPU variants of a kernel: the features each one needs, what the running CPU has, and which
//! variant an op's table installs.
//!
//! Several kernels may share one key when each names the CPU features it needs
//! (`#[kernel(op = "mul", key = CpuSimd, cpu = "avx2,fma")]`). When a table is built, the best
//! variant whose features the CPU has is installed; the others are never reachable. The
//! `SWITCHYARD_CPU_CAPABILITY` environment variable (`default`, `avx2`, `avx512`, `neon`,
//! `simd128`) can lower the choice, never raise it.
//!
//! **Invariant (soundness):** a variant is installed only if every feature it names was detected
//! on the running CPU by the standard library's runtime detection (on WebAssembly, which has no
//! runtime detection, a feature is present when the module was compiled with it: a wasm engine
//! refuses a module using instructions it lacks). The capability override is
//! intersected with the detected features, so it can only remove variants. A `#[target_feature]`
//! kernel is reached through an entry the macro generates, which is sound because of this check
//! (and because the macro requires `cpu` to list every feature `#[target_feature]` enables).
//!
//! ```
//! use switchyard::cpu::{Capability, CpuFeatures, CpuPolicy};
//!
//! // An AVX2 machine asked for AVX-512: clamped to AVX2, with a warning.
//! let avx2 = CpuFeatures::SSE2 | CpuFeatures::AVX | CpuFeatures::AVX2 | CpuFeatures::FMA;
//! let policy = CpuPolicy::new(avx2, Some("avx512"));
//! assert_eq!(policy.capability(), Capability::Avx2);
//! assert!(policy.warning().unwrap().contains("clamped to avx2"));
//! // So an AVX-512 variant is never chosen, and the dump says why.
//! let variants = [CpuFeatures::AVX2 | CpuFeatures::FMA, CpuFeatures::AVX512F];
//! assert_eq!(policy.choose(&variants), Some(0));
//! assert_eq!(policy.verdict(variants[1]).to_string(), "not chosen: CPU lacks avx512f");
//! ```

use std::fmt;
use std::sync::OnceLock;

/// Declares the CPU features from [`the table below`](cpu_features): the `CpuFeatures` flags,
/// `FEATURE_NAMES`, the set of each architecture, and `detect`, so that each feature is written
/// once.
///
/// One row per feature: `FLAG = bit, "name", architecture;`. Features are numbered oldest first
/// (`CpuPolicy::choose` prefers a variant needing a newer one).
macro_rules! cpu_features {
    ($(
        $(#[doc = $doc:literal])*
        $flag:ident = $bit:literal, $name:tt, $arch:ident;
    )*) => {
        bitflags::bitflags! {
            /// CPU features a kernel variant needs (`cpu = "avx2,fma"`), by the names
            /// `#[target_feature]` and the standard library's runtime detection use.
            #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
            pub struct CpuFeatures: u32 {
                $(
                    #[doc = concat!(stringify!($arch), " `", $name, "`.")]
                    $(#[doc = $doc])*
                    const $flag = 1 << $bit;
                )*
            }
        }

        /// Each feature's name as written in `cpu = "…"` and
        /// `#[target_feature(enable = "…")]`.
        ///
        /// **Invariant:** the `#[kernel]` macro accepts exactly these names
        /// (`macros/src/cpu.rs`); the test `tests/tests/simd_dispatch.rs` registers a variant for
        /// each.
        pub const FEATURE_NAMES: [(CpuFeatures, &str); [$($bit),*].len()] =
            [$((CpuFeatures::$flag, $name)),*];

        /// Every x86 feature.
        const X86_ALL: CpuFeatures = CpuFeatures::empty() $(.union(of_arch!(x86, $arch, $flag)))*;

        /// The features of the running CPU that the table names, by the standard library's
        /// runtime detection (a feature of another architecture is never detected).
        #[allow(unused_mut)] // on an architecture with no row
        fn detect() -> CpuFeatures {
            let mut found = CpuFeatures::empty();
            $(probe!($arch, $name, $flag, found);)*
            found
        }
    };
}

/// `CpuFeatures::$flag` if the row's architecture is the one asked for, else nothing.
macro_rules! of_arch {
    (x86, x86, $flag:ident) => {
        CpuFeatures::$flag
    };
    (aarch64, aarch64, $flag:ident) => {
        CpuFeatures::$flag
    };
    (wasm32, wasm32, $flag:ident) => {
        CpuFeatures::$flag
    };
    ($asked:ident, $arch:ident, $flag:ident) => {
        CpuFeatures::empty()
    };
}

/// Adds `$flag` to `$found` if the running CPU has `$name` (compiled only for its architecture).
/// `$name` is a `tt`: std's detection macros match the literal itself, which a `literal`
/// fragment would hide. WebAssembly has no runtime detection: a module either was compiled with
/// a feature (and an engine without it refuses the whole module) or was not, so a wasm32 feature
/// is present exactly when it was enabled at compile time.
macro_rules! probe {
    (x86, $name:tt, $flag:ident, $found:ident) => {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if std::arch::is_x86_feature_detected!($name) {
            $found |= CpuFeatures::$flag;
        }
    };
    (aarch64, $name:tt, $flag:ident, $found:ident) => {
        #[cfg(target_arch = "aarch64")]
        if std::arch::is_aarch64_feature_detected!($name) {
            $found |= CpuFeatures::$flag;
        }
    };
    (wasm32, $name:tt, $flag:ident, $found:ident) => {
        #[cfg(all(target_arch = "wasm32", target_feature = $name))]
        {
            $found |= CpuFeatures::$flag;
        }
    };
}

cpu_features! {
    SSE2 = 0, "sse2", x86;
    SSE3 = 1, "sse3", x86;
    SSSE3 = 2, "ssse3", x86;
    SSE4_1 = 3, "sse4.1", x86;
    SSE4_2 = 4, "sse4.2", x86;
    POPCNT = 5, "popcnt", x86;
    AVX = 6, "avx", x86;
    AVX2 = 7, "avx2", x86;
    FMA = 8, "fma", x86;
    F16C = 9, "f16c", x86;
    BMI1 = 10, "bmi1", x86;
    BMI2 = 11, "bmi2", x86;
    AVX512F = 12, "avx512f", x86;
    AVX512CD = 13, "avx512cd", x86;
    AVX512BW = 14, "avx512bw", x86;
    AVX512DQ = 15, "avx512dq", x86;
    AVX512VL = 16, "avx512vl", x86;
    /// (Advanced SIMD.)
    NEON = 17, "neon", aarch64;
    /// (The 128-bit SIMD proposal; present when the module was compiled with it.)
    SIMD128 = 18, "simd128", wasm32;
}

/// The AVX-512 features: what the `avx512` level allows beyond `avx2`.
const X86_AVX512: CpuFeatures = CpuFeatures::AVX512F
    .union(CpuFeatures::AVX512CD)
    .union(CpuFeatures::AVX512BW)
    .union(CpuFeatures::AVX512DQ)
    .union(CpuFeatures::AVX512VL);

impl fmt::Display for CpuFeatures {
    /// `avx2,fma`, as written in `cpu = "…"`; `-` for none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        let mut first = true;
        for (flag, name) in FEATURE_NAMES {
            if self.contains(flag) {
                if !first {
                    f.write_str(",")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CpuFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuFeatures({self})")
    }
}

/// The features of the running CPU, detected once with the standard library's runtime detection
/// (which also checks that the OS saves the wider registers).
pub fn detected() -> CpuFeatures {
    static DETECTED: OnceLock<CpuFeatures> = OnceLock::new();
    *DETECTED.get_or_init(detect)
}

/// A level of `SWITCHYARD_CPU_CAPABILITY`: the most a variant may need. Levels are ordered
/// within an architecture (`default < avx2 < avx512`, `default < neon`, `default < simd128`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Capability {
    /// No ISA-specific variant: only kernels that name no CPU feature (`CpuSimd` falls through to
    /// the scalar backend for ops whose SIMD kernels all need features).
    Default,
    /// x86 up to AVX2 (with FMA, F16C, BMI): no AVX-512.
    Avx2,
    /// x86 including AVX-512.
    Avx512,
    /// aarch64 NEON.
    Neon,
    /// wasm32 SIMD (`simd128`), where the module was compiled with it.
    Simd128,
}

impl Capability {
    /// Every level, from the highest to the lowest.
    pub const ALL: [Capability; 5] = [
        Capability::Avx512,
        Capability::Avx2,
        Capability::Neon,
        Capability::Simd128,
        Capability::Default,
    ];

    /// The name `SWITCHYARD_CPU_CAPABILITY` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Capability::Default => "default",
            Capability::Avx2 => "avx2",
            Capability::Avx512 => "avx512",
            Capability::Neon => "neon",
            Capability::Simd128 => "simd128",
        }
    }

    /// The level called `name` (ASCII case and surrounding space ignored).
    pub fn parse(name: &str) -> Option<Capability> {
        let name = name.trim();
        Capability::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }

    /// The features a variant may need at this level.
    pub const fn allows(self) -> CpuFeatures {
        match self {
            Capability::Default => CpuFeatures::empty(),
            Capability::Avx2 => X86_ALL.difference(X86_AVX512),
            Capability::Avx512 => X86_ALL,
            Capability::Neon => CpuFeatures::NEON,
            Capability::Simd128 => CpuFeatures::SIMD128,
        }
    }

    /// The features a CPU must have to reach this level.
    const fn requires(self) -> CpuFeatures {
        match self {
            Capability::Default => CpuFeatures::empty(),
            Capability::Avx2 => CpuFeatures::AVX2.union(CpuFeatures::FMA),
            Capability::Avx512 => CpuFeatures::AVX2
                .union(CpuFeatures::FMA)
                .union(CpuFeatures::AVX512F),
            Capability::Neon => CpuFeatures::NEON,
            Capability::Simd128 => CpuFeatures::SIMD128,
        }
    }

    /// The highest level a CPU with `features` reaches.
    pub fn of(features: CpuFeatures) -> Capability {
        Capability::ALL
            .into_iter()
            .find(|c| features.contains(c.requires()))
            .unwrap_or(Capability::Default)
    }

    /// The lowest level whose `allows` covers `needs`: how a variant ranks.
    fn rank(needs: CpuFeatures) -> u8 {
        match Capability::ALL
            .into_iter()
            .rev()
            .find(|c| c.allows().contains(needs))
        {
            Some(Capability::Default) => 0,
            Some(Capability::Avx2 | Capability::Neon | Capability::Simd128) => 1,
            Some(Capability::Avx512) => 2,
            None => 3,
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The environment variable that lowers the choice of CPU variants.
pub const CAPABILITY_VAR: &str = "SWITCHYARD_CPU_CAPABILITY";

/// Which CPU variants may be installed: the detected features, capped by the override.
#[derive(Clone, Debug)]
pub struct CpuPolicy {
    detected: CpuFeatures,
    requested: Option<Capability>,
    capability: Capability,
    warning: Option<String>,
}

/// Why a variant was or was not installed; what the table dump shows under its key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// Installed.
    Chosen,
    /// Runnable here, but another variant of the key ranks higher.
    Outranked,
    /// The CPU lacks these features.
    Lacks(CpuFeatures),
    /// The CPU has the features, but `SWITCHYARD_CPU_CAPABILITY` caps the choice below them.
    Capped(Capability),
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Chosen => f.write_str("chosen"),
            Verdict::Outranked => f.write_str("not chosen: a higher variant runs here"),
            Verdict::Lacks(missing) => write!(f, "not chosen: CPU lacks {missing}"),
            Verdict::Capped(cap) => {
                write!(f, "not chosen: capped by {CAPABILITY_VAR}={cap}")
            }
        }
    }
}

impl CpuPolicy {
    /// The policy for a CPU with `detected` features and the override value `request` (`None`
    /// when unset). Pure: tests call it with made-up CPUs.
    pub fn new(detected: CpuFeatures, request: Option<&str>) -> CpuPolicy {
        let best = Capability::of(detected);
        let mut policy = CpuPolicy {
            detected,
            requested: None,
            capability: best,
            warning: None,
        };
        let Some(request) = request.filter(|r| !r.trim().is_empty()) else {
            return policy;
        };
        let Some(asked) = Capability::parse(request) else {
            policy.warning = Some(format!(
                "switchyard: unknown {CAPABILITY_VAR}={request:?} (expected default, avx2, \
                 avx512, neon or simd128); using the detected {best}"
            ));
            return policy;
        };
        // The highest level covered by both the request and the CPU: never above either.
        let usable = asked.allows() & best.allows();
        let capability = Capability::ALL
            .into_iter()
            .find(|c| usable.contains(c.allows()))
            .unwrap_or(Capability::Default);
        if capability != asked {
            let why = if usable.is_empty() {
                "is for another architecture than this CPU"
            } else {
                "is above what this CPU supports"
            };
            policy.warning = Some(format!(
                "switchyard: {CAPABILITY_VAR}={asked} {why} ({best}); clamped to {capability}"
            ));
        }
        policy.requested = Some(asked);
        policy.capability = capability;
        policy
    }

    /// The running process's policy: detected once, the override read once (a warning, if any,
    /// is printed once to stderr).
    pub fn current() -> &'static CpuPolicy {
        static CURRENT: OnceLock<CpuPolicy> = OnceLock::new();
        CURRENT.get_or_init(|| {
            let request = std::env::var(CAPABILITY_VAR).ok();
            let policy = CpuPolicy::new(detected(), request.as_deref());
            if let Some(warning) = &policy.warning {
                crate::diag::stderr_line(format_args!("{warning}"));
            }
            policy
        })
    }

    /// The CPU's features.
    pub fn detected(&self) -> CpuFeatures {
        self.detected
    }

    /// The level in force: the detected one, or the (clamped) override.
    pub fn capability(&self) -> Capability {
        self.capability
    }

    /// The override, if one was given and understood.
    pub fn requested(&self) -> Option<Capability> {
        self.requested
    }

    /// The one-line warning for an override that was clamped or not understood.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Whether a variant needing `needs` may be installed, and if not, why (before ranking).
    fn admits(&self, needs: CpuFeatures) -> Result<(), Verdict> {
        let missing = needs - self.detected;
        if !missing.is_empty() {
            return Err(Verdict::Lacks(missing));
        }
        // Without an override nothing caps: every detected feature may be used.
        match self.requested {
            Some(_) if !self.capability.allows().contains(needs) => {
                Err(Verdict::Capped(self.capability))
            }
            _ => Ok(()),
        }
    }

    /// The variant to install among variants needing `variants[i]`, or `None` when none may run
    /// here. The best is the one of the highest level (`avx512` over `avx2` over `default`), then
    /// the one needing the newest feature (features are numbered oldest first), then the one
    /// needing more features, then the first (callers pass variants sorted: deterministic).
    pub fn choose(&self, variants: &[CpuFeatures]) -> Option<usize> {
        let mut best: Option<(usize, (u8, u32, u32))> = None;
        for (i, &needs) in variants.iter().enumerate() {
            if self.admits(needs).is_err() {
                continue;
            }
            let bits = needs.bits();
            let rank = (
                Capability::rank(needs),
                u32::BITS - bits.leading_zeros(),
                bits.count_ones(),
            );
            if best.is_none_or(|(_, r)| rank > r) {
                best = Some((i, rank));
            }
        }
        best.map(|(i, _)| i)
    }

    /// What happened to a variant needing `needs`, given the variant that `choose` picked among
    /// its key's variants. [`Verdict::Chosen`] is for the caller to tell; this says why not.
    pub fn verdict(&self, needs: CpuFeatures) -> Verdict {
        match self.admits(needs) {
            Ok(()) => Verdict::Outranked,
            Err(verdict) => verdict,
        }
    }
}

impl fmt::Display for CpuPolicy {
    /// `cpu: avx512 (detected sse2,…; SWITCHYARD_CPU_CAPABILITY unset)`; on wasm32 built
    /// without `simd128`, `…; wasm32 built without simd128: no SIMD kernels)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cpu: {} (detected {}; ", self.capability, self.detected)?;
        match self.requested {
            Some(asked) => write!(f, "{CAPABILITY_VAR}={asked}")?,
            None => write!(f, "{CAPABILITY_VAR} unset")?,
        }
        // WebAssembly decides at compile time: say which build this is.
        if cfg!(target_arch = "wasm32") && !cfg!(target_feature = "simd128") {
            f.write_str("; wasm32 built without simd128: no SIMD kernels")?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests;
