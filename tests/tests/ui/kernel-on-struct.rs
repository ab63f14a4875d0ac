use switchyard::kernel;

#[kernel(op = "mul", key = CpuNaive)]
struct NotAFunction;

fn main() {}
