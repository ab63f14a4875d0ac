//! The compute pipelines of the standard ops: one per kernel, compiled at its first use and cached
//! for the life of the process.
//!
//! Every shader binds, in order, its input arrays (read-only storage), its output array
//! (read-write storage) and a `Params` uniform at a dynamic offset (so one uniform buffer serves a
//! whole batch of dispatches; see `context.rs`). So four bind group layouts, by number of inputs
//! (none for the factories, three for `where`), serve every kernel.
//!
//! Elementwise ops have two shaders each: the plain one (`binary.wgsl`, `unary.wgsl`) for operands
//! that are contiguous from the start of their buffer and of the output's shape, the fast and
//! common case; and a strided one (`strided_*.wgsl`) for views and broadcasting, which reads each
//! operand through its offset and strides.
//!
//! Kernels that move or select values without computing on them (gathers, `copy_` of `bool` and
//! `i64`, comparisons, `where`, conversions) bind their arrays as `array<u32>` (the `words_*`,
//! `compare`, `where` shaders): a value's bits go through untouched (NaN payloads, `-0.0`,
//! subnormals on GPUs that flush them in float arithmetic), and `bool` and `i64` tensors, which
//! are 32-bit words on the GPU (see `storage.rs`), share them.

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
/// Bytes of the `Params` uniform every shader binds (`strided.wgsl` reads all of it, `matmul.wgsl`
/// its first 128 bytes, the others their first 16).
pub(crate) const PARAMS_SIZE: u64 = 160;
/// Dimensions the strided shaders index (`Params::sizes` and the strides hold this many).
pub(crate) const MAX_RANK: usize = 8;

/// One WGSL file (some with a shared head or helpers prepended).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shader {
    Binary,
    Unary,
    Fill,
    Reduce,
    Matmul,
    StridedUnary,
    StridedBinary,
    WordsUnary,
    Compare,
    Where,
    ReduceDim,
    Factories,
}

impl Shader {
    const COUNT: usize = 12;

    fn source(self) -> &'static str {
        // WGSL has no includes: shared heads and helpers are prepended by concatenation.
        match self {
            Shader::Binary => include_str!("shaders/binary.wgsl"),
            Shader::Unary => concat!(
                include_str!("shaders/math.wgsl"),
                include_str!("shaders/unary.wgsl")
            ),
            Shader::Fill => include_str!("shaders/fill.wgsl"),
            Shader::Reduce => include_str!("shaders/reduce.wgsl"),
            Shader::Matmul => include_str!("shaders/matmul.wgsl"),
            Shader::StridedUnary => concat!(
                include_str!("shaders/strided.wgsl"),
                include_str!("shaders/math.wgsl"),
                include_str!("shaders/strided_unary.wgsl")
            ),
            Shader::StridedBinary => concat!(
                include_str!("shaders/strided.wgsl"),
                include_str!("shaders/strided_binary.wgsl")
            ),
            Shader::WordsUnary => concat!(
                include_str!("shaders/strided.wgsl"),
                include_str!("shaders/words.wgsl"),
                include_str!("shaders/words_unary.wgsl")
            ),
            Shader::Compare => concat!(
                include_str!("shaders/strided.wgsl"),
                include_str!("shaders/words.wgsl"),
                include_str!("shaders/compare.wgsl")
            ),
            Shader::Where => concat!(
                include_str!("shaders/strided.wgsl"),
                include_str!("shaders/where.wgsl")
            ),
            Shader::ReduceDim => concat!(
                include_str!("shaders/words.wgsl"),
                include_str!("shaders/reduce_dim.wgsl")
            ),
            Shader::Factories => concat!(
                include_str!("shaders/math.wgsl"),
                include_str!("shaders/words.wgsl"),
                include_str!("shaders/factories.wgsl")
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
            Shader::WordsUnary => "words_unary.wgsl",
            Shader::Compare => "compare.wgsl",
            Shader::Where => "where.wgsl",
            Shader::ReduceDim => "reduce_dim.wgsl",
            Shader::Factories => "factories.wgsl",
        }
    }

    /// Input arrays its kernels bind before their output.
    fn inputs(self) -> usize {
        match self {
            Shader::Fill | Shader::Factories => 0,
            Shader::Unary
            | Shader::Reduce
            | Shader::StridedUnary
            | Shader::WordsUnary
            | Shader::ReduceDim => 1,
            Shader::Binary | Shader::Matmul | Shader::StridedBinary | Shader::Compare => 2,
            Shader::Where => 3,
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
    Log,
    Tanh,
    Sigmoid,
    Sqrt,
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
    LogStrided,
    TanhStrided,
    SigmoidStrided,
    SqrtStrided,
    /// Gathers a view into a contiguous buffer.
    CopyStrided,
    /// Writes a view of the source into a view of the destination (`copy_`): the binding `out`
    /// is the destination's whole buffer, written at the offsets of the second operand's layout.
    ScatterStrided,
    /// [`Kernel::CopyStrided`] and [`Kernel::ScatterStrided`] of 32-bit words (`bool`, and
    /// `i64` as a view of its words).
    GatherWords,
    ScatterWords,
    /// `to_dtype` between the dtypes the backend holds.
    F32ToBool,
    BoolToF32,
    BoolToI64,
    I64ToBool,
    F32ToI64,
    I64ToF32,
    /// The comparisons (`params.k` picks which) of two operands of one dtype.
    CompareF32,
    CompareBool,
    CompareI64,
    /// `where`: a `bool` condition picks each word from one of two values.
    WhereWords,
    /// Reductions of each row of a contiguous `[rows, n]` matrix.
    SumRows,
    MaxRows,
    ArgmaxRows,
    /// The factories: `arange`, `rand`, `randn`.
    ArangeF32,
    ArangeI64,
    RandF32,
    RandnF32,
    /// `full` of `bool` and `i64`: one or two words repeated.
    FillWords,
}

impl Kernel {
    const COUNT: usize = 47;

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
            Kernel::Log => Some(Kernel::LogStrided),
            Kernel::Tanh => Some(Kernel::TanhStrided),
            Kernel::Sigmoid => Some(Kernel::SigmoidStrided),
            Kernel::Sqrt => Some(Kernel::SqrtStrided),
            Kernel::Full
            | Kernel::SumPass
            | Kernel::Matmul
            | Kernel::SumRows
            | Kernel::MaxRows
            | Kernel::ArgmaxRows
            | Kernel::ArangeF32
            | Kernel::ArangeI64
            | Kernel::RandF32
            | Kernel::RandnF32
            | Kernel::FillWords => None,
            Kernel::AddStrided
            | Kernel::SubStrided
            | Kernel::MulStrided
            | Kernel::DivStrided
            | Kernel::NegStrided
            | Kernel::ReluStrided
            | Kernel::ExpStrided
            | Kernel::LogStrided
            | Kernel::TanhStrided
            | Kernel::SigmoidStrided
            | Kernel::SqrtStrided
            | Kernel::CopyStrided
            | Kernel::ScatterStrided
            | Kernel::GatherWords
            | Kernel::ScatterWords
            | Kernel::F32ToBool
            | Kernel::BoolToF32
            | Kernel::BoolToI64
            | Kernel::I64ToBool
            | Kernel::F32ToI64
            | Kernel::I64ToF32
            | Kernel::CompareF32
            | Kernel::CompareBool
            | Kernel::CompareI64
            | Kernel::WhereWords => Some(self),
        }
    }

    fn shader(self) -> Shader {
        match self {
            Kernel::Add | Kernel::Sub | Kernel::Mul | Kernel::Div => Shader::Binary,
            Kernel::Neg
            | Kernel::Relu
            | Kernel::Exp
            | Kernel::Log
            | Kernel::Tanh
            | Kernel::Sigmoid
            | Kernel::Sqrt => Shader::Unary,
            Kernel::Full => Shader::Fill,
            Kernel::SumPass => Shader::Reduce,
            Kernel::Matmul => Shader::Matmul,
            Kernel::AddStrided | Kernel::SubStrided | Kernel::MulStrided | Kernel::DivStrided => {
                Shader::StridedBinary
            }
            Kernel::NegStrided
            | Kernel::ReluStrided
            | Kernel::ExpStrided
            | Kernel::LogStrided
            | Kernel::TanhStrided
            | Kernel::SigmoidStrided
            | Kernel::SqrtStrided
            | Kernel::CopyStrided
            | Kernel::ScatterStrided => Shader::StridedUnary,
            Kernel::GatherWords
            | Kernel::ScatterWords
            | Kernel::F32ToBool
            | Kernel::BoolToF32
            | Kernel::BoolToI64
            | Kernel::I64ToBool
            | Kernel::F32ToI64
            | Kernel::I64ToF32 => Shader::WordsUnary,
            Kernel::CompareF32 | Kernel::CompareBool | Kernel::CompareI64 => Shader::Compare,
            Kernel::WhereWords => Shader::Where,
            Kernel::SumRows | Kernel::MaxRows | Kernel::ArgmaxRows => Shader::ReduceDim,
            Kernel::ArangeF32
            | Kernel::ArangeI64
            | Kernel::RandF32
            | Kernel::RandnF32
            | Kernel::FillWords => Shader::Factories,
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
            Kernel::Log => "logarithm",
            Kernel::Tanh => "hyperbolic_tangent",
            Kernel::Sigmoid => "sigmoid",
            Kernel::Sqrt => "square_root",
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
            Kernel::LogStrided => "log_strided",
            Kernel::TanhStrided => "tanh_strided",
            Kernel::SigmoidStrided => "sigmoid_strided",
            Kernel::SqrtStrided => "sqrt_strided",
            Kernel::CopyStrided => "copy_strided",
            Kernel::ScatterStrided => "scatter_strided",
            Kernel::GatherWords => "gather_words",
            Kernel::ScatterWords => "scatter_words",
            Kernel::F32ToBool => "f32_to_bool",
            Kernel::BoolToF32 => "bool_to_f32",
            Kernel::BoolToI64 => "bool_to_i64",
            Kernel::I64ToBool => "i64_to_bool",
            Kernel::F32ToI64 => "f32_to_i64",
            Kernel::I64ToF32 => "i64_to_f32",
            Kernel::CompareF32 => "compare_f32",
            Kernel::CompareBool => "compare_bool",
            Kernel::CompareI64 => "compare_i64",
            Kernel::WhereWords => "where_words",
            Kernel::SumRows => "sum_rows",
            Kernel::MaxRows => "max_rows",
            Kernel::ArgmaxRows => "argmax_rows",
            Kernel::ArangeF32 => "arange_f32",
            Kernel::ArangeI64 => "arange_i64",
            Kernel::RandF32 => "rand_f32",
            Kernel::RandnF32 => "randn_f32",
            Kernel::FillWords => "fill_words",
        }
    }

    /// Input arrays the kernel binds before its output.
    pub(crate) fn inputs(self) -> usize {
        self.shader().inputs()
    }
}

// The caches are arrays indexed by discriminant: each `COUNT` must cover the last variant.
const _: () = assert!(Shader::Factories as usize + 1 == Shader::COUNT);
const _: () = assert!(Kernel::FillWords as usize + 1 == Kernel::COUNT);

/// Layouts built with the context; shader modules and pipelines built at first use.
#[derive(Debug)]
pub(crate) struct Pipelines {
    /// By number of inputs: the bind group layout and the pipeline layout over it.
    layouts: [(wgpu::BindGroupLayout, wgpu::PipelineLayout); 4],
    modules: [OnceLock<wgpu::ShaderModule>; Shader::COUNT],
    pipelines: [OnceLock<wgpu::ComputePipeline>; Kernel::COUNT],
}

impl Pipelines {
    pub(crate) fn new(device: &wgpu::Device) -> Pipelines {
        Pipelines {
            layouts: [0, 1, 2, 3].map(|inputs| layouts(device, inputs)),
            modules: Default::default(),
            // `Default` covers arrays of at most 32 elements.
            pipelines: std::array::from_fn(|_| OnceLock::new()),
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
