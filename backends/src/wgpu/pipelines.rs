//! The compute pipelines of the standard ops: one per kernel, compiled at its first use and cached
//! for the life of the process.
//!
//! Every shader binds, in order, its input arrays (read-only storage), its output array
//! (read-write storage) and a 16-byte `Params` uniform at a dynamic offset (so one uniform buffer
//! serves a whole batch of dispatches; see `context.rs`). So three bind group layouts, by number
//! of inputs, serve every kernel.

use std::sync::OnceLock;

/// Invocations per workgroup of the elementwise shaders (`binary.wgsl`, `unary.wgsl`,
/// `fill.wgsl`).
pub(crate) const ELEMENTWISE_WORKGROUP: u64 = 256;
/// Invocations per workgroup of `reduce.wgsl`.
pub(crate) const REDUCE_WORKGROUP: u64 = 256;
/// Elements each invocation of `reduce.wgsl` adds before the workgroup's tree.
pub(crate) const REDUCE_PER_THREAD: u64 = 8;
/// Side of the square tile of `matmul.wgsl`.
pub(crate) const MATMUL_TILE: u64 = 16;
/// Bytes of the `Params` uniform every shader reads.
pub(crate) const PARAMS_SIZE: u64 = 16;

/// One WGSL file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shader {
    Binary,
    Unary,
    Fill,
    Reduce,
    Matmul,
}

impl Shader {
    const COUNT: usize = 5;

    fn source(self) -> &'static str {
        match self {
            Shader::Binary => include_str!("shaders/binary.wgsl"),
            Shader::Unary => include_str!("shaders/unary.wgsl"),
            Shader::Fill => include_str!("shaders/fill.wgsl"),
            Shader::Reduce => include_str!("shaders/reduce.wgsl"),
            Shader::Matmul => include_str!("shaders/matmul.wgsl"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Shader::Binary => "binary.wgsl",
            Shader::Unary => "unary.wgsl",
            Shader::Fill => "fill.wgsl",
            Shader::Reduce => "reduce.wgsl",
            Shader::Matmul => "matmul.wgsl",
        }
    }
}

/// One compute kernel: an entry point of a shader.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kernel {
    Add,
    Sub,
    Mul,
    Div,
    Neg,
    Relu,
    Exp,
    Full,
    SumPass,
    Matmul,
}

impl Kernel {
    const COUNT: usize = 10;

    fn shader(self) -> Shader {
        match self {
            Kernel::Add | Kernel::Sub | Kernel::Mul | Kernel::Div => Shader::Binary,
            Kernel::Neg | Kernel::Relu | Kernel::Exp => Shader::Unary,
            Kernel::Full => Shader::Fill,
            Kernel::SumPass => Shader::Reduce,
            Kernel::Matmul => Shader::Matmul,
        }
    }

    pub(crate) fn entry_point(self) -> &'static str {
        match self {
            Kernel::Add => "add",
            Kernel::Sub => "sub",
            Kernel::Mul => "mul",
            Kernel::Div => "div",
            Kernel::Neg => "neg",
            Kernel::Relu => "relu",
            Kernel::Exp => "exponential",
            Kernel::Full => "full",
            Kernel::SumPass => "sum_pass",
            Kernel::Matmul => "matmul",
        }
    }

    /// Input arrays the kernel binds before its output.
    pub(crate) fn inputs(self) -> usize {
        match self.shader() {
            Shader::Binary | Shader::Matmul => 2,
            Shader::Unary | Shader::Reduce => 1,
            Shader::Fill => 0,
        }
    }
}

/// Layouts built with the context; shader modules and pipelines built at first use.
#[derive(Debug)]
pub(crate) struct Pipelines {
    /// By number of inputs: the bind group layout and the pipeline layout over it.
    layouts: [(wgpu::BindGroupLayout, wgpu::PipelineLayout); 3],
    modules: [OnceLock<wgpu::ShaderModule>; Shader::COUNT],
    pipelines: [OnceLock<wgpu::ComputePipeline>; Kernel::COUNT],
}

impl Pipelines {
    pub(crate) fn new(device: &wgpu::Device) -> Pipelines {
        Pipelines {
            layouts: [0, 1, 2].map(|inputs| layouts(device, inputs)),
            modules: Default::default(),
            pipelines: Default::default(),
        }
    }

    /// The bind group layout of kernels with `inputs` input arrays.
    pub(crate) fn bind_group_layout(&self, inputs: usize) -> &wgpu::BindGroupLayout {
        &self.layouts[inputs].0
    }

    /// The pipeline of `kernel`, compiled on first use.
    pub(crate) fn get(&self, device: &wgpu::Device, kernel: Kernel) -> &wgpu::ComputePipeline {
        self.pipelines[kernel as usize].get_or_init(|| {
            let shader = kernel.shader();
            // Compile the WGSL file once, for all its entry points.
            let module = self.modules[shader as usize].get_or_init(|| {
                device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(shader.name()),
                    source: wgpu::ShaderSource::Wgsl(shader.source().into()),
                })
            });
            // Build the pipeline for this entry point against the shared layout.
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(kernel.entry_point()),
                layout: Some(&self.layouts[kernel.inputs()].1),
                module,
                entry_point: Some(kernel.entry_point()),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                cache: None,
            })
        })
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
