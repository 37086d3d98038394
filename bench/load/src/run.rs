//! The open-loop driver: requests leave on a fixed schedule whatever the server does,
//! and each one's latency counts from its scheduled send time (so time spent queued —
//! in the generator, the network or the server — is never hidden).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};

use crate::RawCodec;
use crate::corpus::{Corpus, Mix, Rpc};
use crate::record::{Outcome, Record};
use crate::report::{ms, Report};

/// What to offer, where.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// `http://HOST:PORT`, or `HOST:PORT` (plaintext HTTP/2).
    pub target: String,
    /// Requests per second.
    pub rate: f64,
    pub duration: Duration,
    /// A request without an answer by its scheduled time plus this is a timeout.
    pub timeout: Duration,
    /// HTTP/2 connections; request `i` goes on connection `i % connections`.
    pub connections: usize,
    /// Tokio worker threads for the requests (the schedule runs on its own thread).
    pub threads: usize,
    /// The generator holds back a due request while this many are in flight (bounded
    /// memory when the server or the generator falls behind); the wait shows as lag and
    /// counts in that request's latency and deadline.
    pub max_in_flight: u64,
    pub mix: Mix,
    pub seed: u64,
    /// A progress line on stderr once a second.
    pub progress: bool,
}

impl LoadConfig {
    pub fn target_uri(&self) -> String {
        if self.target.contains("://") {
            self.target.clone()
        } else {
            format!("http://{}", self.target)
        }
    }

    /// The number of requests the schedule holds: one every 1/rate s for the duration.
    pub fn scheduled(&self) -> u64 {
        (self.rate * self.duration.as_secs_f64()).floor() as u64
    }

    fn check(&self) -> Result<(), String> {
        if !(self.rate.is_finite() && self.rate > 0.0) {
            return Err(format!("--rate {}: must be a positive number of requests per second", self.rate));
        }
        if self.scheduled() == 0 {
            return Err(format!(
                "--rate {} for --duration {:?} schedules no request",
                self.rate, self.duration
            ));
        }
        if self.timeout.is_zero() {
            return Err("--timeout must be positive".into());
        }
        if self.connections == 0 || self.threads == 0 || self.max_in_flight == 0 {
            return Err("--connections, --threads and --max-in-flight must be at least 1".into());
        }
        Ok(())
    }
}

/// The scheduled send time of request `i`, as an offset from the start.
pub fn scheduled_offset(i: u64, rate: f64) -> Duration {
    Duration::from_secs_f64(i as f64 / rate)
}

/// The error and every error under it, `: `-separated (tonic's own are terse).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        cur = inner.source();
    }
    s
}

async fn connect(uri: &str, n: usize) -> Result<Vec<Channel>, String> {
    let endpoint = Endpoint::from_shared(uri.to_string())
        .map_err(|e| format!("--target {uri}: {}", error_chain(&e)))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true);
    let mut channels = Vec::with_capacity(n);
    for _ in 0..n {
        let ch = endpoint
            .connect()
            .await
            .map_err(|e| format!("cannot connect to {uri}: {}", error_chain(&e)))?;
        channels.push(ch);
    }
    Ok(channels)
}

/// Lets the scheduler's sleeps end on time instead of up to the default 50 µs late.
fn tighten_timer_slack() {
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

async fn call(channel: Channel, rpc: Rpc, msg: bytes::Bytes) -> Result<(), Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| Status::unavailable(format!("connection not ready: {}", error_chain(&e))))?;
    grpc.unary(Request::new(msg), PathAndQuery::from_static(rpc.path()), RawCodec)
        .await
        .map(|_| ())
}

/// Offers the load and waits for every request to end; `Err` only when it cannot start
/// (bad configuration, no connection).
pub fn run(cfg: &LoadConfig, corpus: &Corpus) -> Result<Report, String> {
    cfg.check()?;
    corpus.check_covers(&cfg.mix)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cfg.threads)
        .thread_name("social-load")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let uri = cfg.target_uri();
    let channels = rt.block_on(connect(&uri, cfg.connections))?;

    let scheduled = cfg.scheduled();
    let seconds = cfg.duration.as_secs_f64().ceil() as usize;
    let record = Arc::new(Mutex::new(Record::new(seconds)));
    let in_flight = Arc::new(AtomicU64::new(0));
    let last_done = Arc::new(Mutex::new(None::<Instant>));

    // A little lead so the first requests are not late by the thread start-up.
    let start = Instant::now() + Duration::from_millis(20);
    let (stop_progress, progress_rx) = mpsc::channel::<()>();
    let progress = cfg.progress.then(|| {
        let record = Arc::clone(&record);
        let in_flight = Arc::clone(&in_flight);
        thread::spawn(move || progress_loop(start, &record, &in_flight, &progress_rx))
    });

    tighten_timer_slack();
    let mut next_of = [0usize; 5];
    let mut mix = cfg.mix.sequence(cfg.seed);
    for i in 0..scheduled {
        let offset = scheduled_offset(i, cfg.rate);
        let sched = start + offset;
        let now = Instant::now();
        if sched > now {
            thread::sleep(sched - now);
        }
        while in_flight.load(Ordering::SeqCst) >= cfg.max_in_flight {
            thread::sleep(Duration::from_micros(100));
        }
        let rpc = mix.next().expect("the mix sequence is endless");
        let pool = corpus.requests(rpc);
        let msg = pool[next_of[rpc.index()] % pool.len()].clone();
        next_of[rpc.index()] += 1;
        let second = offset.as_secs() as usize;
        record.lock().unwrap().sent(rpc, second, Instant::now().saturating_duration_since(sched));
        in_flight.fetch_add(1, Ordering::SeqCst);

        let channel = channels[(i % channels.len() as u64) as usize].clone();
        let (record, in_flight, last_done, timeout) =
            (Arc::clone(&record), Arc::clone(&in_flight), Arc::clone(&last_done), cfg.timeout);
        rt.spawn(async move {
            let deadline = sched + timeout;
            let answer = tokio::time::timeout_at(deadline.into(), call(channel, rpc, msg)).await;
            let done = Instant::now();
            let latency = done.saturating_duration_since(sched);
            let outcome = match answer {
                // A reply that lands after its deadline but before the timer fires is late all the same.
                Ok(Ok(())) if latency <= timeout => Outcome::Ok { latency },
                Ok(Err(status)) if latency <= timeout => Outcome::Error {
                    code: status.code(),
                    message: status.message().to_string(),
                },
                _ => Outcome::Timeout,
            };
            record.lock().unwrap().finished(rpc, second, &outcome);
            let mut last = last_done.lock().unwrap();
            *last = Some(last.map_or(done, |l| l.max(done)));
            drop(last);
            in_flight.fetch_sub(1, Ordering::SeqCst);
        });
    }

    // Every request ends by its deadline; allow the runtime a little beyond the last.
    let give_up = start + scheduled_offset(scheduled, cfg.rate) + cfg.timeout + Duration::from_secs(5);
    while in_flight.load(Ordering::SeqCst) > 0 {
        if Instant::now() > give_up {
            return Err(format!(
                "{} requests still unanswered 5 s after their deadlines (the runtime is stuck)",
                in_flight.load(Ordering::SeqCst)
            ));
        }
        thread::sleep(Duration::from_millis(2));
    }
    drop(stop_progress);
    if let Some(handle) = progress {
        let _ = handle.join();
    }
    rt.shutdown_timeout(Duration::from_secs(1));

    let elapsed = last_done.lock().unwrap().map_or(Duration::ZERO, |t| t.saturating_duration_since(start));
    let record = Arc::try_unwrap(record)
        .map_err(|_| "internal: the record is still shared".to_string())?
        .into_inner()
        .unwrap();
    let report = Report::new(cfg, corpus, scheduled, elapsed, record);
    let t = report.record.total;
    if t.sent != scheduled || t.sent != t.answered() {
        return Err(format!(
            "internal: accounting broke: scheduled {scheduled}, sent {}, ok {} + errors {} + timeouts {}",
            t.sent, t.ok, t.errors, t.timeouts
        ));
    }
    Ok(report)
}

fn progress_loop(start: Instant, record: &Mutex<Record>, in_flight: &AtomicU64, stop: &mpsc::Receiver<()>) {
    while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(Duration::from_secs(1)) {
        let mut r = record.lock().unwrap();
        let (t, p50, p99, n) = (
            r.total,
            r.interval.value_at_quantile(0.5),
            r.interval.value_at_quantile(0.99),
            r.interval.len(),
        );
        r.interval.reset();
        drop(r);
        let window = if n == 0 {
            "no replies".to_string()
        } else {
            format!("p50 {} ms  p99 {} ms", ms(p50), ms(p99))
        };
        eprintln!(
            "social_load: {:>4.0}s  sent {}  ok {}  errors {}  timeouts {}  in flight {}  last 1s: {window}",
            start.elapsed().as_secs_f64(),
            t.sent,
            t.ok,
            t.errors,
            t.timeouts,
            in_flight.load(Ordering::SeqCst)
        );
    }
}

/// Parses `250ms`, `10s`, `2m` or a plain number of seconds (`1.5`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}': expected a duration like 500ms, 10s, 2m or 1.5"))?;
    if !(v.is_finite() && v >= 0.0 && v * scale < 1e9) {
        return Err(format!("'{s}': out of range"));
    }
    Ok(Duration::from_secs_f64(v * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("40us").unwrap(), Duration::from_micros(40));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn schedule_is_evenly_spaced_at_the_rate() {
        assert_eq!(scheduled_offset(0, 1000.0), Duration::ZERO);
        assert_eq!(scheduled_offset(1500, 1000.0), Duration::from_millis(1500));
        assert_eq!(scheduled_offset(3, 4.0), Duration::from_millis(750));
        let cfg = LoadConfig {
            target: "127.0.0.1:1".into(),
            rate: 333.3,
            duration: Duration::from_secs(3),
            timeout: Duration::from_secs(1),
            connections: 1,
            threads: 1,
            max_in_flight: 10,
            mix: Mix::parse("login=1").unwrap(),
            seed: 1,
            progress: false,
        };
        assert_eq!(cfg.scheduled(), 999);
        assert_eq!(cfg.target_uri(), "http://127.0.0.1:1");
        let none = LoadConfig { rate: 0.1, duration: Duration::from_secs(1), ..cfg };
        assert!(none.check().unwrap_err().contains("schedules no request"));
    }
}
