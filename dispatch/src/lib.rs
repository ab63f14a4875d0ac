//! The dispatch engine of switchyard, for any tensor type.
//!
//! Ops are declared once, as typed functions ([`op`]); kernels for them are registered from any
//! crate, one per dispatch key ([`kernel`]); boxed fallbacks serve every op at a key
//! ([`fallback`]); a call picks the kernel from its arguments' keys ([`DispatchArg`]) and the
//! thread's modes ([`include()`], [`exclude()`]), with one indexed load. Tables, precedence, runtime
//! registration, [`trace`], [`profile`] and [`dump`] work for any argument types.
//!
//! This crate knows no tensor: most users name `switchyard`, which re-exports it together with
//! the framework's own tensor and standard ops (the examples below use them). A tensor library
//! with its own tensor type depends on this crate alone and
//! - implements [`DispatchArg`] for its tensor (its device's backend keys; see there for the
//!   device-mismatch rule on *device families*),
//! - boxes it with [`boxable_tensor!`] (one reference count per boxed value, none for a tensor a
//!   typed call lends to a boxed fallback; [`trace`] then links its tensors as `%n`),
//! - names its devices for errors with [`name_device!`],
//! - declares the dtypes the engine does not know, if it has any, with [`declare_dtype!`] (four
//!   [`UserDType`] slots; its kernels serve one with `dtypes = [MY_DTYPE]`),
//! - and, since the macros' generated code names `::switchyard`, either depends on this crate
//!   under that name (`switchyard = { package = "switchyard-dispatch", … }` in `Cargo.toml`) or
//!   writes `crate = switchyard_dispatch` in each attribute.
//!
//! `examples/byo-tensor` in the repository is such a library, with a guide in its README.

// `deny`, not `forbid`: linkme's statics use `link_section`, which the lint counts as unsafe;
// those statics (and only they) carry `#[allow(unsafe_code)]`.
// docs.rs builds with `--cfg docsrs` (see `[package.metadata.docs.rs]`): items marked with their feature.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod alias;
mod arg;
pub mod boxing;
pub mod cpu;
mod diag;
mod dtype;
mod error;
mod family;
mod handle;
mod key;
#[cfg(test)]
mod layering;
mod linked;
mod local;
pub mod modes;
mod names;
mod origin;
mod registration;
mod registry;
mod resolve;
mod runtime;
mod table;
mod trace_log;

#[doc(hidden)]
pub mod __private_v1 {
    //! Not public API. Used by generated code.
    pub use crate::private::*;
}
mod private;

pub use alias::{AliasKey, KernelKey};
pub use arg::DispatchArg;
pub use boxing::{BoxedTensor, FromValue, SharedTensor, Stack, TensorValue, ToValue, Value};
pub use dtype::{
    ColumnSet, DType, DTypeColumn, DTypeKind, DTypeSet, NUM_COLUMNS, NUM_DTYPES, NUM_USER_DTYPES,
    UserDType, UserDTypeDecl,
};
pub use error::KernelSource;
pub use error::{DispatchError, ErrorKind, Location};
pub use family::{DeviceName, device_name, families, family_name, family_of};
pub use handle::{call_boxed, dump, find_op, op_named, ops};
pub use key::{DispatchKey, DispatchKeySet, KeyGroup, NUM_KEYS};
pub use local::{KeyGuard, LocalKeys, exclude, include, local_keys, with_excluded};
pub use modes::{profile, trace};
pub use origin::{Conflict, KernelMeta, SlotOrigin};
pub use registration::Registration;
pub use registry::{BoxedKernel, OpHandle};
#[cfg(feature = "tracing")]
pub use runtime::set_tracing_events;
pub use runtime::{register_fallback, register_fallthrough, set_dispatch_trace};

/// Declares an operator: `#[op(name = "mul")] pub fn mul(x: &Tensor, y: &Tensor) -> Tensor;`
///
/// Arguments: `name = "…"` (the op's name in `find_op`, dumps and errors; defaults to the
/// function's name; see "Names" below), `error = Type` (the body's own error type; below), `unboxed` (opt out of boxing, for ops whose argument or result types have no
/// [`Value`] form: such an op cannot be called boxed, and a boxed fallback reaching it is an
/// error), `mixes_devices` (arguments may be on different devices: an op that copies between
/// them, such as `switchyard::ops::to`; other ops report a device mismatch) and `crate = path` (where
/// switchyard is, for crates that re-export it).
///
/// For `pub fn mul(…) -> T;` the macro generates, in the same module:
/// - `mul(…) -> T`, the plain call; a failed dispatch panics with the error's message;
/// - `try_mul(…) -> Result<T, DispatchError>`, which never panics on dispatch or kernel errors;
/// - a module `mul` with `redispatch(keys, …)` (call the kernel for exactly `keys`, as a kernel
///   does below its own key), `handle()` (name, schema, registrations, table, boxed calls),
///   `register(key, name, kernel)` (a kernel at run time, undone when the returned guard drops),
///   and the types kernels are checked against: `Signature`, `FallibleSignature`,
///   `KeyedSignature` and `KernelFn`.
///
/// A body, if given, is the op's *composite* kernel (`CompositeImplicit`), written in terms of
/// other ops: it serves every backend key that has no kernel of its own, autograd keys whose
/// backend has none (so autograd flows through the decomposition), and calls with no
/// dispatchable argument.
///
/// A body may end in the op's result type `T` (calling the plain, panicking forms of other ops)
/// or in `Result<T, DispatchError>`: then it can use `?` on the `try_` forms, and a failing inner
/// op makes `try_op` return that op's error (and the plain `op` panic with its message) instead
/// of panicking inside the body. The body runs in a function returning
/// `Result<T, DispatchError>`, so an early `return` is `return Ok(value)` or
/// `return Err(error)`; the body's last expression may be either `value` or `Ok(value)`. Use the
/// `try_` forms in a body whenever `try_op` must not panic.
///
/// **A body with its own error type**: `error = MyError` (any `std::error::Error + Send + Sync +
/// 'static` type, named by its path) makes the body a function returning `Result<T, MyError>`,
/// so `?` converts into `MyError` as usual (on other ops' `try_` forms too, given
/// `From<DispatchError> for MyError`). A failing body makes `try_op` return a `DispatchError` of
/// kind [`ErrorKind::KernelFailed`] at `CompositeImplicit` whose `source()` is your error:
///
/// ```
/// use switchyard::{Tensor, op};
///
/// #[derive(Debug)]
/// pub struct Empty;
/// impl std::fmt::Display for Empty {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("the tensor is empty")
///     }
/// }
/// impl std::error::Error for Empty {}
///
/// #[op(name = "docs::first_row", error = Empty)]
/// pub fn first_row(x: &Tensor) -> Tensor {
///     if x.numel() == 0 {
///         return Err(Empty);
///     }
///     Ok(switchyard::ops::narrow(x, 0, 0, 1))
/// }
///
/// fn main() {
///     let err = try_first_row(&Tensor::vector(&[])).unwrap_err();
///     assert!(std::error::Error::source(&err).unwrap().is::<Empty>());
/// }
/// ```
///
/// Every argument and result type must have a boxed form ([`ToValue`], [`FromValue`]; see
/// [`boxable!`]) unless the op is `unboxed`: a type without one is a compile error on the type.
/// Tuples of 2 to 4 boxable types have one, [`Value::Tuple`], so an op may return several
/// results (`-> (Tensor, Tensor)`, schema `(Tensor, Tensor)`), be called boxed and run through
/// boxed fallbacks.
///
/// **Written arguments.** A parameter of type `&mut T` may be written by the op (an in-place op,
/// `add_(x: &mut Tensor, y: &Tensor)`; schema `add_(x: mut Tensor, y: Tensor) -> …`). It
/// contributes `T`'s keys like `&T`; its kernels take `&mut T` too (a kernel with `&T` there does
/// not compile), and so do `try_`, `redispatch` and the composite body. A typed call that reaches
/// a kernel hands it the caller's own `&mut`. A boxed call passes `T`'s boxed value among the
/// arguments and hands the *written value* (the argument as the call left it) back under the
/// result: a boxed fallback sees the argument like any other and may write it by replacing its
/// slot (before it redispatches) or the written value (after); a typed caller whose call went
/// through a fallback then finds the written value in its `&mut`, assigned only once the whole
/// call succeeded, so an error leaves it unchanged. [`Stack`] states the layout. For a tensor
/// whose handles share storage, a write of its data through any handle is seen by all of them;
/// the write-back matters to a kernel or fallback that replaces the handle (`*x = new`). With
/// `unboxed`, `T` needs no boxed form.
///
/// **Names.** Every op's full name is `namespace::name`. Without a namespace (`#[op]`, or
/// `name = "mul"`) the op takes its crate's name, as Cargo gives it to the compiler
/// (`CARGO_CRATE_NAME`: the library's in its doctests, the test target's in an integration test),
/// so `#[op] pub fn softmax` in crate `my_lib` is `my_lib::softmax` and never clashes with the
/// standard `switchyard::softmax`. `name = "ns::mul"` gives the namespace (one `::`); that is how
/// the standard ops are declared in `switchyard`'s. Dumps, traces, profiles, exports and the
/// engine's errors show full names; [`find_op`], [`op_named`] and [`call_boxed`] take a full
/// name, or a bare one that exactly one linked op has. Two ops of one full name in one crate are
/// a compile error (rustc's "defined multiple times", pointing at both); in two crates, calls of
/// those ops fail with an error naming both crates.
///
/// Rules, each a compile error on the offending token: every parameter is a plain name whose type
/// implements [`DispatchArg`]; no generics, `async`, `const`, `unsafe`, `extern`, variadics or
/// `self`; no `Result` return (the `try_` form is the fallible one). Declare ops at module level
/// (not inside a function body). The op's types mean what they mean where the op is declared
/// (`self::T`, `super::T` included), and generated names never hide the user's: a parameter may
/// be called `keys`, a type `Signature` or `K`.
///
/// ```
/// use switchyard::{Tensor, kernel, op};
///
/// /// `x` with its elements in reverse order.
/// #[op(name = "example::reversed")]
/// pub fn reversed(x: &Tensor) -> Tensor;
///
/// #[kernel(op = "reversed", key = CpuNaive)]
/// fn reversed_cpu(x: &Tensor) -> Tensor {
///     let values = x.as_slice::<f32>().expect("a CPU kernel gets CPU tensors");
///     Tensor::from_fn(x.shape(), |i| values[values.len() - 1 - i])
/// }
///
/// /// An op with a body: its composite kernel, built from other ops.
/// #[op]
/// pub fn twice_reversed(x: &Tensor) -> Tensor {
///     reversed(&reversed(x))
/// }
///
/// fn main() {
///     let x = Tensor::vector(&[1.0, 2.0, 3.0]);
///     assert_eq!(reversed(&x).to_vec::<f32>(), [3.0, 2.0, 1.0]);
///     assert_eq!(twice_reversed(&x).to_vec::<f32>(), [1.0, 2.0, 3.0]);
///     assert_eq!(reversed::handle().schema(), "example::reversed(x: Tensor) -> Tensor");
///     let on_cpu = switchyard::DispatchKeySet::CPU_NAIVE;
///     assert_eq!(reversed::redispatch(on_cpu, &x).unwrap().to_vec::<f32>(), [3.0, 2.0, 1.0]);
/// }
/// ```
///
/// A body that propagates errors, and an op with two results:
///
/// ```
/// use switchyard::ops::{try_mean, try_mul, try_sub};
/// use switchyard::{Tensor, kernel, op};
/// use switchyard_backends as _;
///
/// /// Mean squared error: a shape mismatch in `sub` is this op's error, not a panic.
/// #[op(name = "example::mse")]
/// pub fn mse(a: &Tensor, b: &Tensor) -> Tensor {
///     if a.shape().is_empty() {
///         return Ok(try_mul(a, a)?); // an early return is `return Ok(…)`
///     }
///     let diff = try_sub(a, b)?;
///     try_mean(&try_mul(&diff, &diff)?) // ends in `Result<Tensor, DispatchError>`
/// }
///
/// /// The positive and negative parts of `x`.
/// #[op(name = "example::split_signs")]
/// pub fn split_signs(x: &Tensor) -> (Tensor, Tensor);
///
/// #[kernel(op = split_signs, key = CpuNaive)]
/// fn split_signs_cpu(x: &Tensor) -> (Tensor, Tensor) {
///     let v = x.as_slice::<f32>().expect("a CPU kernel gets CPU tensors");
///     (Tensor::from_fn(x.shape(), |i| v[i].max(0.0)), Tensor::from_fn(x.shape(), |i| v[i].min(0.0)))
/// }
///
/// fn main() {
///     let (a, b) = (Tensor::vector(&[1.0, 2.0]), Tensor::vector(&[1.0, 4.0]));
///     assert_eq!(mse(&a, &b).to_vec::<f32>(), [2.0]);
///     let c = Tensor::vector(&[1.0, 2.0, 3.0]);
///     let error = try_mse(&a, &c).unwrap_err();
///     assert_eq!(error.to_string(), try_sub(&a, &c).unwrap_err().to_string());
///
///     let (pos, neg) = split_signs(&Tensor::vector(&[1.0, -2.0]));
///     assert_eq!((pos.to_vec::<f32>(), neg.to_vec::<f32>()), (vec![1.0, 0.0], vec![0.0, -2.0]));
///     assert_eq!(
///         split_signs::handle().schema(),
///         "example::split_signs(x: Tensor) -> (Tensor, Tensor)"
///     );
/// }
/// ```
///
/// An op that writes its argument, called typed and boxed:
///
/// ```
/// use switchyard::{FromValue, Stack, Tensor, Value, kernel, op};
///
/// /// Replaces `x` by its elements clamped at zero; returns how many were negative.
/// #[op(name = "example::relu_")]
/// pub fn relu_(x: &mut Tensor) -> usize;
///
/// #[kernel(op = relu_, key = CpuNaive)]
/// fn relu_cpu(x: &mut Tensor) -> usize {
///     let values = x.to_vec::<f32>();
///     *x = Tensor::from_fn(x.shape(), |i| values[i].max(0.0));
///     values.iter().filter(|v| **v < 0.0).count()
/// }
///
/// fn main() {
///     let mut x = Tensor::vector(&[-1.0, 2.0]);
///     assert_eq!(relu_(&mut x), 1);
///     assert_eq!(x.to_vec::<f32>(), [0.0, 2.0]);
///     assert_eq!(relu_::handle().schema(), "example::relu_(x: mut Tensor) -> int");
///
///     // Boxed: `[x]` becomes `[x as written, result]`.
///     let mut stack = Stack::new();
///     stack.push(Tensor::vector(&[-3.0]));
///     relu_::handle().call_boxed(&mut stack).unwrap();
///     assert!(matches!(stack.pop(), Some(Value::Int(1))));
///     let written = Tensor::from_value(stack.pop().unwrap()).unwrap();
///     assert_eq!(written.to_vec::<f32>(), [0.0]);
/// }
/// ```
pub use switchyard_macros::op;

/// Registers a kernel: `#[kernel(op = "mul", key = CpuSimd)] fn mul_simd(…) -> Tensor { … }`
///
/// Arguments:
/// - `op`: the op's Rust item — the path of the function declared with `#[op]`, as it is
///   named in scope — unquoted (`op = mul`, `op = switchyard::ops::mul`) or in a string
///   (`op = "mul"`, `op = "ops::mul"`). The op's `name = "…"` string (the form dumps, traces and
///   errors print) is accepted too when the kernel's own file declares that op: for
///   `#[op(name = "nc::twice")] pub fn twice(…)` in the same file, `op = "nc::twice"` is
///   `op = twice` (so is its crate's `op = "my_crate::twice"` for `#[op] pub fn twice`); a
///   standard op's full name is its item (`op = "switchyard::mul"` is
///   `op = switchyard::ops::mul`); for an op declared elsewhere, write its item (`op = twice`
///   after `use my_ops::twice;`, or its path), which the error for its name string says. A name that nothing in the kernel's file declares or
///   imports is reported as "no op `…` in scope" (with the file's ops that it may misspell);
///   a plain function that is not an op, as such;
/// - `key`: the [`DispatchKey`] served, by name in either spelling (`CpuSimd` or `CPU_SIMD`,
///   `Tracing` or `TRACING`), an alias ([`AliasKey`]: `Autograd`, `CompositeImplicit`,
///   `CompositeExplicit`), or a `DispatchKey` constant: in scope by its SCREAMING_CASE name
///   (`key = HOST` after `const HOST: DispatchKey = DispatchKey::PrivateUse1;`; a misspelling
///   of one of ours, such as `CPU_SMID`, is reported with "did you mean") or by a path
///   (`crate::MY_KEY`), for downstream keys;
/// - `cpu = "avx2,fma"` (optional, with `key = CpuSimd`): the CPU features this kernel needs,
///   by their `#[target_feature]` names; see [`cpu`] for the list. Several kernels of one op may
///   then share the key: when the op's table is built, the best one whose features the running
///   CPU has is installed, and if none can run the key falls through to `CpuNaive`.
///   `SWITCHYARD_CPU_CAPABILITY` can lower the choice, never raise it. The function may carry
///   `#[target_feature(enable = …)]` with features that `cpu` lists; the macro registers a safe
///   entry for it, installed only after detection.
/// - `dtypes = "f32,f64"` (optional): the dtype columns of the op's table this kernel serves,
///   comma separated: a dtype name (`bool`, `u8`, `i32`, `i64`, `f16`, `bf16`, `f32`, `f64`),
///   `float` (`f16`, `bf16`, `f32`, `f64`), `int` (`u8`, `i32`, `i64`), `mixed` (calls whose
///   arguments carry two dtypes or more; the engine does not promote, a library registers
///   promoting kernels here), `untyped` (arguments that carry no dtype) or `all`. A call reads
///   the column of its arguments' dtypes ([`DTypeColumn`]); where this kernel does not serve it,
///   its key is resolved as if it were not registered, so the call falls through to the next key
///   that serves it (`f32` SIMD kernels at `CpuSimd` and an all-dtype naive kernel: an `f64`
///   call runs naive). Without `dtypes` the kernel serves every column: a kernel that declares
///   nothing is promised nothing. Two kernels of one op may share a key if they serve disjoint
///   columns. At run time, `op::register_dtypes(key, dtypes, name, kernel)` does the same.
///   A dtype the engine does not know, declared with [`declare_dtype!`] in one of the four
///   [`UserDType`] slots, is named by its constant in the list form, which takes strings too:
///   `dtypes = [COMPLEX64]`, `dtypes = ["f32", COMPLEX64]` (a path to a `UserDType` constant,
///   as `key` takes a path to a key constant; anything else there is a compile error). Its
///   column falls through like a built-in dtype's; a call mixing it with any other dtype reads
///   `mixed` (the engine does not promote).
/// - `crate = path`: where switchyard is, for crates that re-export it.
///
/// The function must have the op's exact signature, or return `Result<T, E>` where the op
/// returns `T` (a kernel that can fail), for `E` a [`DispatchError`] (`switchyard::Result<T>`) or
/// any error type of your own (`std::error::Error + Send + Sync + 'static`, no `From` impl
/// needed): the `try_` call then returns a `DispatchError` of kind [`ErrorKind::KernelFailed`]
/// naming the op and the key, whose `source()` is your error (`downcast_ref` reaches it) and whose
/// message prints its chain. It may also take the
/// call's `keys: DispatchKeySet` first, to continue below its own key with
/// `op::redispatch(keys.below(…), …)`. Anything else does not compile, with the error on the
/// kernel's signature. The function itself is left as written and can still be called directly.
///
/// ```
/// use std::error::Error;
/// use switchyard::{ErrorKind, Tensor, kernel, op};
///
/// #[derive(Debug)]
/// struct SensorError(f32);
/// impl std::fmt::Display for SensorError {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         write!(f, "reading {} is out of range", self.0)
///     }
/// }
/// impl Error for SensorError {}
///
/// #[op(name = "doc::calibrate")]
/// pub fn calibrate(x: &Tensor) -> Tensor;
///
/// #[kernel(op = calibrate, key = CpuNaive)]
/// fn calibrate_cpu(x: &Tensor) -> Result<Tensor, SensorError> {
///     match x.to_vec::<f32>().into_iter().find(|v| v.abs() > 10.0) {
///         Some(bad) => Err(SensorError(bad)),
///         None => Ok(x.clone()),
///     }
/// }
///
/// fn main() {
///     let err = try_calibrate(&Tensor::vector(&[1.0, 42.0])).unwrap_err();
///     assert!(matches!(err.kind(), ErrorKind::KernelFailed { op: "doc::calibrate", .. }));
///     assert_eq!(err.source().unwrap().downcast_ref::<SensorError>().unwrap().0, 42.0);
///     assert_eq!(
///         err.to_string(),
///         "op `doc::calibrate`: the kernel at `CpuNaive` failed: reading 42 is out of range"
///     );
/// }
/// ```
///
/// One kernel per (op, key, CPU features): a second is an error naming both `file:line`,
/// reported by every call of the op. Kernels may live in any crate; the binary must name that crate once
/// (`use my_kernels as _;`) or the linker drops it.
///
/// ```
/// use switchyard::ops::relu;
/// use switchyard::{AliasKey, DispatchError, DispatchKey, DispatchKeySet, KernelKey, Tensor, kernel};
///
/// pub const MY_DEVICE: DispatchKey = DispatchKey::PrivateUse2;
///
/// // A fallible kernel for a standard op, at a key given by path. (The CPU kernels of the
/// // standard ops live in `switchyard_backends`, which this example does not link.)
/// #[kernel(op = "relu", key = crate::MY_DEVICE)]
/// fn relu_my_device(x: &Tensor) -> Result<Tensor, DispatchError> {
///     Err(DispatchError::kernel("relu", "my device is not plugged in"))
/// }
///
/// // A layer above the backends (a downstream functionality key): takes the call's keys and
/// // continues below its own key. (`relu`'s `Autograd` slot is taken: the tensor crate's
/// // derivative; replacing it would be declared with `overrides`.)
/// #[kernel(op = "relu", key = Custom1)]
/// fn relu_layer(keys: DispatchKeySet, x: &Tensor) -> Result<Tensor, DispatchError> {
///     relu::redispatch(keys.below(DispatchKey::Custom1), x)
/// }
///
/// fn main() {
///     let registered = relu::handle().registrations();
///     assert!(registered.iter().any(|(key, meta)| *key == MY_DEVICE && meta.name == "relu_my_device"));
///     assert!(relu::handle().table_dump().contains("relu_layer"));
///     assert!(registered.iter().any(|(key, _)| *key == KernelKey::Alias(AliasKey::Autograd)));
/// }
/// ```
///
/// CPU variants:
///
/// ```
/// use switchyard::{DispatchKey, SlotOrigin, Tensor, kernel, op};
///
/// #[op(name = "doc::double")]
/// pub fn double(x: &Tensor) -> Tensor;
///
/// #[kernel(op = "double", key = CpuNaive)]
/// fn double_naive(x: &Tensor) -> Tensor {
///     let values = x.as_slice::<f32>().expect("a CPU kernel gets CPU tensors");
///     Tensor::from_fn(x.shape(), |i| 2.0 * values[i])
/// }
///
/// // Installed only where AVX2 was detected; elsewhere `CpuSimd` falls through to the naive one.
/// #[cfg(target_arch = "x86_64")]
/// #[kernel(op = "double", key = CpuSimd, cpu = "avx2")]
/// #[target_feature(enable = "avx2")]
/// fn double_avx2(x: &Tensor) -> Tensor {
///     double_naive(x) // (intrinsics would go here)
/// }
///
/// fn main() {
///     assert_eq!(double(&Tensor::vector(&[1.0, 2.5])).to_vec::<f32>(), [2.0, 5.0]);
///     let slot = double::handle().slot(DispatchKey::CpuSimd).unwrap();
///     let runs_avx2 = switchyard::cpu::CpuPolicy::current()
///         .choose(&[switchyard::cpu::CpuFeatures::AVX2])
///         .is_some();
///     assert_eq!(matches!(slot, SlotOrigin::Kernel(_)), cfg!(target_arch = "x86_64") && runs_avx2);
///     // The dump shows the variant and, if it was not chosen, why.
///     println!("{}", double::handle().table_dump());
/// }
/// ```
///
/// Kernels per dtype (a fake tensor type whose keys carry its dtype's bit, as a typed tensor
/// library's do):
///
/// ```
/// use switchyard::{DTypeColumn, DTypeSet, DispatchArg, DispatchKeySet, kernel, op};
///
/// /// A CPU value of some dtypes.
/// pub struct Typed(DTypeSet);
/// impl DispatchArg for Typed {
///     fn dispatch_keys(&self) -> DispatchKeySet {
///         DispatchKeySet::CPU.with_dtypes(self.0)
///     }
/// }
///
/// #[op(name = "doc::sum2", unboxed)]
/// pub fn sum2(x: &Typed, y: &Typed) -> &'static str;
///
/// #[kernel(op = "sum2", key = CpuSimd, dtypes = "f32")]
/// fn sum2_f32_simd(_: &Typed, _: &Typed) -> &'static str { "simd f32" }
///
/// #[kernel(op = "sum2", key = CpuNaive)]
/// fn sum2_naive(_: &Typed, _: &Typed) -> &'static str { "naive" }
///
/// fn main() {
///     let of = |column: DTypeColumn| Typed(DTypeSet::of(&[column.dtype().unwrap()]));
///     assert_eq!(sum2(&of(DTypeColumn::F32), &of(DTypeColumn::F32)), "simd f32");
///     assert_eq!(sum2(&of(DTypeColumn::F64), &of(DTypeColumn::F64)), "naive");
///     // `f32` with `i32` is the mixed column, which the SIMD kernel does not serve.
///     assert_eq!(sum2(&of(DTypeColumn::F32), &of(DTypeColumn::I32)), "naive");
///     // The dump groups the columns that resolved alike.
///     assert!(sum2::handle().table_dump().contains("other dtypes → fallthrough"));
/// }
/// ```
///
/// A dtype of your own ([`declare_dtype!`]), served by its constant:
///
/// ```
/// use switchyard::{DispatchArg, DispatchKeySet, UserDType, kernel, op};
///
/// pub const COMPLEX64: UserDType = UserDType::PrivateUse1;
/// switchyard::declare_dtype!(COMPLEX64, "complex64", bytes = 8, kind = Other);
///
/// /// A CPU value of one complex64 tensor.
/// pub struct Complex;
/// impl DispatchArg for Complex {
///     fn dispatch_keys(&self) -> DispatchKeySet {
///         DispatchKeySet::CPU | COMPLEX64.key_bit()
///     }
/// }
///
/// #[op(name = "doc::norm", unboxed)]
/// pub fn norm(x: &Complex) -> &'static str;
///
/// #[kernel(op = norm, key = CpuSimd, dtypes = ["f32", COMPLEX64])]
/// fn norm_simd(_: &Complex) -> &'static str { "simd" }
///
/// fn main() {
///     assert_eq!(norm(&Complex), "simd");
///     assert!(switchyard::dump().contains("norm_simd (dtypes: f32|complex64)"));
/// }
/// ```
pub use switchyard_macros::kernel;

/// Registers one boxed kernel for *every* op at one dispatch key: tracing, profiling,
/// "autograd not implemented", logging.
///
/// The function has the signature [`BoxedKernel`]: it gets the op's [`OpHandle`] (name, schema,
/// arity), the call's keys, and the arguments on a [`Stack`]; it must leave the op's result there,
/// usually by redispatching below its own key. Arguments: `key = …` (a runtime key, in either
/// spelling, or a path to a `DispatchKey` constant) and `crate = path`. Two fallbacks for one key
/// is an error naming both. [`register_fallback`] does the same at run time.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use switchyard::{DispatchError, DispatchKey, DispatchKeySet, OpHandle, Stack, fallback};
/// use switchyard_backends as _;
///
/// static CALLS: AtomicUsize = AtomicUsize::new(0);
///
/// #[fallback(key = Custom3)]
/// fn count(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack) -> Result<(), DispatchError> {
///     CALLS.fetch_add(1, Ordering::Relaxed);
///     op.redispatch_boxed(keys.below(DispatchKey::Custom3), stack)
/// }
///
/// let x = switchyard::Tensor::vector(&[1.0, 2.0]);
/// let _counting = switchyard::include(DispatchKey::Custom3);
/// assert_eq!(switchyard::ops::mul(&x, &x).to_vec::<f32>(), [1.0, 4.0]);
/// assert_eq!(CALLS.load(Ordering::Relaxed), 1);
/// ```
pub use switchyard_macros::fallback;

/// `Result` with [`DispatchError`]: what a fallible kernel returns.
pub type Result<T> = core::result::Result<T, DispatchError>;
