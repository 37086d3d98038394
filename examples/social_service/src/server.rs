//! Starting and stopping the service: the tokio runtime (the application's threads), the
//! core split between them and the pool (or device) thread(s), the tonic server with a
//! layer counting non-OK statuses, and the statistics written on exit.

use std::fmt::Write as _;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use heapwire_pool::Backpressure;
use tokio::sync::oneshot;
use tonic::codegen::{http, Service};

use crate::handlers::Handlers;
use crate::heapwire_service::{Decode, HeapwireSocial, HeapwireSocialServer};
use crate::offload::{DeviceOffload, EngineFactory, PoolOffload, PoolSetup};
use crate::prost_service::ProstSocial;
use crate::schema::Rpc;
use crate::stats::{json_str, Counters, Role};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodecKind {
    Heapwire,
    Prost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Inline,
    Pool,
    Device,
}

/// Everything the command line sets (`docs/service.md` documents each).
#[derive(Clone)]
pub struct Config {
    pub listen: String,
    pub codec: CodecKind,
    pub mode: Mode,
    /// Pool workers (default: one per pool core, at least one).
    pub workers: Option<usize>,
    /// Cores given to the pool workers (or the device thread); the application's threads
    /// get the others. `Some(0)`: no pinning. Default: 1 in pool and device modes when
    /// the process may use 2 or more cores.
    pub pool_cores: Option<usize>,
    /// tokio worker threads (default: one per application core).
    pub app_threads: Option<usize>,
    pub device: String,
    pub max_request_bytes: usize,
    pub backpressure: Backpressure,
    /// Requests in the pool (or at the device) at once.
    pub pool_depth: usize,
    pub region_bytes: usize,
    /// The pool workers' engine (library use only; `CpuEngine` when `None`).
    pub pool_engine: Option<EngineFactory>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:50051".into(),
            codec: CodecKind::Heapwire,
            mode: Mode::Inline,
            workers: None,
            pool_cores: None,
            app_threads: None,
            device: "inproc:cpu".into(),
            max_request_bytes: 4 << 20,
            backpressure: Backpressure::Block,
            pool_depth: 1024,
            region_bytes: 16 << 20,
            pool_engine: None,
        }
    }
}

/// The cores this process may run on, as the OS numbers them.
pub fn allowed_cores() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity writes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Pins the calling thread to `cores` (nothing when empty). Best effort: a refusal
/// leaves the thread where it was.
pub fn pin_to(cores: &[usize]) {
    if cores.is_empty() {
        return;
    }
    // SAFETY: as in `allowed_cores`; sched_setaffinity reads the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cores {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// How the cores are split: the application's threads on `app`, the pool workers (or
/// the device thread) on `offload`; both empty when nothing is pinned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreSplit {
    pub app: Vec<usize>,
    pub offload: Vec<usize>,
}

impl Config {
    /// Checks the flags against each other and works out the core split.
    pub fn core_split(&self) -> Result<CoreSplit, String> {
        let cores = allowed_cores();
        let offloads = matches!(self.mode, Mode::Pool | Mode::Device);
        if self.codec == CodecKind::Prost && self.mode != Mode::Inline {
            return Err("--codec prost decodes on the request's task: only --mode inline".into());
        }
        if !offloads {
            if let Some(n) = self.pool_cores.filter(|&n| n > 0) {
                return Err(format!("--pool-cores {n} needs --mode pool or device (inline mode has no pool)"));
            }
            if self.workers.is_some() {
                return Err("--workers needs --mode pool".into());
            }
            return Ok(CoreSplit { app: Vec::new(), offload: Vec::new() });
        }
        let pool_cores = self.pool_cores.unwrap_or(if cores.len() >= 2 { 1 } else { 0 });
        if pool_cores == 0 {
            return Ok(CoreSplit { app: Vec::new(), offload: Vec::new() });
        }
        if pool_cores >= cores.len() {
            return Err(format!(
                "--pool-cores {pool_cores} leaves no core for the application (this process may use {} core(s): {cores:?}); --pool-cores 0 shares them unpinned",
                cores.len()
            ));
        }
        let split = cores.len() - pool_cores;
        Ok(CoreSplit { app: cores[..split].to_vec(), offload: cores[split..].to_vec() })
    }
}

/// A running service.
pub struct Server {
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<Result<(), tonic::transport::Error>>>,
    counters: Arc<Counters>,
    heapwire: Option<Arc<HeapwireSocial>>,
    split: CoreSplit,
    config: Config,
    started: Instant,
}

/// Starts the service: binds `config.listen`, and serves on its own runtime until
/// [`Server::stop`].
pub fn start(config: Config) -> Result<Server, String> {
    let split = config.core_split()?;
    let counters = Arc::new(Counters::default());
    let app_threads = config.app_threads.unwrap_or(if split.app.is_empty() { allowed_cores().len() } else { split.app.len() }).max(1);
    let (c_start, c_stop, app_cores) = (counters.clone(), counters.clone(), split.app.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(app_threads)
        .thread_name("social-app")
        .on_thread_start(move || {
            pin_to(&app_cores);
            c_start.register_thread(Role::App);
        })
        .on_thread_stop(move || c_stop.thread_stopping())
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    let handlers = Arc::new(Handlers::new());

    let heapwire = match config.codec {
        CodecKind::Prost => None,
        CodecKind::Heapwire => {
            let decode = match config.mode {
                Mode::Inline => Decode::Inline,
                Mode::Pool => {
                    let workers = config.workers.unwrap_or(split.offload.len()).max(1);
                    Decode::Pool(PoolOffload::start(
                        &PoolSetup {
                            workers,
                            region_bytes: config.region_bytes,
                            depth: config.pool_depth,
                            backpressure: config.backpressure,
                            cores: split.offload.clone(),
                            app_cores: split.app.clone(),
                            engine: config.pool_engine.clone(),
                        },
                        counters.clone(),
                    ))
                }
                Mode::Device => Decode::Device(DeviceOffload::start(
                    &config.device,
                    config.pool_depth,
                    config.backpressure,
                    split.offload.clone(),
                    counters.clone(),
                )?),
            };
            Some(Arc::new(HeapwireSocial { handlers: handlers.clone(), counters: counters.clone(), decode }))
        }
    };

    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(&config.listen))
        .map_err(|e| format!("--listen {}: {e}", config.listen))?;
    let addr = listener.local_addr().map_err(|e| format!("--listen {}: {e}", config.listen))?;
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    let layer = StatusCountLayer { counters: counters.clone() };
    let mut builder = tonic::transport::Server::builder().layer(layer);
    let shutdown = async move {
        let _ = stop_rx.await;
    };
    let _guard = runtime.enter();
    let served = match &heapwire {
        Some(hw) => {
            let svc = HeapwireSocialServer::new(hw.clone(), config.max_request_bytes);
            tokio::spawn(builder.add_service(svc).serve_with_incoming_shutdown(incoming, shutdown))
        }
        None => {
            let svc = crate::pb::rpc::social_server::SocialServer::new(ProstSocial { handlers, counters: counters.clone() })
                .max_decoding_message_size(config.max_request_bytes);
            tokio::spawn(builder.add_service(svc).serve_with_incoming_shutdown(incoming, shutdown))
        }
    };
    drop(_guard);
    Ok(Server {
        addr,
        runtime: Some(runtime),
        stop: Some(stop_tx),
        served: Some(served),
        counters,
        heapwire,
        split,
        config,
        started: Instant::now(),
    })
}

impl Server {
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Pool statistics, in pool mode.
    pub fn pool_stats(&self) -> Option<heapwire_pool::Stats> {
        match &self.heapwire.as_ref()?.decode {
            Decode::Pool(p) => Some(p.stats()),
            _ => None,
        }
    }

    /// Stops accepting, lets calls in progress finish (up to `grace`), then stops the
    /// pool or device and the runtime. Returns the statistics as JSON.
    pub fn stop(mut self, grace: Duration) -> String {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let rt = self.runtime.take().expect("running");
        if let Some(served) = self.served.take() {
            let _ = rt.block_on(async { tokio::time::timeout(grace, served).await });
        }
        let wall = self.started.elapsed();
        // every accounted thread is still running: read their clocks now
        let json = self.stats_json(wall);
        if let Some(hw) = &self.heapwire {
            match &hw.decode {
                Decode::Pool(p) => p.shutdown(),
                Decode::Device(d) => d.shutdown(),
                Decode::Inline => {}
            }
        }
        rt.shutdown_timeout(grace);
        json
    }

    /// The statistics so far, as the JSON `--stats-out` writes.
    pub fn stats_json(&self, wall: Duration) -> String {
        let c = &self.counters;
        let mut j = String::from("{\n");
        let _ = writeln!(j, "  \"codec\": {},", json_str(if self.config.codec == CodecKind::Prost { "prost" } else { "heapwire" }));
        let mode = match self.config.mode {
            Mode::Inline => "inline",
            Mode::Pool => "pool",
            Mode::Device => "device",
        };
        let _ = writeln!(j, "  \"mode\": {},", json_str(mode));
        let _ = writeln!(j, "  \"wall_seconds\": {:.6},", wall.as_secs_f64());
        let served: Vec<String> = Rpc::ALL.iter().map(|r| format!("{}: {}", json_str(r.name()), c.served_count(*r))).collect();
        let total: u64 = Rpc::ALL.iter().map(|r| c.served_count(*r)).sum();
        let _ = writeln!(j, "  \"served\": {{{}}},", served.join(", "));
        let _ = writeln!(j, "  \"served_total\": {total},");
        let statuses: Vec<String> = c.statuses().iter().map(|(k, v)| format!("{}: {v}", json_str(k))).collect();
        let _ = writeln!(j, "  \"error_statuses\": {{{}}},", statuses.join(", "));
        let ld = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        let _ = writeln!(j, "  \"rejected\": {},", ld(&c.rejected));
        let _ = writeln!(
            j,
            "  \"dropped\": {{\"queue_full\": {}, \"region_full\": {}, \"device_full\": {}}},",
            ld(&c.dropped_queue_full),
            ld(&c.dropped_region_full),
            ld(&c.dropped_device_full)
        );
        if let Some(p) = self.pool_stats() {
            let _ = writeln!(
                j,
                "  \"pool\": {{\"workers\": {}, \"submitted\": {}, \"images\": {}, \"rejected\": {}, \"failed\": {}, \"panics\": {}, \"submit_waits\": {}, \"region_waits\": {}}},",
                p.regions.len(),
                p.submitted,
                p.images,
                p.rejected,
                p.failed,
                p.panics,
                p.submit_waits,
                p.region_waits
            );
        }
        let cpu = c.cpu_by_role();
        let roles: Vec<String> = cpu
            .iter()
            .map(|(role, (t, n))| format!("{}: {{\"seconds\": {:.6}, \"threads\": {n}}}", json_str(role.name()), t.as_secs_f64()))
            .collect();
        let _ = writeln!(j, "  \"cpu\": {{{}}},", roles.join(", "));
        let app_side: f64 = cpu.iter().filter(|(r, _)| matches!(r, Role::App | Role::Dispatcher)).map(|(_, (t, _))| t.as_secs_f64()).fold(0.0, |a, b| a + b);
        let _ = writeln!(j, "  \"app_cpu_seconds\": {app_side:.6},");
        let off: f64 = cpu.iter().filter(|(r, _)| matches!(r, Role::Pool | Role::Device)).map(|(_, (t, _))| t.as_secs_f64()).fold(0.0, |a, b| a + b);
        let _ = writeln!(j, "  \"offload_cpu_seconds\": {off:.6},");
        let _ = writeln!(j, "  \"cores\": {{\"app\": {:?}, \"offload\": {:?}}}", self.split.app, self.split.offload);
        j.push('}');
        j.push('\n');
        j
    }
}

/// Counts every non-OK gRPC status the service answers with (tonic puts a failed unary
/// call's status in the response headers: a trailers-only response).
#[derive(Clone)]
struct StatusCountLayer {
    counters: Arc<Counters>,
}

impl<S> tower_layer::Layer<S> for StatusCountLayer {
    type Service = StatusCount<S>;
    fn layer(&self, inner: S) -> StatusCount<S> {
        StatusCount { inner, counters: self.counters.clone() }
    }
}

#[derive(Clone)]
struct StatusCount<S> {
    inner: S,
    counters: Arc<Counters>,
}

impl<S, B, R> Service<http::Request<B>> for StatusCount<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let fut = self.inner.call(req);
        let counters = self.counters.clone();
        Box::pin(async move {
            let res = fut.await?;
            if let Some(code) = res.headers().get("grpc-status") {
                let code = tonic::Code::from_bytes(code.as_bytes());
                if code != tonic::Code::Ok {
                    counters.status(code);
                }
            }
            Ok(res)
        })
    }
}
