// A registration's kernel is reachable only through its op's table, which installs a CPU variant
// only where its features were detected: safe code cannot read the AVX-512 `exp` entry and call it
// on a CPU without AVX-512.
use switchyard::ops::exp;

fn main() {
    let entry = exp::__KERNELS[0].kernel;
    let _ = entry;
}
