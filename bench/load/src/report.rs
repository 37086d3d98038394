//! The run's summary (text for people, JSON for scripts and plots).

use std::fmt::Write as _;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};

use crate::corpus::{Corpus, Rpc};
use crate::record::{Counts, Record};
use crate::run::LoadConfig;

/// Quantiles in the summary: (label, quantile).
pub const QUANTILES: [(&str, f64); 4] = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)];

/// Nanoseconds as milliseconds with three decimals.
pub fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn us(ns: u64) -> f64 {
    (ns as f64 / 1e3 * 1000.0).round() / 1000.0
}

pub struct Report {
    /// What was offered.
    pub config: LoadConfig,
    pub scheduled: u64,
    /// From the first scheduled send to the last answer.
    pub elapsed: Duration,
    pub avg_request_bytes: [Option<f64>; 5],
    pub record: Record,
}

impl Report {
    pub fn new(cfg: &LoadConfig, corpus: &Corpus, scheduled: u64, elapsed: Duration, record: Record) -> Report {
        Report {
            config: cfg.clone(),
            scheduled,
            elapsed,
            avg_request_bytes: Rpc::ALL.map(|r| corpus.avg_size(r)),
            record,
        }
    }

    /// Ok replies per second over the offered duration, or over the time to the last
    /// answer when that is longer.
    pub fn throughput(&self) -> f64 {
        let secs = self.config.duration.max(self.elapsed).as_secs_f64();
        self.record.total.ok as f64 / secs
    }

    /// True when every request got an OK reply in time.
    pub fn all_ok(&self) -> bool {
        let t = self.record.total;
        t.ok == t.sent && t.sent == self.scheduled
    }

    pub fn summary(&self) -> String {
        let (r, c) = (&self.record, &self.config);
        let t = r.total;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "social_load: {} offered {} req/s for {:.1} s ({} scheduled; {} connections; mix {})",
            c.target_uri(),
            c.rate,
            c.duration.as_secs_f64(),
            self.scheduled,
            c.connections,
            c.mix
        );
        let _ = writeln!(
            s,
            "requests    sent {}  ok {}  errors {}  timeouts {} (no answer within {} ms)",
            t.sent,
            t.ok,
            t.errors,
            t.timeouts,
            c.timeout.as_millis()
        );
        let _ = writeln!(s, "throughput  {:.1} ok/s", self.throughput());
        let _ = writeln!(s, "latency     {}   (ok replies, from the scheduled send time)", latency_line(&r.latency));
        let status: Vec<String> = r.by_status.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(s, "status      {}", if status.is_empty() { "-".into() } else { status.join("  ") });
        let _ = writeln!(
            s,
            "lag         p50 {} ms  p99 {} ms  max {} ms   (dispatch behind schedule; included in the latency)",
            ms(r.lag.value_at_quantile(0.5)),
            ms(r.lag.value_at_quantile(0.99)),
            ms(r.lag.max())
        );
        for rpc in Rpc::ALL {
            let c = r.per_rpc[rpc.index()];
            if c.sent == 0 {
                continue;
            }
            let h = &r.per_rpc_latency[rpc.index()];
            let _ = writeln!(
                s,
                "  {:<14} sent {}  ok {}  errors {}  timeouts {}  p50 {} ms  p99 {} ms  ({:.0} B avg request)",
                rpc.name(),
                c.sent,
                c.ok,
                c.errors,
                c.timeouts,
                ms(h.value_at_quantile(0.5)),
                ms(h.value_at_quantile(0.99)),
                self.avg_request_bytes[rpc.index()].unwrap_or(0.0)
            );
        }
        for e in &r.error_examples {
            let _ = writeln!(s, "error       {e}");
        }
        s
    }

    pub fn json(&self) -> Value {
        let (r, c) = (&self.record, &self.config);
        let mut per_rpc = Map::new();
        for rpc in Rpc::ALL {
            let c = r.per_rpc[rpc.index()];
            if c.sent == 0 {
                continue;
            }
            let mut v = counts_json(c);
            v["latency_us"] = latency_json(&r.per_rpc_latency[rpc.index()]);
            v["avg_request_bytes"] = json!(self.avg_request_bytes[rpc.index()]);
            per_rpc.insert(rpc.name().into(), v);
        }
        json!({
            "target": c.target_uri(),
            "rate": c.rate,
            "duration_s": c.duration.as_secs_f64(),
            "timeout_ms": c.timeout.as_secs_f64() * 1e3,
            "connections": c.connections,
            "threads": c.threads,
            "max_in_flight": c.max_in_flight,
            "mix": c.mix.to_string(),
            "seed": c.seed,
            "scheduled": self.scheduled,
            "sent": r.total.sent,
            "ok": r.total.ok,
            "errors": r.total.errors,
            "timeouts": r.total.timeouts,
            "elapsed_s": self.elapsed.as_secs_f64(),
            "throughput_ok_per_s": self.throughput(),
            "by_status": r.by_status,
            "latency_us": latency_json(&r.latency),
            "schedule_lag_us": latency_json(&r.lag),
            "per_rpc": per_rpc,
            "timeline": r.timeline.iter().enumerate().map(|(i, c)| {
                let mut v = counts_json(*c);
                v["second"] = json!(i);
                v
            }).collect::<Vec<_>>(),
            "error_examples": r.error_examples,
            // HdrHistogram's percentile distribution: [latency µs, fraction of ok replies at or below].
            "cdf": cdf_points(&r.latency),
        })
    }
}

fn latency_line(h: &Histogram<u64>) -> String {
    if h.is_empty() {
        return "no ok replies".into();
    }
    let mut parts: Vec<String> = QUANTILES
        .iter()
        .map(|(label, q)| format!("{label} {} ms", ms(h.value_at_quantile(*q))))
        .collect();
    parts.push(format!("max {} ms", ms(h.max())));
    parts.join("  ")
}

fn counts_json(c: Counts) -> Value {
    json!({"sent": c.sent, "ok": c.ok, "errors": c.errors, "timeouts": c.timeouts})
}

fn latency_json(h: &Histogram<u64>) -> Value {
    if h.is_empty() {
        return json!({"count": 0});
    }
    let mut v = json!({
        "count": h.len(),
        "min": us(h.min()),
        "mean": (h.mean() / 1e3 * 1000.0).round() / 1000.0,
        "max": us(h.max()),
    });
    for (label, q) in QUANTILES {
        v[label] = json!(us(h.value_at_quantile(q)));
    }
    v
}

fn cdf_points(h: &Histogram<u64>) -> Vec<[f64; 2]> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut pts: Vec<[f64; 2]> = h
        .iter_quantiles(5)
        .map(|v| [us(v.value_iterated_to()), v.quantile_iterated_to()])
        .collect();
    pts.dedup_by(|b, a| a == b);
    pts
}

impl std::fmt::Debug for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Report")
            .field("target", &self.config.target)
            .field("scheduled", &self.scheduled)
            .field("total", &self.record.total)
            .finish_non_exhaustive()
    }
}
