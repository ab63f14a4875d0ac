use switchyard::op;

// Not a function: one error, and the struct is still there for the code that uses it.
#[op]
pub struct Scale(pub f32);

fn main() {
    let _ = Scale(2.0);
}
