// The shared head of the strided shaders (`strided_unary.wgsl`, `strided_binary.wgsl`,
// `words_unary.wgsl`, `compare.wgsl`, `where.wgsl`; the pipelines prepend it to each):
// elementwise kernels over operands in any strided layout, writing a contiguous output.
//
// Element `i` of the output is the row-major index `i` over `sizes`; each operand finds it at its
// storage offset plus `Σ coord[d] · stride[d]`. A broadcast operand has stride 0 along the
// dimensions it stretches over, so broadcasting, transposes, slices with a step and `expand` are
// all just strides here. The host merges dimensions that are contiguous for every operand before
// it fills `Params`, so most layouts reach the shader with a rank of 1 or 2.

struct Params {
    n: u32,                           // elements of the output
    m: u32,                           // unused here
    k: u32,                           // which comparison (`compare.wgsl`); else unused
    scalar: f32,                      // unused here
    rank: u32,                        // dimensions in use, at most 8
    x_offset: u32,                    // where `x`'s first element lies in its buffer
    y_offset: u32,                    // the same for `y` (two or three operands)
    z_offset: u32,                    // the same for `z` (three operands)
    sizes: array<vec4<u32>, 2>,       // the output's extents, outermost first
    x_strides: array<vec4<u32>, 2>,   // `x`'s steps per dimension, in elements
    y_strides: array<vec4<u32>, 2>,   // `y`'s
    z_strides: array<vec4<u32>, 2>,   // `z`'s
}

// Must equal `ELEMENTWISE_WORKGROUP` in `pipelines.rs`.
const WORKGROUP: u32 = 256u;

// The flat index of an invocation on a grid of up to two rows of workgroups (see `binary.wgsl`).
fn index(workgroup: vec3<u32>, groups: vec3<u32>, local: u32) -> u32 {
    return (workgroup.y * groups.x + workgroup.x) * WORKGROUP + local;
}

// Where output element `i` lies in `x` (`.x`), `y` (`.y`) and `z` (`.z`). Every offset is below
// its buffer's length, which the host checked fits in 32 bits.
fn offsets3(i: u32) -> vec3<u32> {
    var rest = i;
    var at = vec3<u32>(params.x_offset, params.y_offset, params.z_offset);
    for (var d = params.rank; d > 0u; d--) {
        let j = d - 1u;
        let size = params.sizes[j / 4u][j % 4u];
        let coord = rest % size;
        rest = rest / size;
        let strides = vec3<u32>(
            params.x_strides[j / 4u][j % 4u],
            params.y_strides[j / 4u][j % 4u],
            params.z_strides[j / 4u][j % 4u],
        );
        at += coord * strides;
    }
    return at;
}

// Where output element `i` lies in `x` and `y` (compilers drop the unused third sum).
fn offsets(i: u32) -> vec2<u32> {
    return offsets3(i).xy;
}
