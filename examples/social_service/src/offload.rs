//! Decoding off the request's task: on the offload pool (`heapwire-pool`), or on a device
//! through the device runtime (`heapwire-device`). Either way the request's task submits
//! the wire bytes with a tag and awaits the image; one application-side thread routes
//! completions by tag to the waiting task.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

use heapwire_cpu::CpuEngine;
use heapwire_device::{DeviceHandle, JobError, OpenOptions};
use heapwire_engine::{Engine, RejectKind, Wire};
use heapwire_pool::{Backpressure, DropReason, ImageRef, Job, Outcome, Pinning, Pool, PoolConfig, Shutdown, SubmitError};
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};
use tonic::Status;

use crate::schema::SCHEMA;
use crate::stats::{Counters, Role};

/// A decoded request image and the address it was decoded for.
pub enum RequestImage {
    /// An image at base 0 in memory of its own (inline decode, a device's output).
    Owned(Vec<u8>),
    /// An image in place in a pool worker's region, at its address; released on drop.
    Pool(ImageRef),
}

impl RequestImage {
    pub fn bytes(&self) -> &[u8] {
        match self {
            RequestImage::Owned(v) => v,
            RequestImage::Pool(r) => r,
        }
    }

    pub fn base(&self) -> u64 {
        match self {
            RequestImage::Owned(_) => 0,
            RequestImage::Pool(r) => r.addr(),
        }
    }
}

/// The status for an input the engine rejected: `rejected: KIND at byte N`, the line
/// `heapwire decode` prints (the rejection's one text form).
pub fn rejected(r: &heapwire_engine::Rejection, counters: &Counters) -> Status {
    counters.rejected.fetch_add(1, Relaxed);
    Status::invalid_argument(format!("rejected: {r}"))
}

/// Makes a pool worker's engine, on that worker's thread (`CpuEngine` by default; tests
/// put a gate or a fault in front of it).
pub type EngineFactory = Arc<dyn Fn(usize) -> Box<dyn Engine> + Send + Sync>;

/// How the pool is set up for the service.
#[derive(Clone)]
pub struct PoolSetup {
    pub workers: usize,
    pub region_bytes: usize,
    pub depth: usize,
    pub backpressure: Backpressure,
    /// Cores the workers are pinned to (empty: not pinned).
    pub cores: Vec<usize>,
    /// Cores the dispatcher is pinned to (the application's; empty: not pinned).
    pub app_cores: Vec<usize>,
    pub engine: Option<EngineFactory>,
}

/// Calls waiting for their completion, by tag: where to send it, and (under `Block`) the
/// permit the call holds, released by the dispatcher once the pool has handed the
/// completion over — also when the call itself was dropped meanwhile, so the pool never
/// holds more than its depth and `submit` never blocks a runtime thread.
type Waiters = Mutex<HashMap<u64, (oneshot::Sender<heapwire_pool::Completion>, Option<OwnedSemaphorePermit>)>>;

/// The offload pool and its dispatcher.
pub struct PoolOffload {
    pool: Arc<Pool>,
    waiters: Arc<Waiters>,
    next_tag: AtomicU64,
    region_bytes: usize,
    /// Under `Block`, a permit per request in the pool: a task waits here (asynchronously)
    /// instead of blocking its runtime thread in `Pool::submit`.
    room: Option<Arc<Semaphore>>,
    dispatcher: Mutex<Option<JoinHandle<()>>>,
    counters: Arc<Counters>,
}

impl PoolOffload {
    pub fn start(setup: &PoolSetup, counters: Arc<Counters>) -> PoolOffload {
        let engine_counters = counters.clone();
        let make = setup.engine.clone();
        let pool = Arc::new(Pool::new(
            PoolConfig {
                workers: setup.workers,
                region_bytes: setup.region_bytes,
                depth: setup.depth,
                backpressure: setup.backpressure,
                pinning: if setup.cores.is_empty() { Pinning::None } else { Pinning::Cores(setup.cores.clone()) },
                options: Default::default(),
            },
            move |worker| {
                engine_counters.register_thread(Role::Pool);
                match &make {
                    Some(f) => f(worker),
                    None => Box::new(CpuEngine::new(SCHEMA.compiled.clone())) as Box<dyn Engine>,
                }
            },
        ));
        let waiters: Arc<Waiters> = Default::default();
        let (p, w, c, cores) = (pool.clone(), waiters.clone(), counters.clone(), setup.app_cores.clone());
        let dispatcher = std::thread::Builder::new()
            .name("social-dispatch".into())
            .spawn(move || {
                crate::server::pin_to(&cores);
                c.register_thread(Role::Dispatcher);
                while let Some(done) = p.recv() {
                    let waiter = w.lock().unwrap_or_else(|e| e.into_inner()).remove(&done.tag);
                    // a request whose client went away drops its receiver: the image is
                    // released here with the completion
                    if let Some((tx, permit)) = waiter {
                        drop(permit);
                        let _ = tx.send(done);
                    }
                }
                c.thread_stopping();
            })
            .expect("spawning the dispatcher thread");
        PoolOffload {
            pool,
            waiters,
            next_tag: AtomicU64::new(1),
            region_bytes: setup.region_bytes,
            room: (setup.backpressure == Backpressure::Block).then(|| Arc::new(Semaphore::new(setup.depth.max(1)))),
            dispatcher: Mutex::new(Some(dispatcher)),
            counters,
        }
    }

    /// Decodes `input` as message `msg` on the pool; the image in place in a region.
    pub async fn decode(&self, msg: usize, input: Vec<u8>) -> Result<RequestImage, Status> {
        let permit = match &self.room {
            Some(room) => Some(room.clone().acquire_owned().await.map_err(|_| Status::unavailable("the service is shutting down"))?),
            None => None,
        };
        let tag = self.next_tag.fetch_add(1, Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().unwrap_or_else(|e| e.into_inner()).insert(tag, (tx, permit));
        if let Err(e) = self.pool.submit(Job { tag, msg, wire: Wire::Protobuf, input }) {
            self.waiters.lock().unwrap_or_else(|e| e.into_inner()).remove(&tag);
            return Err(match e {
                SubmitError::Full(_) => {
                    self.counters.dropped_queue_full.fetch_add(1, Relaxed);
                    Status::resource_exhausted("dropped: the offload pool's queue is full")
                }
                SubmitError::Closed(_) => Status::unavailable("the service is shutting down"),
            });
        }
        let done = rx.await.map_err(|_| Status::unavailable("the service is shutting down"))?;
        match done.outcome {
            Outcome::Image(img) => Ok(RequestImage::Pool(img)),
            Outcome::Rejected(r) if r.kind == RejectKind::BufferTooSmall => Err(Status::resource_exhausted(format!(
                "the request's image ({} bytes) is larger than an offload pool region ({} bytes)",
                r.needed, self.region_bytes
            ))),
            Outcome::Rejected(r) => Err(rejected(&r, &self.counters)),
            Outcome::Failed(m) => Err(Status::internal(format!("decode failed: {m}"))),
            Outcome::Dropped(DropReason::RegionFull) => {
                self.counters.dropped_region_full.fetch_add(1, Relaxed);
                Err(Status::resource_exhausted("dropped: the offload pool's region is full"))
            }
            Outcome::Dropped(DropReason::QueueFull) => {
                self.counters.dropped_queue_full.fetch_add(1, Relaxed);
                Err(Status::resource_exhausted("dropped: the offload pool's queue is full"))
            }
            Outcome::Cancelled => Err(Status::unavailable("the service is shutting down")),
        }
    }

    pub fn stats(&self) -> heapwire_pool::Stats {
        self.pool.stats()
    }

    /// Drains the pool and joins its workers and the dispatcher.
    pub fn shutdown(&self) {
        if let Some(room) = &self.room {
            room.close();
        }
        self.pool.shutdown(Shutdown::Drain);
        if let Some(d) = self.dispatcher.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = d.join();
        }
    }
}

/// Where a device result goes.
type DeviceReply = oneshot::Sender<Result<Vec<u8>, JobError>>;

/// A request for the device thread.
struct DeviceRequest {
    msg: usize,
    input: Vec<u8>,
    reply: DeviceReply,
    /// Held until the device has answered (also when the call was dropped meanwhile).
    permit: OwnedSemaphorePermit,
}

/// A device opened through the device runtime, driven by one thread that owns its handle.
pub struct DeviceOffload {
    tx: Mutex<Option<mpsc::Sender<DeviceRequest>>>,
    /// Requests at the device at once (queued for the thread or in flight).
    room: Arc<Semaphore>,
    backpressure: Backpressure,
    thread: Mutex<Option<JoinHandle<()>>>,
    counters: Arc<Counters>,
}

impl DeviceOffload {
    /// Opens `uri` (`inproc:cpu`, `tcp://HOST:PORT`, ...), on the device thread; fails with
    /// the runtime's message if it cannot be opened.
    pub fn start(uri: &str, depth: usize, backpressure: Backpressure, cores: Vec<usize>, counters: Arc<Counters>) -> Result<DeviceOffload, String> {
        let (tx, rx) = mpsc::channel::<DeviceRequest>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let (uri, c) = (uri.to_string(), counters.clone());
        let thread = std::thread::Builder::new()
            .name("social-device".into())
            .spawn(move || {
                crate::server::pin_to(&cores);
                c.register_thread(Role::Device);
                let dev = match DeviceHandle::open(&uri, &OpenOptions::default()) {
                    Ok(d) => d,
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("--device {uri}: {e}")));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                drive_device(dev, &rx);
                c.thread_stopping();
            })
            .map_err(|e| format!("spawning the device thread: {e}"))?;
        ready_rx.recv().map_err(|_| "the device thread stopped".to_string())??;
        Ok(DeviceOffload {
            tx: Mutex::new(Some(tx)),
            room: Arc::new(Semaphore::new(depth.max(1))),
            backpressure,
            thread: Mutex::new(Some(thread)),
            counters,
        })
    }

    pub async fn decode(&self, msg: usize, input: Vec<u8>) -> Result<RequestImage, Status> {
        let permit = match self.backpressure {
            Backpressure::Block => self.room.clone().acquire_owned().await.map_err(|_| Status::unavailable("the service is shutting down"))?,
            Backpressure::DropAndCount => self.room.clone().try_acquire_owned().map_err(|_| {
                self.counters.dropped_device_full.fetch_add(1, Relaxed);
                Status::resource_exhausted("dropped: the device's queue is full")
            })?,
        };
        let (reply, rx) = oneshot::channel();
        {
            let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
            let sent = tx.as_ref().map(|t| t.send(DeviceRequest { msg, input, reply, permit }).is_ok());
            if sent != Some(true) {
                return Err(Status::unavailable("the service is shutting down"));
            }
        }
        match rx.await.map_err(|_| Status::unavailable("the device thread stopped"))? {
            Ok(image) => Ok(RequestImage::Owned(image)),
            Err(JobError::Rejected(r)) => Err(rejected(&r, &self.counters)),
            Err(JobError::Device { text, .. }) => Err(Status::internal(format!("device: {text}"))),
        }
    }

    /// Lets the device thread finish what it holds, closes the device and joins the thread.
    pub fn shutdown(&self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = t.join();
        }
    }
}

/// The device thread: submits requests as they come (the runtime keeps its in-flight
/// window) and hands results back in submission order, which is the order `next` gives.
fn drive_device(mut dev: DeviceHandle, rx: &mpsc::Receiver<DeviceRequest>) {
    let schema = Arc::new(heapwire_device::Schema::new("social_service", SCHEMA.compiled.clone()));
    let mut waiting: VecDeque<(DeviceReply, OwnedSemaphorePermit)> = VecDeque::new();
    let mut open = true;
    while open || !waiting.is_empty() {
        // block for work only when nothing is outstanding
        let next = if waiting.is_empty() { rx.recv().ok() } else { rx.try_recv().ok() };
        match next {
            Some(req) => {
                let job = heapwire_device::Job {
                    schema: schema.clone(),
                    msg: req.msg as u32,
                    wire: Wire::Protobuf,
                    base: 0,
                    max_depth: 100,
                    input: req.input,
                };
                // a failed submit still took a ticket (queued, then the link failed):
                // `next` answers it, with the link's error, in its turn
                let _ = dev.submit(job);
                waiting.push_back((req.reply, req.permit));
                continue;
            }
            None if waiting.is_empty() => open = false,
            None => {}
        }
        if let Some((reply, permit)) = waiting.pop_front() {
            let r = match dev.next() {
                Ok((_, r)) => r.map(|img| img.bytes),
                Err(e) => Err(JobError::Device { code: 0, text: e.to_string() }),
            };
            drop(permit);
            let _ = reply.send(r);
        }
    }
    let _ = dev.close();
}
