//! The process's one wgpu context: adapter, device, queue, pipelines, buffer pool, and the batch
//! of recorded work not yet submitted.
//!
//! # Sync model
//!
//! A kernel records its dispatch into the context's open command encoder and returns at once: no
//! submit, no wait. The batch is submitted (still without waiting) when it holds
//! [`BATCH_PASSES`] dispatches, so the GPU works while the host records more, and before an upload
//! (see [`Context::upload`]). The host waits only when it needs the GPU's results: reading a
//! tensor back ([`Context::read`]) or [`Context::synchronize`]. Errors the device reports
//! asynchronously (out of memory, …) are collected and returned at the next of those waits.
//!
//! **Invariant:** all GPU work goes through one ordered stream: the open encoder, submitted in
//! order on one queue. Writes through `Queue::write_buffer` take effect at the start of the next
//! submit, ahead of the open encoder's work, so the only ones allowed are to a buffer nothing
//! recorded can still use: a fresh upload target after the open batch was submitted, and the
//! batch's own parameter buffer right before its submit.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Context as TaskContext, Poll, Waker};

use switchyard::{DType, DispatchError};

use super::layout::{PARAMS_SIZE, Params};
use super::pipeline::{Kernel, MAX_INPUTS, Pipelines};
use super::pool::{Kind, Pool, PoolStats};
use super::storage::{HELD, words_per};

/// Dispatches recorded before the batch is submitted without being asked.
pub(crate) const BATCH_PASSES: u64 = 32;

/// A buffer the pool handed out: returns to the pool when dropped, unless it may still be mapped.
#[derive(Debug)]
pub(crate) struct PooledBuffer {
    context: &'static Context,
    kind: Kind,
    buffer: wgpu::Buffer,
    /// False from `map_async` until `unmap`: a buffer still mapped, or waiting for a mapping,
    /// would fail the next copy into it ("still mapped"), so it is destroyed instead of reused.
    reusable: bool,
}

impl PooledBuffer {
    pub(crate) fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    pub(crate) fn context(&self) -> &'static Context {
        self.context
    }
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        if self.reusable {
            // `wgpu::Buffer` is a handle; the pool keeps a clone, this one goes.
            self.context.pool.release(self.kind, self.buffer.clone());
        } else {
            self.context.pool.discard(&self.buffer);
        }
    }
}

/// Work recorded but not yet submitted.
#[derive(Debug)]
struct Batch {
    encoder: Option<wgpu::CommandEncoder>,
    /// The dispatches' parameters, one `param_stride` slot each, written to `Context::params`
    /// just before the batch is submitted.
    params: Vec<u8>,
    passes: u64,
}

/// A bound buffer: the buffer and how many bytes of it the kernel sees.
pub(crate) type Binding<'a> = (&'a wgpu::Buffer, u64);

/// The process's wgpu context. See the module docs for the sync model.
#[derive(Debug)]
pub(crate) struct Context {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    pipelines: Pipelines,
    pub(crate) pool: Pool,
    /// One `Params` slot per dispatch of a batch, at `param_stride` (the device's uniform offset
    /// alignment) apart, bound with a dynamic offset.
    params: wgpu::Buffer,
    param_stride: u64,
    batch: Mutex<Batch>,
    /// Errors the device reported asynchronously, returned at the next wait.
    errors: Arc<Mutex<Vec<String>>>,
}

static CONTEXT: OnceLock<Result<Context, String>> = OnceLock::new();

/// The context, created on first use; or, naming `op`, why there is none. Creating it registers
/// the pool as the GPU's allocator (`switchyard::memory_stats(Device::Wgpu)`).
///
/// On the web a page cannot block while the browser finds an adapter: there the context comes
/// only from [`init`], and before it every GPU call is an error that says so.
pub(crate) fn context(op: &'static str) -> Result<&'static Context, DispatchError> {
    #[cfg(not(target_arch = "wasm32"))]
    let made = CONTEXT.get_or_init(|| registered(pollster::block_on(Context::create())));
    #[cfg(target_arch = "wasm32")]
    let made = CONTEXT.get().ok_or_else(|| {
        DispatchError::kernel(
            op,
            "on the web the wgpu context is made by `switchyard_backends::wgpu::init().await` \
             (a page cannot block while the browser finds an adapter): await it before the \
             first GPU op",
        )
    })?;
    made.as_ref()
        .map_err(|reason| DispatchError::kernel(op, format!("no wgpu adapter: {reason}")))
}

/// Creates the context without blocking, unless it exists (or its creation failed) already;
/// returns it or, naming `op`, why there is none.
pub(crate) async fn init(op: &'static str) -> Result<&'static Context, DispatchError> {
    if CONTEXT.get().is_none() {
        // Another `init` may finish while this one awaits: the first context stays, this one
        // drops (registering the pool again is harmless: it replaces itself).
        let _ = CONTEXT.set(registered(Context::create().await));
    }
    context(op)
}

/// `made`, with the pool registered as the GPU's allocator when it is a context.
fn registered(made: Result<Context, String>) -> Result<Context, String> {
    if made.is_ok() {
        switchyard::register_allocator(switchyard::Device::Wgpu, &super::GpuAllocator);
    }
    made
}

/// The context if it exists already; creates nothing.
pub(crate) fn existing() -> Option<&'static Context> {
    CONTEXT.get().and_then(|c| c.as_ref().ok())
}

/// Locks `mutex`, also after a panic elsewhere: the data it guards stays consistent because every
/// critical section here either completes or records nothing.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The adapter `WGPU_ADAPTER_NAME` names (the first whose name contains it, ignoring case, as
/// `wgpu::util::initialize_adapter_from_env` matches; that helper panics when none does, so its
/// rule is applied here, with an error instead), else the one wgpu prefers for
/// `WGPU_POWER_PREF` (high performance by default). With several equally good adapters (a
/// machine with Mesa's software Vulkan and GL drivers) wgpu takes its first backend, Vulkan.
async fn choose_adapter(instance: &wgpu::Instance) -> Result<wgpu::Adapter, String> {
    if let Some(wanted) = std::env::var("WGPU_ADAPTER_NAME")
        .ok()
        .filter(|name| !name.is_empty())
    {
        let adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
        let names: Vec<String> = adapters
            .iter()
            .map(|a| {
                let info = a.get_info();
                format!("`{}` ({})", info.name, info.backend)
            })
            .collect();
        return adapters
            .into_iter()
            .find(|a| {
                a.get_info()
                    .name
                    .to_lowercase()
                    .contains(&wanted.to_lowercase())
            })
            .ok_or_else(|| {
                format!(
                    "WGPU_ADAPTER_NAME={wanted} matches no adapter; found: {}",
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    }
                )
            });
    }
    instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::from_env()
                .unwrap_or(wgpu::PowerPreference::HighPerformance),
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())
}

impl Context {
    async fn create() -> Result<Context, String> {
        // The instance: every native backend compiled in (Vulkan, GL through EGL, Metal, DX12),
        // or those `WGPU_BACKEND` names (`vulkan`, `gl`, …); `WGPU_GLES_MINOR_VERSION` and the
        // other `WGPU_*` instance variables as wgpu reads them.
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        // The adapter: a physical (or software) device; `WGPU_ADAPTER_NAME` picks one by name,
        // `WGPU_POWER_PREF` by power.
        let adapter = choose_adapter(&instance).await?;
        let info = adapter.get_info();
        if !adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
        {
            return Err(format!(
                "adapter `{}` ({:?}) cannot run compute shaders",
                info.name, info.backend
            ));
        }
        // The device and its queue, with the adapter's best limits (large tensors need large
        // storage bindings).
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("switchyard"),
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|e| format!("adapter `{}` gave no device: {e}", info.name))?;
        // Errors the device reports later are kept for the next wait instead of panicking,
        // wgpu's default.
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&errors);
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            lock(&sink).push(error.to_string());
        }));
        let limits = device.limits();
        // Each slot holds a `Params` and starts at a multiple of the alignment.
        let param_stride =
            PARAMS_SIZE.next_multiple_of(u64::from(limits.min_uniform_buffer_offset_alignment));
        // The parameter buffer: one slot per dispatch of a batch.
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("switchyard params"),
            size: param_stride * BATCH_PASSES,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Ok(Context {
            pipelines: Pipelines::default(),
            device,
            queue,
            info,
            limits,
            pool: Pool::default(),
            params,
            param_stride,
            batch: Mutex::new(Batch {
                encoder: None,
                params: Vec::new(),
                passes: 0,
            }),
            errors,
        })
    }

    pub(crate) fn info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    pub(crate) fn device(&self) -> &wgpu::Device {
        &self.device
    }

    pub(crate) fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    pub(crate) fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The uniform buffer of the batch's parameters.
    pub(crate) fn params_buffer(&self) -> &wgpu::Buffer {
        &self.params
    }

    pub(crate) fn pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }

    pub(crate) fn recorded(&self) -> u64 {
        lock(&self.batch).passes
    }

    /// A storage buffer for `len` elements of `dtype` (one the backend holds: see
    /// `storage::words_per`), from the pool; errors naming `op` when the adapter's limits cannot
    /// hold it.
    pub(crate) fn alloc(
        &'static self,
        op: &'static str,
        len: usize,
        dtype: DType,
    ) -> Result<PooledBuffer, DispatchError> {
        let words = words_per(dtype).ok_or_else(|| {
            DispatchError::kernel(
                op,
                format!("the wgpu backend holds {HELD} tensors only, not {dtype}"),
            )
        })?;
        let bytes = (len as u64).saturating_mul(4 * words as u64);
        let limit = self
            .limits
            .max_buffer_size
            .min(self.limits.max_storage_buffer_binding_size);
        if bytes > limit {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "a tensor of {len} {dtype}s ({bytes} bytes) exceeds what adapter `{}` can \
                     bind ({limit} bytes)",
                    self.info.name
                ),
            ));
        }
        Ok(self.pooled(Kind::Storage, bytes))
    }

    fn pooled(&'static self, kind: Kind, bytes: u64) -> PooledBuffer {
        PooledBuffer {
            context: self,
            kind,
            buffer: self.pool.acquire(&self.device, kind, bytes),
            reusable: true,
        }
    }

    /// Records one dispatch of `kernel` over `bindings` (inputs, then output) with `params`,
    /// on a grid of `groups` workgroups. Nothing is submitted unless the batch is full. Errors,
    /// naming `op` and the kernel, when the bindings do not match the kernel, the grid or the
    /// bindings exceed the adapter's limits, or the kernel does not compile; nothing is recorded
    /// then.
    pub(crate) fn dispatch(
        &self,
        op: &'static str,
        kernel: &'static Kernel,
        bindings: &[Binding<'_>],
        params: &Params,
        groups: [u32; 2],
    ) -> Result<(), DispatchError> {
        let refuse = |why: String| {
            Err(DispatchError::kernel(
                op,
                format!("wgpu kernel `{}` {why}", kernel.entry_point()),
            ))
        };
        let inputs = kernel.inputs();
        if bindings.len() != inputs + 1 {
            return refuse(format!(
                "binds {inputs} input(s) and an output, but {} tensor(s) were given",
                bindings.len()
            ));
        }
        let storage_limit = self.limits.max_storage_buffers_per_shader_stage as usize;
        if inputs + 1 > storage_limit.min(MAX_INPUTS + 1) {
            return refuse(format!(
                "binds {} storage arrays; adapter `{}` allows {storage_limit} per kernel",
                inputs + 1,
                self.info.name
            ));
        }
        // Never `None`: a kernel binds at least its output, and the count was checked.
        let Some((out, ins)) = bindings.split_last() else {
            return refuse("was given no output".to_owned());
        };
        if ins.iter().any(|(buffer, _)| *buffer == out.0) {
            return refuse(
                "was given an output (the last binding) that is also an input's buffer (a \
                 tensor and its views share one): write a new buffer from `Gpu::alloc`"
                    .to_owned(),
            );
        }
        let most = self.limits.max_compute_workgroups_per_dimension;
        if groups.iter().any(|&g| g > most) {
            return refuse(format!(
                "was given a grid of {groups:?} workgroups; adapter `{}` runs at most {most} per \
                 dimension (`grid` folds a long row into two dimensions)",
                self.info.name
            ));
        }
        let pipeline = match kernel.pipeline(&self.device, &self.pipelines) {
            Ok(pipeline) => pipeline,
            Err(why) => return refuse(format!("cannot be built: {why}")),
        };
        let mut batch = lock(&self.batch);
        if batch.passes == BATCH_PASSES {
            self.submit(&mut batch);
        }
        // This dispatch's parameter slot.
        let offset = batch.params.len() as u64;
        batch.params.extend_from_slice(&params.bytes());
        batch
            .params
            .resize((offset + self.param_stride) as usize, 0);
        // Bind the arrays (never an empty range: wgpu rejects those) and the parameter slot.
        let mut entries: Vec<wgpu::BindGroupEntry<'_>> = bindings
            .iter()
            .enumerate()
            .map(|(i, &(buffer, bytes))| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer,
                    offset: 0,
                    size: wgpu::BufferSize::new(bytes.max(4)),
                }),
            })
            .collect();
        entries.push(wgpu::BindGroupEntry {
            binding: bindings.len() as u32,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &self.params,
                offset: 0,
                size: wgpu::BufferSize::new(PARAMS_SIZE),
            }),
        });
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.entry_point()),
            layout: &self.pipelines.layout(&self.device, inputs).0,
            entries: &entries,
        });
        // Record the pass into the open encoder, opening one if the batch is empty.
        let encoder = batch.encoder.get_or_insert_with(|| {
            self.device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("switchyard batch"),
                })
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(kernel.entry_point()),
                timestamp_writes: None,
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_group, &[offset as u32]);
            pass.dispatch_workgroups(groups[0], groups[1], 1);
        }
        batch.passes += 1;
        Ok(())
    }

    /// Submits the batch, if any, without waiting for it.
    fn submit(&self, batch: &mut Batch) {
        let Some(encoder) = batch.encoder.take() else {
            return;
        };
        // The batch's parameters land at the start of this submit, after every earlier submit.
        if !batch.params.is_empty() {
            self.queue.write_buffer(&self.params, 0, &batch.params);
            batch.params.clear();
        }
        batch.passes = 0;
        self.queue.submit([encoder.finish()]);
    }

    /// A new storage buffer holding `len` elements of `dtype` whose GPU bytes (see
    /// `storage::words_per`) are `data`, written after all work recorded so far; an error naming
    /// `op` when `data` has another length, or as `alloc`.
    pub(crate) fn upload(
        &'static self,
        op: &'static str,
        dtype: DType,
        len: usize,
        data: &[u8],
    ) -> Result<PooledBuffer, DispatchError> {
        let bytes = (len as u64).saturating_mul(4 * words_per(dtype).unwrap_or(1) as u64);
        if words_per(dtype).is_some() && data.len() as u64 != bytes {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "an upload of {len} {dtype}s takes {bytes} bytes on the GPU, not {}",
                    data.len()
                ),
            ));
        }
        let buffer = self.alloc(op, len, dtype)?;
        if !data.is_empty() {
            let mut batch = lock(&self.batch);
            // Recorded work may still use this buffer's previous tensor: submit it first, so the
            // write (which runs at the start of the next submit) comes after it.
            self.submit(&mut batch);
            self.queue.write_buffer(buffer.buffer(), 0, data);
        }
        Ok(buffer)
    }

    /// The first `bytes` bytes of `buffer` (a multiple of 4), after all work recorded so far:
    /// submits the batch and waits for the GPU. On the web, where a page cannot wait, an error
    /// that points to [`Context::read_async`]'s public forms.
    pub(crate) fn read(
        &'static self,
        op: &'static str,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<u8>, DispatchError> {
        #[cfg(target_arch = "wasm32")]
        {
            let _ = (buffer, bytes);
            Err(cannot_wait(op))
        }
        // Natively `read_async` waits in place (see there): its future is ready when first
        // polled, so this does not spin.
        #[cfg(not(target_arch = "wasm32"))]
        pollster::block_on(self.read_async(op, buffer, bytes))
    }

    /// [`Context::read`] as a future: on the web it resolves once the browser has mapped the
    /// values (control must return to the event loop for that); natively it waits for the GPU
    /// in place, before its first poll returns.
    pub(crate) async fn read_async(
        &'static self,
        op: &'static str,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<u8>, DispatchError> {
        if bytes == 0 {
            return self.take_errors(op).map(|()| Vec::new());
        }
        let mut staging = self.pooled(Kind::Readback, bytes);
        {
            // Copy to a mappable buffer at the end of the batch, and submit.
            let mut batch = lock(&self.batch);
            let encoder = batch.encoder.get_or_insert_with(|| {
                self.device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("switchyard batch"),
                    })
            });
            encoder.copy_buffer_to_buffer(buffer, 0, staging.buffer(), 0, bytes);
            self.submit(&mut batch);
        }
        // Until it is unmapped below: any early return destroys it instead of pooling it.
        staging.reusable = false;
        let mapping = Mapping::default();
        let answer = mapping.clone();
        staging
            .buffer()
            .map_async(wgpu::MapMode::Read, 0..bytes, move |result| {
                answer.resolve(result)
            });
        // Natively the callback runs during this wait (ours or another thread's); on the web,
        // once the browser maps the buffer, which `mapping` awaits.
        #[cfg(not(target_arch = "wasm32"))]
        mapping.wait_native(|| self.wait(op))?;
        let mapped = mapping
            .await
            .ok_or_else(|| DispatchError::kernel(op, "the wgpu device dropped a buffer mapping"));
        self.take_errors(op)?;
        mapped?.map_err(|e| DispatchError::kernel(op, format!("wgpu buffer mapping: {e}")))?;
        // Copy the bytes out, then unmap the buffer for reuse.
        let values = staging
            .buffer()
            .get_mapped_range(0..bytes)
            .map_err(|e| DispatchError::kernel(op, format!("wgpu mapped range: {e}")))
            .and_then(|view| {
                // Into a fallibly allocated buffer: a read the host cannot hold is an error.
                let mut values = Vec::new();
                let len = usize::try_from(bytes).unwrap_or(usize::MAX);
                values
                    .try_reserve_exact(len)
                    .map_err(|_| DispatchError::out_of_memory(op, len))?;
                values.extend_from_slice(&view);
                Ok(values)
            });
        staging.buffer().unmap();
        staging.reusable = true;
        values
    }

    /// Submits the batch and waits until the GPU has finished everything submitted. On the web,
    /// where a page cannot wait, it submits and returns an error that says so.
    pub(crate) fn synchronize(&self, op: &'static str) -> Result<(), DispatchError> {
        self.submit(&mut lock(&self.batch));
        #[cfg(target_arch = "wasm32")]
        return Err(cannot_wait(op));
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.wait(op)?;
            self.take_errors(op)
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn wait(&self, op: &'static str) -> Result<(), DispatchError> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(drop)
            .map_err(|e| DispatchError::kernel(op, format!("waiting for the wgpu device: {e}")))
    }

    /// The errors the device reported since the last wait, as one error naming `op`.
    fn take_errors(&self, op: &'static str) -> Result<(), DispatchError> {
        let errors = std::mem::take(&mut *lock(&self.errors));
        if errors.is_empty() {
            return Ok(());
        }
        Err(DispatchError::kernel(
            op,
            format!("the wgpu device reported an error: {}", errors.join("; ")),
        ))
    }
}

/// Why a blocking read or wait of `op` fails on the web.
#[cfg(target_arch = "wasm32")]
fn cannot_wait(op: &'static str) -> DispatchError {
    DispatchError::kernel(
        op,
        "a web page cannot wait for the GPU: read a GPU tensor with `try_to_vec_async().await` \
         or `try_item_async().await`, which resolve when the browser has the values",
    )
}

/// The answer to one `map_async`, awaited: `None` if it never came (natively, after
/// [`Mapping::wait_native`] gave up).
#[derive(Clone, Default)]
struct Mapping(Arc<(Mutex<MappingState>, Condvar)>);

#[derive(Default)]
struct MappingState {
    result: Option<Result<(), wgpu::BufferAsyncError>>,
    waker: Option<Waker>,
}

impl Mapping {
    fn resolve(&self, result: Result<(), wgpu::BufferAsyncError>) {
        let (state, resolved) = &*self.0;
        let waker = {
            let mut state = lock(state);
            state.result = Some(result);
            state.waker.take()
        };
        resolved.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Waits, natively, until the answer has come: `wait` waits for the GPU and runs the callbacks
    /// that are ready, but when several threads wait at once, another thread's wait may have
    /// taken this mapping's callback and not run it yet; the answer then comes from that thread
    /// shortly. Gives up (the future then yields `None`) only if it has not come
    /// [`MAPPING_PATIENCE`] after the GPU finished, which would be a wgpu defect.
    #[cfg(not(target_arch = "wasm32"))]
    fn wait_native(
        &self,
        wait: impl Fn() -> Result<(), DispatchError>,
    ) -> Result<(), DispatchError> {
        let (state, resolved) = &*self.0;
        // Counted from the end of the first wait, which may be long (the GPU's work).
        let mut gpu_done = None;
        loop {
            wait()?;
            let gpu_done = *gpu_done.get_or_insert_with(std::time::Instant::now);
            let state = lock(state);
            if state.result.is_some() || gpu_done.elapsed() > MAPPING_PATIENCE {
                return Ok(());
            }
            let (state, _) = resolved
                .wait_timeout(state, std::time::Duration::from_millis(1))
                .unwrap_or_else(|e| e.into_inner());
            if state.result.is_some() {
                return Ok(());
            }
        }
    }
}

/// How long a native read waits, after the GPU finished, for its mapping's callback to run on
/// another thread.
#[cfg(not(target_arch = "wasm32"))]
const MAPPING_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

impl Future for Mapping {
    type Output = Option<Result<(), wgpu::BufferAsyncError>>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let mut state = lock(&self.0.0);
        if let Some(result) = state.result.take() {
            return Poll::Ready(Some(result));
        }
        // Natively `wait_native` before the first poll delivered every answer there will be.
        if cfg!(not(target_arch = "wasm32")) {
            return Poll::Ready(None);
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}
