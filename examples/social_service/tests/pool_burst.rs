//! The service's offload pool under a burst beyond its capacity, made deterministic by a
//! gate in front of the workers' engine (closed while the burst arrives): with the drop
//! policy every request is answered or counted as dropped and the counts add up; with the
//! block policy none is dropped and the pool never holds more than its depth. And a
//! worker whose engine panics is replaced and counted, and the service goes on.

mod common;

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use common::start;
use heapwire_cpu::CpuEngine;
use heapwire_engine::{Decoded, Engine, Error, Request, Wire};
use heapwire_pool::Backpressure;
use heapwire_social_service::offload::EngineFactory;
use heapwire_social_service::pb::req;
use heapwire_social_service::schema::{Rpc, SCHEMA};
use heapwire_social_service::server::{CodecKind, Config, Mode};
use prost::Message;
use tonic::Code;

const BURST: usize = 64;
const DEPTH: usize = 4;

#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }
}

/// The CPU engine behind a gate, panicking on one input.
struct Gated {
    inner: CpuEngine,
    gate: Arc<Gate>,
    panic_on: Vec<u8>,
}

impl Engine for Gated {
    fn name(&self) -> &'static str {
        "gated-cpu"
    }
    fn check(&self, msg: usize, wire: Wire) -> Result<(), String> {
        self.inner.check(msg, wire)
    }
    fn decode(&mut self, req: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error> {
        self.gate.wait();
        assert!(req.input != self.panic_on.as_slice(), "the test's poisoned request");
        self.inner.decode(req, out)
    }
    fn decode_into(&mut self, req: &Request<'_>, out: &mut [u8]) -> Result<Decoded, Error> {
        self.gate.wait();
        assert!(req.input != self.panic_on.as_slice(), "the test's poisoned request");
        self.inner.decode_into(req, out)
    }
}

fn login(i: usize) -> Vec<u8> {
    req::LoginRequest { req_id: i as i64 + 1, username: format!("user{i}"), password: "pw".into(), ..Default::default() }.encode_to_vec()
}

fn poisoned() -> Vec<u8> {
    login(999_999)
}

fn pool_service(backpressure: Backpressure, gate: &Arc<Gate>) -> common::Running {
    let g = gate.clone();
    let factory: EngineFactory = Arc::new(move |_| {
        Box::new(Gated { inner: CpuEngine::new(SCHEMA.compiled.clone()), gate: g.clone(), panic_on: poisoned() }) as Box<dyn Engine>
    });
    start(Config {
        codec: CodecKind::Heapwire,
        mode: Mode::Pool,
        workers: Some(1),
        pool_depth: DEPTH,
        backpressure,
        pool_engine: Some(factory),
        ..Config::default()
    })
}

#[test]
fn drop_policy_answers_or_counts_every_request() {
    let gate = Arc::new(Gate::default());
    let s = pool_service(Backpressure::DropAndCount, &gate);
    let client = s.client.clone();
    let g = gate.clone();
    let pool_stats = |s: &common::Running| s.server().pool_stats().unwrap();
    let (ok, dropped, other) = s.rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for i in 0..BURST {
            let mut c = client.clone();
            set.spawn(async move { (i, c.call(Rpc::Login, login(i)).await) });
        }
        // the gate holds DEPTH requests in the pool; every other one is dropped at once
        let mut dropped = 0;
        let mut ok = 0;
        let mut other = Vec::new();
        while dropped < BURST - DEPTH {
            let (i, r) = tokio::time::timeout(Duration::from_secs(20), set.join_next()).await.expect("drops answered at once").unwrap().unwrap();
            match r {
                Err(st) if st.code() == Code::ResourceExhausted && st.message().starts_with("dropped:") => dropped += 1,
                r => panic!("request {i} answered {r:?} while the gate is shut"),
            }
        }
        g.open();
        while let Some(j) = set.join_next().await {
            match j.unwrap().1 {
                Ok(_) => ok += 1,
                Err(st) if st.code() == Code::ResourceExhausted => dropped += 1,
                Err(st) => other.push(st),
            }
        }
        (ok, dropped, other)
    });
    assert!(other.is_empty(), "{other:?}");
    assert_eq!(ok + dropped, BURST, "every request answered or dropped");
    assert_eq!((ok, dropped), (DEPTH, BURST - DEPTH));
    let c = s.server().counters();
    let ld = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed) as usize;
    assert_eq!(ld(&c.dropped_queue_full) + ld(&c.dropped_region_full), dropped, "the service counted every drop");
    assert_eq!(c.served_count(Rpc::Login) as usize, ok);
    assert_eq!(c.statuses().get("RESOURCE_EXHAUSTED").copied().unwrap_or(0) as usize, dropped);
    let p = pool_stats(&s);
    assert_eq!(p.submitted as usize, ok);
    assert_eq!(p.images as usize, ok);
    assert_eq!((p.dropped_queue_full as usize, p.dropped_region_full as usize), (ld(&c.dropped_queue_full), ld(&c.dropped_region_full)));
    let json = s.stop();
    assert!(json.contains(&format!("\"queue_full\": {}", BURST - DEPTH)), "{json}");
}

#[test]
fn block_policy_drops_nothing_and_bounds_the_pool() {
    let gate = Arc::new(Gate::default());
    let mut s = pool_service(Backpressure::Block, &gate);
    let client = s.client.clone();
    let server = s.server.take().unwrap();
    let (ok, errors) = s.rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for i in 0..BURST {
            let mut c = client.clone();
            set.spawn(async move { (i, c.call(Rpc::Login, login(i)).await) });
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(set.try_join_next().is_none(), "nothing answered while the gate is shut");
        let p = server.pool_stats().unwrap();
        assert_eq!(p.submitted as usize, DEPTH, "the pool holds its depth, the rest wait");
        assert_eq!(p.dropped_queue_full, 0);
        gate.open();
        let mut ok = 0;
        let mut errors = Vec::new();
        while let Some(j) = set.join_next().await {
            match j.unwrap().1 {
                Ok(_) => ok += 1,
                Err(st) => errors.push(st),
            }
        }
        (ok, errors)
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(ok, BURST);
    let c = server.counters();
    assert_eq!(c.served_count(Rpc::Login) as usize, BURST);
    assert_eq!(c.dropped_queue_full.load(std::sync::atomic::Ordering::Relaxed), 0);
    let p = server.pool_stats().unwrap();
    assert_eq!((p.submitted as usize, p.images as usize, p.dropped_queue_full, p.dropped_region_full), (BURST, BURST, 0, 0));
    s.server = Some(server);
    s.stop();
}

#[test]
fn a_panicking_worker_is_replaced_and_counted() {
    let gate = Arc::new(Gate::default());
    gate.open();
    let mut s = pool_service(Backpressure::Block, &gate);
    let st = s.call(Rpc::Login, poisoned()).expect_err("the poisoned request fails");
    assert_eq!(st.code(), Code::Internal, "{st:?}");
    assert!(st.message().contains("panicked"), "{}", st.message());
    for i in 0..10 {
        s.call(Rpc::Login, login(i)).expect("the replaced worker serves");
    }
    let p = s.server().pool_stats().unwrap();
    assert_eq!((p.panics, p.failed, p.images), (1, 1, 10));
    let json = s.stop();
    assert!(json.contains("\"panics\": 1"), "{json}");
}
