//! heapwire-pool: the offload pool. Decoding leaves the application's threads.
//!
//! `N` run-to-completion workers (std threads, each optionally pinned to a core), each
//! with its own engine (made by the caller's factory, on the worker's thread) and its
//! own **host region**. A worker takes one request from the shared request queue and
//! decodes it to completion through the engine door ([`Engine::decode_into`]) into the
//! next free part of its region, *at that part's real address* (the request's `base`),
//! so the image is valid in place. The result goes onto the **hand-off queue** as a
//! [`Completion`]: the tag, the type, the worker, and an [`ImageRef`] (address, length;
//! derefs to the bytes; frees its space when dropped) or the [`Rejection`].
//!
//! Back-pressure ([`Backpressure`]): at most `depth` requests are in the pool at once
//! (queued, being decoded, or completed and not yet received), and a region holds only
//! what it holds. Under `Block` a submitter waits for room and a worker waits for the
//! application to release images; under `DropAndCount` a request that does not fit is
//! handed back — by `submit` ([`SubmitError::Full`]) when the queue is full, on the
//! hand-off queue ([`Outcome::Dropped`]) when its worker's region is — and counted per
//! reason in [`Pool::stats`]. Nothing is lost silently.
//!
//! `docs/pool.md` describes the design; the allocator is in [`region`](ImageRef).

mod region;

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use heapwire_engine::{Engine, Error, Options, RejectKind, Rejection, Request, Wire};

pub use region::{ImageRef, RegionStats};

/// What happens when the pool is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backpressure {
    /// `submit` waits for room in the queue; a worker whose region is full waits for
    /// the application to release images. Nothing is dropped.
    Block,
    /// A request that finds no room is handed back at once and counted
    /// ([`DropReason`]): by `submit` when the queue is full, as [`Outcome::Dropped`]
    /// when its worker's region is.
    DropAndCount,
}

/// Which cores the workers run on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pinning {
    /// Wherever the OS puts them.
    None,
    /// Worker `i` on core `cores[i % cores.len()]` (core ids as the OS numbers them).
    Cores(Vec<usize>),
    /// Worker `i` on the `i`-th core the process may run on (modulo their number).
    Auto,
}

/// How a worker's pinning went (in [`Stats::pinning`]); failure is reported, not fatal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PinStatus {
    NotRequested,
    Pinned(usize),
    Failed { core: usize, reason: String },
}

/// How the pool is set up.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// Number of workers (and regions); at least 1.
    pub workers: usize,
    /// Bytes in each worker's region (rounded up to 8). The largest image the pool
    /// accepts; a larger one is rejected with `buffer_too_small` and `needed`.
    pub region_bytes: usize,
    /// Most requests in the pool at once: queued, being decoded, or completed and not
    /// yet received. Bounds the request queue and the hand-off queue alike.
    pub depth: usize,
    pub backpressure: Backpressure,
    pub pinning: Pinning,
    /// Decode options for every request (depth and image limits, type registers);
    /// `base` is ignored: each image's base is where it lands.
    pub options: Options,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            workers: 1,
            region_bytes: 1 << 20,
            depth: 64,
            backpressure: Backpressure::Block,
            pinning: Pinning::None,
            options: Options::default(),
        }
    }
}

/// One request: decode `input` as message `msg` (its index in the engine's compiled
/// schema) on `wire`. `tag` is the caller's, returned in the completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub tag: u64,
    pub msg: usize,
    pub wire: Wire,
    pub input: Vec<u8>,
}

/// Why `submit` handed a job back.
#[derive(Debug, PartialEq, Eq)]
pub enum SubmitError {
    /// The pool is full (`DropAndCount`): the job comes back, counted as
    /// [`DropReason::QueueFull`].
    Full(Job),
    /// The pool is shutting down.
    Closed(Job),
}

impl SubmitError {
    pub fn into_job(self) -> Job {
        match self {
            SubmitError::Full(j) | SubmitError::Closed(j) => j,
        }
    }
}

impl std::fmt::Display for SubmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubmitError::Full(j) => write!(f, "pool full: request {} handed back", j.tag),
            SubmitError::Closed(j) => write!(f, "pool shut down: request {} handed back", j.tag),
        }
    }
}

impl std::error::Error for SubmitError {}

/// Why a request was dropped (`DropAndCount`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// No room in the queue: `submit` returned [`SubmitError::Full`].
    QueueFull,
    /// The worker's region had no free part large enough: [`Outcome::Dropped`].
    RegionFull,
}

/// What became of a request.
#[derive(Debug)]
pub enum Outcome {
    /// The image, in place in the worker's region.
    Image(ImageRef),
    /// The input was rejected (the same rejection `heapwire decode` gives). An image
    /// larger than a whole region is `buffer_too_small` with `needed` its size.
    Rejected(Rejection),
    /// The engine could not serve the request (an engine error, or a panic inside the
    /// engine: the worker then makes a new engine and goes on).
    Failed(String),
    /// Not decoded: the region was full under `DropAndCount` (counted).
    Dropped(DropReason),
    /// Not decoded: the pool was shut down with [`Shutdown::Cancel`] first.
    Cancelled,
}

/// One finished request on the hand-off queue.
#[derive(Debug)]
pub struct Completion {
    pub tag: u64,
    pub msg: usize,
    pub wire: Wire,
    /// The worker (and region) that handled it.
    pub worker: usize,
    /// The request's input buffer, handed back for reuse (or to submit again).
    pub input: Vec<u8>,
    pub outcome: Outcome,
}

impl Completion {
    /// The image, or why there is none (as the engine door says it).
    pub fn into_result(self) -> Result<ImageRef, Error> {
        match self.outcome {
            Outcome::Image(i) => Ok(i),
            Outcome::Rejected(r) => Err(Error::Rejected(r)),
            Outcome::Failed(m) => Err(Error::Engine(m)),
            Outcome::Dropped(r) => Err(Error::Engine(format!("dropped: {r:?}"))),
            Outcome::Cancelled => Err(Error::Engine("cancelled".into())),
        }
    }
}

/// How [`Pool::close`] treats requests not yet started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    /// Decode every request already accepted, then stop.
    Drain,
    /// Hand back every request not yet started as [`Outcome::Cancelled`] (with its
    /// input); a worker waiting for region space gives up the same way. Requests being
    /// decoded run to completion (run-to-completion: no preemption).
    Cancel,
}

/// Counters since the pool started, and a snapshot of its queues and regions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Accepted by `submit`.
    pub submitted: u64,
    /// Completed with an image.
    pub images: u64,
    /// Completed with a rejection (oversized images included).
    pub rejected: u64,
    /// Of those, images larger than a whole region.
    pub oversized: u64,
    pub failed: u64,
    /// Engine panics (each also counted in `failed`; the engine was replaced).
    pub panics: u64,
    /// Handed back by `submit` because the queue was full.
    pub dropped_queue_full: u64,
    /// Handed back on the hand-off queue because the region was full.
    pub dropped_region_full: u64,
    pub cancelled: u64,
    /// Times a submitter waited for room (`Block`).
    pub submit_waits: u64,
    /// Times a worker waited for region space (`Block`).
    pub region_waits: u64,
    /// Bytes of images written.
    pub image_bytes: u64,
    /// Requests waiting for a worker.
    pub queued: usize,
    /// Requests being decoded.
    pub decoding: usize,
    /// Completions waiting to be received.
    pub handoff: usize,
    pub regions: Vec<RegionStats>,
    pub pinning: Vec<PinStatus>,
}

#[derive(Default)]
struct Counters {
    submitted: AtomicU64,
    images: AtomicU64,
    rejected: AtomicU64,
    oversized: AtomicU64,
    failed: AtomicU64,
    panics: AtomicU64,
    dropped_queue_full: AtomicU64,
    dropped_region_full: AtomicU64,
    cancelled: AtomicU64,
    submit_waits: AtomicU64,
    region_waits: AtomicU64,
    image_bytes: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// The queues, under one lock (held for a push or a pop, never during a decode).
struct State {
    queue: VecDeque<Job>,
    handoff: VecDeque<Completion>,
    /// Accepted and not yet received: `queue + decoding + handoff`.
    in_flight: usize,
    decoding: usize,
    closed: Option<Shutdown>,
    /// Threads waiting on `work`, `room` and `ready`: a condvar is signalled only when
    /// someone waits on it (a signal is a system call).
    idle_workers: usize,
    waiting_submitters: usize,
    waiting_receivers: usize,
}

struct Shared {
    state: Mutex<State>,
    /// A job was queued, or the pool closed (workers wait on it).
    work: Condvar,
    /// A completion was received: room for a submitter.
    room: Condvar,
    /// A completion was posted, or the pool finished (receivers wait on it).
    ready: Condvar,
    /// Raised by `Shutdown::Cancel`: workers waiting for region space give up.
    cancel: AtomicBool,
    depth: usize,
    policy: Backpressure,
    regions: Vec<Arc<region::Region>>,
    pinning: Mutex<Vec<PinStatus>>,
    counters: Counters,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn finished(s: &State) -> bool {
        s.closed.is_some() && s.in_flight == 0
    }

    fn take(&self, s: &mut State) -> Completion {
        let c = s.handoff.pop_front().expect("a completion");
        s.in_flight -= 1;
        if s.waiting_submitters > 0 {
            self.room.notify_one();
        }
        if Self::finished(s) {
            self.ready.notify_all();
        }
        c
    }
}

/// The offload pool. `Send + Sync`: share it (`Arc<Pool>`) between submitting and
/// receiving threads. Dropping it is [`Shutdown::Cancel`] and joins every worker;
/// images already handed out stay valid until released.
pub struct Pool {
    shared: Arc<Shared>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl Pool {
    /// Starts `config.workers` workers; `factory(i)` makes worker `i`'s engine on that
    /// worker's thread (so the engine need not be `Send`). Returns when every worker
    /// has its engine, region and pinning. A panic in the factory stops the other
    /// workers and is raised again here.
    pub fn new<E, F>(config: PoolConfig, factory: F) -> Pool
    where
        E: Engine + 'static,
        F: Fn(usize) -> E + Send + Sync + 'static,
    {
        let n = config.workers.max(1);
        let regions: Vec<_> = (0..n)
            .map(|i| Arc::new(region::Region::new(i, config.region_bytes)))
            .collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                handoff: VecDeque::new(),
                in_flight: 0,
                decoding: 0,
                closed: None,
                idle_workers: 0,
                waiting_submitters: 0,
                waiting_receivers: 0,
            }),
            work: Condvar::new(),
            room: Condvar::new(),
            ready: Condvar::new(),
            cancel: AtomicBool::new(false),
            depth: config.depth.max(1),
            policy: config.backpressure,
            regions,
            pinning: Mutex::new(vec![PinStatus::NotRequested; n]),
            counters: Counters::default(),
        });
        let cores = match &config.pinning {
            Pinning::None => Vec::new(),
            Pinning::Cores(c) => c.clone(),
            Pinning::Auto => core_affinity::get_core_ids()
                .unwrap_or_default()
                .into_iter()
                .map(|c| c.id)
                .collect(),
        };
        let auto_failed = config.pinning == Pinning::Auto && cores.is_empty();
        let factory = Arc::new(factory);
        let (started_tx, started) = std::sync::mpsc::channel();
        let workers = (0..n)
            .map(|i| {
                let shared = shared.clone();
                let factory = factory.clone();
                let options = config.options.clone();
                let core = (!cores.is_empty()).then(|| cores[i % cores.len()]);
                let started = started_tx.clone();
                std::thread::Builder::new()
                    .name(format!("heapwire-pool-{i}"))
                    .spawn(move || {
                        let pin = match core {
                            Some(c) if c >= 1024 => PinStatus::Failed {
                                core: c,
                                reason: format!("core {c} is beyond the 1024 a CPU set holds"),
                            },
                            Some(c)
                                if core_affinity::set_for_current(core_affinity::CoreId {
                                    id: c,
                                }) =>
                            {
                                PinStatus::Pinned(c)
                            }
                            Some(c) => PinStatus::Failed {
                                core: c,
                                reason: format!("the OS refused to pin to core {c}"),
                            },
                            None if auto_failed => PinStatus::Failed {
                                core: i,
                                reason: "the cores this process may use are unknown".into(),
                            },
                            None => PinStatus::NotRequested,
                        };
                        shared.pinning.lock().unwrap()[i] = pin;
                        let engine = factory(i);
                        let _ = started.send(());
                        drop(started);
                        Worker {
                            id: i,
                            shared,
                            engine,
                            factory,
                            options,
                            lost: false,
                        }
                        .run();
                    })
                    .expect("spawning a pool worker")
            })
            .collect();
        drop(started_tx);
        // Every worker sends once and drops its sender; one whose factory panicked only drops it.
        let ready = started.iter().count();
        let pool = Pool {
            shared,
            workers: Mutex::new(workers),
        };
        if ready < n {
            drop(pool);
            panic!(
                "heapwire-pool: the engine factory panicked on {} of {n} workers",
                n - ready
            );
        }
        pool
    }

    /// Queues a request. Full pool: under `Block` waits for room; under
    /// `DropAndCount` hands the job back ([`SubmitError::Full`], counted). A closed
    /// pool hands it back as [`SubmitError::Closed`].
    pub fn submit(&self, job: Job) -> Result<(), SubmitError> {
        let sh = &*self.shared;
        let mut s = sh.lock();
        let mut waited = false;
        loop {
            if s.closed.is_some() {
                return Err(SubmitError::Closed(job));
            }
            if s.in_flight < sh.depth {
                break;
            }
            match sh.policy {
                Backpressure::DropAndCount => {
                    bump(&sh.counters.dropped_queue_full);
                    return Err(SubmitError::Full(job));
                }
                Backpressure::Block => {
                    if !waited {
                        waited = true;
                        bump(&sh.counters.submit_waits);
                    }
                    s.waiting_submitters += 1;
                    s = sh.room.wait(s).unwrap_or_else(|p| p.into_inner());
                    s.waiting_submitters -= 1;
                }
            }
        }
        s.queue.push_back(job);
        s.in_flight += 1;
        bump(&sh.counters.submitted);
        if s.idle_workers > 0 {
            sh.work.notify_one();
        }
        Ok(())
    }

    /// The next completion, waiting for one; `None` once the pool is closed and every
    /// accepted request has been received.
    pub fn recv(&self) -> Option<Completion> {
        let sh = &*self.shared;
        let mut s = sh.lock();
        loop {
            if !s.handoff.is_empty() {
                return Some(sh.take(&mut s));
            }
            if Shared::finished(&s) {
                return None;
            }
            s.waiting_receivers += 1;
            s = sh.ready.wait(s).unwrap_or_else(|p| p.into_inner());
            s.waiting_receivers -= 1;
        }
    }

    /// A completion if one is waiting.
    pub fn try_recv(&self) -> Option<Completion> {
        let sh = &*self.shared;
        let mut s = sh.lock();
        (!s.handoff.is_empty()).then(|| sh.take(&mut s))
    }

    /// Like [`Pool::recv`], giving up after `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Completion> {
        let sh = &*self.shared;
        let deadline = Instant::now() + timeout;
        let mut s = sh.lock();
        loop {
            if !s.handoff.is_empty() {
                return Some(sh.take(&mut s));
            }
            let now = Instant::now();
            if Shared::finished(&s) || now >= deadline {
                return None;
            }
            s.waiting_receivers += 1;
            s = sh
                .ready
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            s.waiting_receivers -= 1;
        }
    }

    /// Accepted requests not yet received (queued, being decoded, or on the hand-off
    /// queue).
    pub fn in_flight(&self) -> usize {
        self.shared.lock().in_flight
    }

    /// Stops accepting requests. `Drain`: workers decode everything already queued;
    /// `Cancel`: requests not yet started come back as [`Outcome::Cancelled`]. Either
    /// way receivers get every completion, then `None`. Does not wait; see
    /// [`Pool::shutdown`]. Closing again with `Cancel` turns a drain into a cancel.
    pub fn close(&self, how: Shutdown) {
        let sh = &*self.shared;
        let mut s = sh.lock();
        if s.closed == Some(Shutdown::Cancel) {
            return;
        }
        s.closed = Some(how);
        if how == Shutdown::Cancel {
            sh.cancel.store(true, Ordering::SeqCst);
            while let Some(job) = s.queue.pop_front() {
                bump(&sh.counters.cancelled);
                s.handoff.push_back(Completion {
                    tag: job.tag,
                    msg: job.msg,
                    wire: job.wire,
                    worker: usize::MAX,
                    input: job.input,
                    outcome: Outcome::Cancelled,
                });
            }
        }
        sh.work.notify_all();
        sh.room.notify_all();
        sh.ready.notify_all();
        drop(s);
        if how == Shutdown::Cancel {
            for r in &sh.regions {
                r.wake();
            }
        }
    }

    /// Closes the pool, waits for every worker to exit, and returns the completions
    /// nobody received (images among them stay valid until dropped). Under `Drain` and
    /// `Block`, a worker waiting for region space waits for the application to release
    /// images (or for a later `close(Cancel)` from another thread).
    pub fn shutdown(&self, how: Shutdown) -> Vec<Completion> {
        self.close(how);
        self.join();
        let mut left = Vec::new();
        while let Some(c) = self.try_recv() {
            left.push(c);
        }
        left
    }

    fn join(&self) {
        let workers = std::mem::take(&mut *self.workers.lock().unwrap_or_else(|p| p.into_inner()));
        for w in workers {
            let _ = w.join();
        }
    }

    /// Number of workers (and regions).
    pub fn workers(&self) -> usize {
        self.shared.regions.len()
    }

    /// Counters, queue lengths, regions and pinning.
    pub fn stats(&self) -> Stats {
        let sh = &*self.shared;
        let c = &sh.counters;
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (queued, decoding, handoff) = {
            let s = sh.lock();
            (s.queue.len(), s.decoding, s.handoff.len())
        };
        Stats {
            submitted: g(&c.submitted),
            images: g(&c.images),
            rejected: g(&c.rejected),
            oversized: g(&c.oversized),
            failed: g(&c.failed),
            panics: g(&c.panics),
            dropped_queue_full: g(&c.dropped_queue_full),
            dropped_region_full: g(&c.dropped_region_full),
            cancelled: g(&c.cancelled),
            submit_waits: g(&c.submit_waits),
            region_waits: g(&c.region_waits),
            image_bytes: g(&c.image_bytes),
            queued,
            decoding,
            handoff,
            regions: sh.regions.iter().map(|r| r.stats()).collect(),
            pinning: sh.pinning.lock().unwrap().clone(),
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.close(Shutdown::Cancel);
        self.join();
    }
}

struct Worker<E, F> {
    id: usize,
    shared: Arc<Shared>,
    engine: E,
    factory: Arc<F>,
    options: Options,
    /// The factory panicked when replacing a panicked engine: the worker stops after
    /// delivering the request's completion (the others go on).
    lost: bool,
}

impl<E: Engine, F: Fn(usize) -> E> Worker<E, F> {
    fn run(mut self) {
        loop {
            let job = {
                let sh = &*self.shared;
                let mut s = sh.lock();
                loop {
                    if let Some(j) = s.queue.pop_front() {
                        s.decoding += 1;
                        break j;
                    }
                    if s.closed.is_some() {
                        return;
                    }
                    s.idle_workers += 1;
                    s = sh.work.wait(s).unwrap_or_else(|p| p.into_inner());
                    s.idle_workers -= 1;
                }
            };
            let outcome = self.decode(&job);
            let sh = &*self.shared;
            let mut s = sh.lock();
            s.decoding -= 1;
            let Job {
                tag,
                msg,
                wire,
                input,
            } = job;
            s.handoff.push_back(Completion {
                tag,
                msg,
                wire,
                worker: self.id,
                input,
                outcome,
            });
            if s.waiting_receivers > 0 {
                sh.ready.notify_one();
            }
            if self.lost {
                return;
            }
        }
    }

    /// Decodes one job to completion into this worker's region.
    fn decode(&mut self, job: &Job) -> Outcome {
        let sh = self.shared.clone();
        let region = &sh.regions[self.id];
        let c = &sh.counters;
        loop {
            let (off, len) = region.largest_free();
            self.options.base = region.addr() + off as u64;
            let req = Request {
                msg: job.msg,
                wire: job.wire,
                input: &job.input,
                options: &self.options,
            };
            // SAFETY: this worker is the region's only allocator and `off..off + len`
            // is free; the slice is dropped before `commit`.
            let out = unsafe { region.extent(off, len) };
            let result = catch_unwind(AssertUnwindSafe(|| self.engine.decode_into(&req, out)));
            let want = match result {
                Ok(Ok(d)) => {
                    let span = d.len.div_ceil(8) * 8;
                    region.commit(off, span);
                    bump(&c.images);
                    c.image_bytes.fetch_add(d.len as u64, Ordering::Relaxed);
                    return Outcome::Image(ImageRef::new(
                        region.clone(),
                        off,
                        d.len,
                        span,
                        job.tag,
                        job.msg,
                        job.wire,
                    ));
                }
                Ok(Err(Error::Rejected(r))) if r.kind == RejectKind::BufferTooSmall => {
                    let want = (r.needed as usize).max(len + 8);
                    if want > region.capacity() {
                        bump(&c.rejected);
                        bump(&c.oversized);
                        return Outcome::Rejected(r);
                    }
                    want
                }
                Ok(Err(Error::Rejected(r))) => {
                    bump(&c.rejected);
                    return Outcome::Rejected(r);
                }
                Ok(Err(Error::Engine(m))) => {
                    bump(&c.failed);
                    return Outcome::Failed(m);
                }
                Err(panic) => {
                    let why = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic".into());
                    bump(&c.failed);
                    bump(&c.panics);
                    match catch_unwind(AssertUnwindSafe(|| (self.factory)(self.id))) {
                        Ok(e) => self.engine = e,
                        Err(_) => self.lost = true,
                    }
                    return Outcome::Failed(format!("engine panicked: {why}"));
                }
            };
            // The image fits the region but not its free space now.
            match sh.policy {
                Backpressure::DropAndCount => {
                    bump(&c.dropped_region_full);
                    return Outcome::Dropped(DropReason::RegionFull);
                }
                Backpressure::Block => {
                    bump(&c.region_waits);
                    if !region.wait_for(want, &sh.cancel) {
                        bump(&c.cancelled);
                        return Outcome::Cancelled;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heapwire_engine::Decoded;

    /// A toy engine: the image is the input, then the base as 8 bytes; input `[0xff]`
    /// is rejected at byte 0, input `[0xee]` panics.
    struct Echo;

    impl Engine for Echo {
        fn name(&self) -> &'static str {
            "echo"
        }
        fn check(&self, _: usize, _: Wire) -> Result<(), String> {
            Ok(())
        }
        fn decode(&mut self, req: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error> {
            match req.input.first() {
                Some(0xff) => return Err(Rejection::new(RejectKind::Truncated, 0).into()),
                Some(0xee) => panic!("boom"),
                _ => {}
            }
            out.clear();
            out.extend_from_slice(req.input);
            out.extend_from_slice(&req.options.base.to_le_bytes());
            Ok(Decoded {
                len: out.len(),
                cycles: None,
            })
        }
    }

    fn job(tag: u64, input: &[u8]) -> Job {
        Job {
            tag,
            msg: 0,
            wire: Wire::Protobuf,
            input: input.to_vec(),
        }
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn the_handles_cross_threads() {
        assert_send_sync::<Pool>();
        assert_send_sync::<ImageRef>();
        assert_send_sync::<Completion>();
    }

    #[test]
    fn images_land_at_their_address_rejections_and_panics_come_back() {
        let pool = Pool::new(
            PoolConfig {
                workers: 2,
                region_bytes: 256,
                ..PoolConfig::default()
            },
            |_| Echo,
        );
        pool.submit(job(1, b"abc")).unwrap();
        pool.submit(job(2, &[0xff])).unwrap();
        pool.submit(job(3, &[0xee])).unwrap();
        pool.submit(job(4, b"z")).unwrap();
        let mut got = std::collections::BTreeMap::new();
        for _ in 0..4 {
            let c = pool.recv().unwrap();
            got.insert(c.tag, c);
        }
        let one = match &got[&1].outcome {
            Outcome::Image(i) => i,
            o => panic!("{o:?}"),
        };
        assert_eq!(&one[..3], b"abc");
        assert_eq!(u64::from_le_bytes(one[3..].try_into().unwrap()), one.addr());
        assert_eq!(one.addr() % 8, 0);
        assert!(
            matches!(&got[&2].outcome, Outcome::Rejected(r) if r.kind == RejectKind::Truncated)
        );
        assert!(matches!(&got[&3].outcome, Outcome::Failed(m) if m.contains("boom")));
        assert!(matches!(&got[&4].outcome, Outcome::Image(_)));
        let s = pool.stats();
        assert_eq!(
            (s.submitted, s.images, s.rejected, s.failed, s.panics),
            (4, 2, 1, 1, 1)
        );
        assert_eq!(s.pinning, vec![PinStatus::NotRequested; 2]);
        drop(got);
        assert!(pool
            .stats()
            .regions
            .iter()
            .all(|r| r.live_images == 0 && r.free_bytes == 256));
        assert!(pool.shutdown(Shutdown::Drain).is_empty());
        assert!(pool.recv().is_none());
        assert!(matches!(
            pool.submit(job(5, b"x")),
            Err(SubmitError::Closed(_))
        ));
    }

    #[test]
    fn a_factory_that_panics_stops_the_pool_and_panics_here() {
        let r = std::panic::catch_unwind(|| {
            Pool::new(
                PoolConfig {
                    workers: 2,
                    ..PoolConfig::default()
                },
                |i| if i == 1 { panic!("no engine") } else { Echo },
            )
        });
        assert!(r.is_err());
    }

    #[test]
    fn pinning_is_reported() {
        let pool = Pool::new(
            PoolConfig {
                workers: 2,
                pinning: Pinning::Cores(vec![0, 1023]),
                ..PoolConfig::default()
            },
            |_| Echo,
        );
        let p = pool.stats().pinning;
        assert!(
            matches!(
                p[0],
                PinStatus::Pinned(0) | PinStatus::Failed { core: 0, .. }
            ),
            "{p:?}"
        );
        assert!(
            matches!(p[1], PinStatus::Failed { core: 1023, .. }),
            "{p:?}"
        );
    }
}
