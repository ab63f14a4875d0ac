//! The compute pipelines of the standard ops: one per kernel, compiled at its first use and cached
//! for the life of the process.
//!
//! Every shader binds, in order, its input arrays (read-only storage), its output array
//! (read-write storage) and a `Params` uniform at a dynamic offset (so one uniform buffer serves a
//! whole batch of dispatches; see `context.rs`). So three bind group layouts, by number of inputs,
//! serve every kernel.
//!
//! Elementwise ops have two shaders each: the plain one (`binary.wgsl`, `unary.wgsl`) for operands
//! that are contiguous from the start of their buffer and of the output's shape, the fast and
//! common case; and a strided one (`strided_*.wgsl`) for views and broadcasting, which reads each
//! operand through its offset and strides.

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
/// Bytes of the `Params` uniform every shader binds (`strided.wgsl` and `matmul.wgsl` read all of
/// it; the others read its first 16 bytes).
pub(crate) const PARAMS_SIZE: u64 = 128;
/// Dimensions the strided shaders index (`Params::sizes` and the strides hold this many).
pub(crate) const MAX_RANK: usize = 8;

/// One WGSL file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shader {
    Binary,
    Unary,
    Fill,
    Reduce,
    Matmul,
    StridedUnary,
    StridedBinary,
}

impl Shader {
    const COUNT: usize = 7;

    fn source(self) -> &'static str {
        match self {
            Shader::Binary => include_str!("shaders/binary.wgsl"),
            Shader::Unary => include_str!("shaders/unary.wgsl"),
            Shader::Fill => include_str!("shaders/fill.wgsl"),
            Shader::Reduce => include_str!("shaders/reduce.wgsl"),
            Shader::Matmul => include_str!("shaders/matmul.wgsl"),
            // WGSL has no includes: the strided shaders share their head by concatenation.
            Shader::StridedUnary => concat!(
                include_str!("shaders/strided.wgsl"),
                include_str!("shaders/strided_unary.wgsl")
            ),
            Shader::StridedBinary => concat!(
                include_str!("shaders/strided.wgsl"),
                include_str!("shaders/strided_binary.wgsl")
            ),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Shader::Binary => "binary.wgsl",
            Shader::Unary => "unary.wgsl",
            Shader::Fill => "fill.wgsl",
            Shader::Reduce => "reduce.wgsl",
            Shader::Matmul => "matmul.wgsl",
            Shader::StridedUnary => "strided_unary.wgsl",
            Shader::StridedBinary => "strided_binary.wgsl",
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
    AddStrided,
    SubStrided,
    MulStrided,
    DivStrided,
    NegStrided,
    ReluStrided,
    ExpStrided,
    /// Gathers a view into a contiguous buffer.
    CopyStrided,
    /// Writes a view of the source into a view of the destination (`copy_`): the binding `out`
    /// is the destination's whole buffer, written at the offsets of the second operand's layout.
    ScatterStrided,
}

impl Kernel {
    const COUNT: usize = 19;

    /// The strided kernel that computes what this one does over views: the twin of a plain
    /// elementwise kernel, itself for a strided one, `None` for kernels with no strided form.
    pub(crate) fn strided(self) -> Option<Kernel> {
        match self {
            Kernel::Add => Some(Kernel::AddStrided),
            Kernel::Sub => Some(Kernel::SubStrided),
            Kernel::Mul => Some(Kernel::MulStrided),
            Kernel::Div => Some(Kernel::DivStrided),
            Kernel::Neg => Some(Kernel::NegStrided),
            Kernel::Relu => Some(Kernel::ReluStrided),
            Kernel::Exp => Some(Kernel::ExpStrided),
            Kernel::Full | Kernel::SumPass | Kernel::Matmul => None,
            Kernel::AddStrided
            | Kernel::SubStrided
            | Kernel::MulStrided
            | Kernel::DivStrided
            | Kernel::NegStrided
            | Kernel::ReluStrided
            | Kernel::ExpStrided
            | Kernel::CopyStrided
            | Kernel::ScatterStrided => Some(self),
        }
    }

    fn shader(self) -> Shader {
        match self {
            Kernel::Add | Kernel::Sub | Kernel::Mul | Kernel::Div => Shader::Binary,
            Kernel::Neg | Kernel::Relu | Kernel::Exp => Shader::Unary,
            Kernel::Full => Shader::Fill,
            Kernel::SumPass => Shader::Reduce,
            Kernel::Matmul => Shader::Matmul,
            Kernel::AddStrided | Kernel::SubStrided | Kernel::MulStrided | Kernel::DivStrided => {
                Shader::StridedBinary
            }
            Kernel::NegStrided
            | Kernel::ReluStrided
            | Kernel::ExpStrided
            | Kernel::CopyStrided
            | Kernel::ScatterStrided => Shader::StridedUnary,
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
            Kernel::AddStrided => "add_strided",
            Kernel::SubStrided => "sub_strided",
            Kernel::MulStrided => "mul_strided",
            Kernel::DivStrided => "div_strided",
            Kernel::NegStrided => "neg_strided",
            Kernel::ReluStrided => "relu_strided",
            Kernel::ExpStrided => "exp_strided",
            Kernel::CopyStrided => "copy_strided",
            Kernel::ScatterStrided => "scatter_strided",
        }
    }

    /// Input arrays the kernel binds before its output.
    pub(crate) fn inputs(self) -> usize {
        match self.shader() {
            Shader::Binary | Shader::Matmul | Shader::StridedBinary => 2,
            Shader::Unary | Shader::Reduce | Shader::StridedUnary => 1,
            Shader::Fill => 0,
        }
    }
}

// The caches are arrays indexed by discriminant: each `COUNT` must cover the last variant.
const _: () = assert!(Shader::StridedBinary as usize + 1 == Shader::COUNT);
const _: () = assert!(Kernel::ScatterStrided as usize + 1 == Kernel::COUNT);

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
