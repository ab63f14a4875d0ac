//! [`Kernel`]: one entry point of a WGSL module, whose compute pipeline is built at its first
//! launch and kept for the life of the process. Our own kernels (`shaders.rs`) and any other
//! crate's are the same kind of `static`.
//!
//! Every kernel binds, in group 0 and in order, its input arrays (read-only storage, bindings
//! `0..inputs`), its output array (read-write storage, binding `inputs`) and the [`Params`]
//! uniform (binding `inputs + 1`) at a dynamic offset, so one uniform buffer serves a whole batch
//! of dispatches (see `context.rs`). So one bind group layout per number of inputs serves every
//! kernel, built when a kernel with that many inputs is first compiled.
//!
//! The pipeline is cached in the kernel's own `static`, so two kernels never share one, whatever
//! their names or crates. The compiled module is shared between kernels whose WGSL text is the
//! same (the cache is keyed by the text itself, so equal keys are equal programs).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use super::layout::PARAMS_SIZE;

/// The most input arrays a kernel binds (with its output, the 8 storage buffers per shader stage
/// that wgpu's default limits allow; an adapter with fewer refuses kernels that bind more).
pub const MAX_INPUTS: usize = 7;

/// The head that kernels over strided operands start with (ours and any crate's): the `Params`
/// struct ([`Params`] in Rust), `const WORKGROUP: u32 = 256u` ([`WORKGROUP`]), `index(wg,
/// groups, local)` (the flat invocation index on a [`grid`]) and `offsets(i)` / `offsets3(i)`
/// (where element `i` of the output's shape lies in the operands `x`, `y`, `z`). Put it first
/// in [`Kernel::new`]'s sources; a kernel's own WGSL must not redefine those names.
///
/// [`Params`]: super::Params
/// [`WORKGROUP`]: super::WORKGROUP
/// [`grid`]: super::grid
pub const PRELUDE: &str = include_str!("shaders/strided.wgsl");

/// A compute kernel: the entry point `entry_point` of the WGSL module made of `sources`
/// concatenated (WGSL has no includes), binding `inputs` input arrays, then its output array,
/// then the [`Params`](super::Params) uniform (see the [module docs](super#writing-a-gpu-kernel)).
///
/// Declare it as a `static`: its pipeline is compiled at the first launch and kept in the static,
/// so it is compiled once per process and never confused with another crate's kernel.
///
/// ```
/// use switchyard_backends::wgpu::{Kernel, PRELUDE};
///
/// static DOUBLE: Kernel = Kernel::new(&[PRELUDE, "/* WGSL with `fn double` */"], "double", 1);
/// assert_eq!((DOUBLE.entry_point(), DOUBLE.inputs()), ("double", 1));
/// ```
pub struct Kernel {
    sources: &'static [&'static str],
    entry_point: &'static str,
    inputs: usize,
    /// Built at the first launch; a WGSL or validation error is kept and returned by every launch.
    pipeline: OnceLock<Result<wgpu::ComputePipeline, String>>,
}

impl Kernel {
    /// The kernel `entry_point` of the module `sources` (concatenated), with `inputs` input
    /// arrays. Panics (at compile time, in a `static`) when `inputs` exceeds [`MAX_INPUTS`].
    pub const fn new(
        sources: &'static [&'static str],
        entry_point: &'static str,
        inputs: usize,
    ) -> Kernel {
        assert!(
            inputs <= MAX_INPUTS,
            "a wgpu kernel binds at most MAX_INPUTS (7) input arrays"
        );
        Kernel {
            sources,
            entry_point,
            inputs,
            pipeline: OnceLock::new(),
        }
    }

    /// The WGSL function the kernel runs.
    pub fn entry_point(&self) -> &'static str {
        self.entry_point
    }

    /// Input arrays the kernel binds before its output.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// The compiled pipeline, built on first use against `cache`'s layout for this many inputs;
    /// or why WGSL or wgpu refused it (the same reason at every call).
    pub(crate) fn pipeline(
        &self,
        device: &wgpu::Device,
        cache: &Pipelines,
    ) -> Result<&wgpu::ComputePipeline, &str> {
        self.pipeline
            .get_or_init(|| {
                let module = cache.module(device, self.sources, self.entry_point)?;
                let layout = &cache.layout(device, self.inputs).1;
                captured(device, || {
                    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(self.entry_point),
                        layout: Some(layout),
                        module: &module,
                        entry_point: Some(self.entry_point),
                        compilation_options: wgpu::PipelineCompilationOptions::default(),
                        cache: None,
                    })
                })
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("entry_point", &self.entry_point)
            .field("inputs", &self.inputs)
            .field("compiled", &self.pipeline.get().map(Result::is_ok))
            .finish()
    }
}

/// `make`'s result, or the validation or internal error wgpu reported while it ran (instead of
/// the device's uncaught-error handler, which would report it at the next wait, far from its
/// cause). Error scopes are per thread, so another thread's errors are not caught here.
///
/// On the web an error scope's answer arrives only after control returns to the browser, which
/// a kernel launch cannot wait for: there the error goes to that handler, and the next read
/// returns it.
#[cfg(target_arch = "wasm32")]
fn captured<T>(_device: &wgpu::Device, make: impl FnOnce() -> T) -> Result<T, String> {
    Ok(make())
}

#[cfg(not(target_arch = "wasm32"))]
fn captured<T>(device: &wgpu::Device, make: impl FnOnce() -> T) -> Result<T, String> {
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = make();
    let errors = [validation.pop(), internal.pop()].map(pollster::block_on);
    match errors {
        [None, None] => Ok(value),
        // wgpu's report ends in blank lines; the error it goes into continues after it.
        [Some(e), _] | [None, Some(e)] => Err(e.to_string().trim_end().to_owned()),
    }
}

/// The context's share of the kernels' state: bind group layouts by number of inputs, and
/// compiled modules by their WGSL text.
#[derive(Debug, Default)]
pub(crate) struct Pipelines {
    /// By number of inputs: the bind group layout and the pipeline layout over it.
    layouts: [OnceLock<(wgpu::BindGroupLayout, wgpu::PipelineLayout)>; MAX_INPUTS + 1],
    modules: Mutex<HashMap<String, Result<wgpu::ShaderModule, String>>>,
}

impl Pipelines {
    /// The layouts of kernels with `inputs` input arrays: inputs, output, params.
    pub(crate) fn layout(
        &self,
        device: &wgpu::Device,
        inputs: usize,
    ) -> &(wgpu::BindGroupLayout, wgpu::PipelineLayout) {
        self.layouts[inputs].get_or_init(|| layouts(device, inputs))
    }

    /// The module of `sources` concatenated, compiled once per text (labelled with the entry
    /// point of the kernel that compiled it, which wgpu's errors name).
    fn module(
        &self,
        device: &wgpu::Device,
        sources: &[&str],
        label: &str,
    ) -> Result<wgpu::ShaderModule, String> {
        let text = sources.concat();
        // A poisoned lock still holds whole entries: each is inserted after it is built.
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        modules
            .entry(text)
            .or_insert_with_key(|text| {
                captured(device, || {
                    device.create_shader_module(wgpu::ShaderModuleDescriptor {
                        label: Some(label),
                        source: wgpu::ShaderSource::Wgsl(text.as_str().into()),
                    })
                })
                .map_err(|e| format!("its WGSL does not compile: {e}"))
            })
            .clone()
    }
}

/// The layouts of kernels with `inputs` input arrays: inputs, output, params.
fn layouts(device: &wgpu::Device, inputs: usize) -> (wgpu::BindGroupLayout, wgpu::PipelineLayout) {
    let storage = |binding: usize, read_only: bool| wgpu::BindGroupLayoutEntry {
        binding: binding as u32,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let mut entries: Vec<_> = (0..inputs).map(|i| storage(i, true)).collect();
    entries.push(storage(inputs, false));
    entries.push(wgpu::BindGroupLayoutEntry {
        binding: inputs as u32 + 1,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: wgpu::BufferSize::new(PARAMS_SIZE),
        },
        count: None,
    });
    let bind_group_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("switchyard kernel bindings"),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("switchyard kernel layout"),
        bind_group_layouts: &[Some(&bind_group_layout)],
        immediate_size: 0,
    });
    (bind_group_layout, pipeline_layout)
}
