//! Accounting: every dispatched request ends as exactly one of ok, error (with its gRPC
//! status) or timeout; latencies of the ok ones go into HdrHistograms.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use tonic::Code;

use crate::corpus::Rpc;

/// Latencies are recorded in nanoseconds with 3 significant digits, up to an hour.
const HIST_MAX_NS: u64 = 3_600_000_000_000;
/// At most this many distinct error messages are kept as examples.
const ERROR_EXAMPLES: usize = 5;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("valid histogram bounds")
}

pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).clamp(1, HIST_MAX_NS)
}

/// How one request ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A reply, `latency` after the request's scheduled send time.
    Ok { latency: Duration },
    /// A gRPC status other than OK (transport failures arrive as UNAVAILABLE or UNKNOWN).
    Error { code: Code, message: String },
    /// No answer by the scheduled send time plus `--timeout`.
    Timeout,
}

/// Counts of one class of requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub sent: u64,
    pub ok: u64,
    pub errors: u64,
    pub timeouts: u64,
}

impl Counts {
    pub fn answered(&self) -> u64 {
        self.ok + self.errors + self.timeouts
    }

    fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Ok { .. } => self.ok += 1,
            Outcome::Error { .. } => self.errors += 1,
            Outcome::Timeout => self.timeouts += 1,
        }
    }
}

/// Everything counted during a run.
pub struct Record {
    pub total: Counts,
    pub per_rpc: [Counts; 5],
    /// Ok latencies, whole run.
    pub latency: Histogram<u64>,
    pub per_rpc_latency: [Histogram<u64>; 5],
    /// Ok latencies since the last progress line.
    pub interval: Histogram<u64>,
    /// How late the generator dispatched requests relative to their schedule.
    pub lag: Histogram<u64>,
    /// gRPC status name -> count, for answered requests (OK included).
    pub by_status: BTreeMap<&'static str, u64>,
    /// Counts per second of scheduled send time.
    pub timeline: Vec<Counts>,
    pub error_examples: Vec<String>,
}

impl Record {
    pub fn new(seconds: usize) -> Record {
        Record {
            total: Counts::default(),
            per_rpc: [Counts::default(); 5],
            latency: new_histogram(),
            per_rpc_latency: std::array::from_fn(|_| new_histogram()),
            interval: new_histogram(),
            lag: new_histogram(),
            by_status: BTreeMap::new(),
            timeline: vec![Counts::default(); seconds.max(1)],
            error_examples: Vec::new(),
        }
    }

    fn second(&mut self, second: usize) -> &mut Counts {
        let last = self.timeline.len() - 1;
        &mut self.timeline[second.min(last)]
    }

    pub fn sent(&mut self, rpc: Rpc, second: usize, lag: Duration) {
        self.total.sent += 1;
        self.per_rpc[rpc.index()].sent += 1;
        self.second(second).sent += 1;
        self.lag.saturating_record(nanos(lag));
    }

    pub fn finished(&mut self, rpc: Rpc, second: usize, outcome: &Outcome) {
        self.total.add(outcome);
        self.per_rpc[rpc.index()].add(outcome);
        self.second(second).add(outcome);
        match outcome {
            Outcome::Ok { latency } => {
                let ns = nanos(*latency);
                self.latency.saturating_record(ns);
                self.per_rpc_latency[rpc.index()].saturating_record(ns);
                self.interval.saturating_record(ns);
                *self.by_status.entry(code_name(Code::Ok)).or_default() += 1;
            }
            Outcome::Error { code, message } => {
                *self.by_status.entry(code_name(*code)).or_default() += 1;
                let example = format!("{}: {} ({rpc})", code_name(*code), message);
                if self.error_examples.len() < ERROR_EXAMPLES && !self.error_examples.contains(&example) {
                    self.error_examples.push(example);
                }
            }
            Outcome::Timeout => {}
        }
    }
}

/// The canonical upper-case name of a gRPC status code.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}
