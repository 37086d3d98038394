//! What the service counts, and the CPU time of its threads by role, measured with the
//! kernel's per-thread CPU clocks (`/proc/self/task/TID/schedstat`: nanoseconds on a
//! CPU; `stat`'s utime+stime ticks where schedstat is missing).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use crate::schema::Rpc;

/// A thread's role, for CPU accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// The tokio runtime's threads: connections, the codec, handlers.
    App,
    /// The thread routing the pool's completions to waiting requests (application side).
    Dispatcher,
    /// Offload pool workers.
    Pool,
    /// The thread that drives the device handle (in `inproc:` devices it also decodes).
    Device,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::App => "app",
            Role::Dispatcher => "dispatcher",
            Role::Pool => "pool",
            Role::Device => "device",
        }
    }
}

/// The calling thread's kernel id.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// The calling thread's CPU time.
pub fn own_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time of thread `tid` of this process, while it runs (None once it is gone).
pub fn thread_cpu(tid: i32) -> Option<Duration> {
    if let Ok(s) = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")) {
        if let Some(ns) = s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()) {
            return Some(Duration::from_nanos(ns));
        }
    }
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // fields after the parenthesised name; utime and stime are the 14th and 15th
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_nanos(ticks * (1_000_000_000 / hz)))
}

#[derive(Default)]
struct ThreadEntry {
    role: Option<Role>,
    /// CPU time recorded by the thread itself as it stopped.
    finished: Option<Duration>,
}

/// The service's counters and the threads it accounts CPU time for.
#[derive(Default)]
pub struct Counters {
    served: [AtomicU64; 5],
    /// Requests whose bytes the engine rejected (INVALID_ARGUMENT).
    pub rejected: AtomicU64,
    /// Requests refused because the offload pool's queue was full (drop policy).
    pub dropped_queue_full: AtomicU64,
    /// Requests the pool dropped because its worker's region was full (drop policy).
    pub dropped_region_full: AtomicU64,
    /// Requests refused because the device's queue was full (drop policy).
    pub dropped_device_full: AtomicU64,
    /// Responses by gRPC status code name, for every non-OK answer (counted by a layer).
    statuses: Mutex<BTreeMap<&'static str, u64>>,
    threads: Mutex<BTreeMap<i32, ThreadEntry>>,
}

impl Counters {
    pub fn served(&self, rpc: Rpc) {
        self.served[rpc as usize].fetch_add(1, Relaxed);
    }

    pub fn served_count(&self, rpc: Rpc) -> u64 {
        self.served[rpc as usize].load(Relaxed)
    }

    pub fn status(&self, code: tonic::Code) {
        *self.statuses.lock().unwrap_or_else(|p| p.into_inner()).entry(code_name(code)).or_default() += 1;
    }

    pub fn statuses(&self) -> BTreeMap<&'static str, u64> {
        self.statuses.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Accounts the calling thread's CPU time to `role`.
    pub fn register_thread(&self, role: Role) {
        self.threads.lock().unwrap_or_else(|p| p.into_inner()).entry(gettid()).or_default().role = Some(role);
    }

    /// The calling thread is stopping: keeps its CPU time.
    pub fn thread_stopping(&self) {
        let cpu = own_cpu();
        if let Some(e) = self.threads.lock().unwrap_or_else(|p| p.into_inner()).get_mut(&gettid()) {
            e.finished = Some(cpu);
        }
    }

    /// CPU time per role so far, and threads per role.
    pub fn cpu_by_role(&self) -> BTreeMap<Role, (Duration, usize)> {
        let mut out = BTreeMap::new();
        for (tid, e) in self.threads.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let Some(role) = e.role else { continue };
            let cpu = e.finished.or_else(|| thread_cpu(*tid)).unwrap_or_default();
            let slot: &mut (Duration, usize) = out.entry(role).or_default();
            slot.0 += cpu;
            slot.1 += 1;
        }
        out
    }
}

pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
