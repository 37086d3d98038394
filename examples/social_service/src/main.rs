//! `social_service`: the social-network gRPC service on heapwire's codec or on the
//! tonic+prost baseline (docs/service.md).

use std::io::Write;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use heapwire_pool::Backpressure;
use heapwire_social_service::server::{self, CodecKind, Config, Mode};

#[derive(Clone, Copy, ValueEnum)]
enum CodecArg {
    Heapwire,
    Prost,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Inline,
    Pool,
    Device,
}

#[derive(Clone, Copy, ValueEnum)]
enum BackpressureArg {
    Block,
    Drop,
}

/// The DeathStarBench-shaped social-network gRPC service (heapwire.social.v1.Social).
/// Prints `listening on ADDR` when ready; SIGTERM or SIGINT stops it.
#[derive(Parser)]
#[command(name = "social_service")]
struct Args {
    /// Address to serve on (`127.0.0.1:0` picks a free port).
    #[arg(long, default_value = "127.0.0.1:50051")]
    listen: String,
    /// heapwire (images read in place, replies by heapwire's encoder) or prost (the baseline).
    #[arg(long, value_enum, default_value = "heapwire")]
    codec: CodecArg,
    /// Where requests are decoded: inline (on the request's task), pool (the offload
    /// pool), device (a device from the device runtime).
    #[arg(long, value_enum, default_value = "inline")]
    mode: ModeArg,
    /// Pool workers (default: one per pool core).
    #[arg(long)]
    workers: Option<usize>,
    /// Cores for the pool workers (or the device thread); the application's threads get
    /// the rest. 0: nothing pinned. Default in pool and device modes: 1.
    #[arg(long)]
    pool_cores: Option<usize>,
    /// tokio worker threads (default: one per application core).
    #[arg(long)]
    app_threads: Option<usize>,
    /// The device for --mode device (inproc:cpu, inproc:sim, tcp://HOST:PORT, udp://HOST:PORT).
    #[arg(long, default_value = "inproc:cpu")]
    device: String,
    /// Largest request accepted, in bytes; larger ones get OUT_OF_RANGE before decoding.
    #[arg(long, default_value_t = 4 << 20)]
    max_request_bytes: usize,
    /// When the pool (or device) is full: block (requests wait) or drop (RESOURCE_EXHAUSTED, counted).
    #[arg(long, value_enum, default_value = "block")]
    backpressure: BackpressureArg,
    /// Requests in the pool (or at the device) at once.
    #[arg(long, default_value_t = 1024)]
    pool_depth: usize,
    /// Bytes of each pool worker's region (the largest request image the pool takes).
    #[arg(long, default_value_t = 16 << 20)]
    region_bytes: usize,
    /// Write statistics (requests per rpc, rejections, drops, CPU time per thread role, wall time) as JSON here on exit.
    #[arg(long)]
    stats_out: Option<std::path::PathBuf>,
}

/// SIGTERM and SIGINT, blocked in every thread so the main thread can wait for them.
fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set; sigaddset with valid signals.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        set
    }
}

fn main() {
    let a = Args::parse();
    let config = Config {
        listen: a.listen,
        codec: match a.codec {
            CodecArg::Heapwire => CodecKind::Heapwire,
            CodecArg::Prost => CodecKind::Prost,
        },
        mode: match a.mode {
            ModeArg::Inline => Mode::Inline,
            ModeArg::Pool => Mode::Pool,
            ModeArg::Device => Mode::Device,
        },
        workers: a.workers,
        pool_cores: a.pool_cores,
        app_threads: a.app_threads,
        device: a.device,
        max_request_bytes: a.max_request_bytes,
        backpressure: match a.backpressure {
            BackpressureArg::Block => Backpressure::Block,
            BackpressureArg::Drop => Backpressure::DropAndCount,
        },
        pool_depth: a.pool_depth,
        region_bytes: a.region_bytes,
        pool_engine: None,
    };
    // before any thread starts, so every thread inherits the mask
    let set = signal_set();
    // SAFETY: a valid set; the old mask is not needed.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    let srv = match server::start(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("social_service: error: {e}");
            std::process::exit(2);
        }
    };
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on {}", srv.addr);
        let _ = out.flush();
    }
    let mut sig: libc::c_int = 0;
    // SAFETY: a valid set and out-pointer.
    unsafe { libc::sigwait(&set, &mut sig) };
    let stats = srv.stop(Duration::from_secs(5));
    if let Some(path) = a.stats_out {
        if let Err(e) = std::fs::write(&path, stats) {
            eprintln!("social_service: error: --stats-out {}: {e}", path.display());
            std::process::exit(2);
        }
    }
}
