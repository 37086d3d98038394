//! The server: one state machine for both transports (sessions, reassembly, the result
//! cache, retransmission), fed by a UDP receive thread or one reader thread per TCP
//! connection; service calls run on worker threads.
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::faults::Injector;
use super::frame::{self, FragSet, Header, Kind, WireLimits, FLAG_COMPLETE, HEADER_LEN, MAX_CHUNK};
use super::{bump, Counters, Faults, Key, LinkStats, Limits, Service, Transport};

#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Where to listen; loopback by default.
    pub listen: SocketAddr,
    /// With a key, frames without a valid MAC are dropped (counted) and every frame sent
    /// carries one.
    pub key: Option<Key>,
    /// Faults injected into the datagrams this server sends and receives (UDP only).
    pub faults: Faults,
    pub limits: Limits,
    /// Threads running service calls.
    pub workers: usize,
    /// First response retransmission timeout (UDP); doubles on each try up to `max_rto`.
    pub rto: Duration,
    pub max_rto: Duration,
    /// Response retransmissions before the server waits for the client to poll.
    pub max_retransmits: u32,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            key: None,
            faults: Faults::default(),
            limits: Limits::default(),
            workers: 4,
            rto: Duration::from_millis(50),
            max_rto: Duration::from_secs(1),
            max_retransmits: 8,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Peer {
    Udp(SocketAddr),
    Tcp(u64),
}

enum Slot {
    /// Partly received; `reserved` bytes counted against the reassembly cap.
    Reassembling { buf: Vec<u8>, got: FragSet, chunk: usize, last: Instant },
    Running { chunk: usize },
    /// The result cache entry, until the client acks it or its low mark passes it.
    Done { resp: Arc<Vec<u8>>, chunk: usize, next_retx: Instant, rto: Duration, tries: u32 },
    /// Refused (the error frame's payload, sent again on a retransmission).
    Refused(Vec<u8>),
    /// Acked: the response is dropped but the sequence stays known as run.
    Finished,
}

struct Session {
    peer: Peer,
    last_active: Instant,
    /// Every sequence below it is finished or abandoned by the client.
    floor: u64,
    slots: BTreeMap<u64, Slot>,
}

struct State {
    sessions: HashMap<u64, Session>,
    mem: Mem,
}

/// Bytes the server holds for clients: requests received and not yet handed to the
/// service (partly received ones at their full length), and cached responses.
#[derive(Default)]
struct Mem {
    reassembly: usize,
    results: usize,
}

impl Mem {
    fn reserve(&mut self, n: usize, c: &Counters) {
        self.reassembly += n;
        c.reassembly_bytes.store(self.reassembly as u64, Ordering::Relaxed);
        c.reassembly_peak.fetch_max(self.reassembly as u64, Ordering::Relaxed);
    }
    fn unreserve(&mut self, n: usize, c: &Counters) {
        self.reassembly -= n;
        c.reassembly_bytes.store(self.reassembly as u64, Ordering::Relaxed);
    }
    fn results(&mut self, add: usize, sub: usize, c: &Counters) {
        self.results = self.results + add - sub;
        c.result_bytes.store(self.results as u64, Ordering::Relaxed);
    }
    /// What a slot being dropped gives back.
    fn release(&mut self, slot: &Slot, c: &Counters) {
        match slot {
            Slot::Reassembling { buf, .. } => self.unreserve(buf.len(), c),
            Slot::Done { resp, .. } => self.results(0, resp.len(), c),
            _ => {}
        }
    }
}

struct Job {
    session: u64,
    seq: u64,
    request: Vec<u8>,
    /// Counted in `Mem::reassembly` until a worker takes the job.
    reserved: usize,
}

type Out = Vec<(Peer, Vec<u8>)>;

enum Io {
    Udp { sock: UdpSocket, faults: Mutex<Injector<PeerBytes>> },
    Tcp { conns: Mutex<HashMap<u64, Arc<Mutex<TcpStream>>>> },
}

struct Shared {
    cfg: ServerConfig,
    epoch: u64,
    transport: Transport,
    service: Arc<dyn Service>,
    counters: Counters,
    state: Mutex<State>,
    io: Io,
    jobs: Mutex<Option<Sender<Job>>>,
    stop: AtomicBool,
    max_chunk: usize,
}

/// A running server; `stop` (or drop) ends its threads and closes its socket.
pub struct Server {
    shared: Arc<Shared>,
    addr: SocketAddr,
    threads: Vec<JoinHandle<()>>,
}

const TICK: Duration = Duration::from_millis(5);

/// Starts a server for `service` on `cfg.listen` over `transport`.
pub fn serve(transport: Transport, cfg: ServerConfig, service: Arc<dyn Service>) -> io::Result<Server> {
    let epoch = super::random_u64();
    let (io, addr, udp, listener) = match transport {
        Transport::Udp => {
            let sock = UdpSocket::bind(cfg.listen)?;
            super::big_buffers(&sock);
            sock.set_read_timeout(Some(TICK))?;
            let addr = sock.local_addr()?;
            let rx = sock.try_clone()?;
            (Io::Udp { sock, faults: Mutex::new(Injector::new(cfg.faults, epoch)) }, addr, Some(rx), None)
        }
        Transport::Tcp => {
            let l = TcpListener::bind(cfg.listen)?;
            l.set_nonblocking(true)?;
            let addr = l.local_addr()?;
            (Io::Tcp { conns: Mutex::new(HashMap::new()) }, addr, None, Some(l))
        }
    };
    let (tx, rx) = channel::<Job>();
    let max_chunk = match transport {
        Transport::Udp => cfg.limits.max_chunk.clamp(64, MAX_CHUNK),
        Transport::Tcp => MAX_CHUNK,
    };
    let shared = Arc::new(Shared {
        epoch,
        transport,
        service,
        counters: Counters::default(),
        state: Mutex::new(State { sessions: HashMap::new(), mem: Mem::default() }),
        io,
        jobs: Mutex::new(Some(tx)),
        stop: AtomicBool::new(false),
        max_chunk,
        cfg,
    });
    let mut threads = Vec::new();
    let rx = Arc::new(Mutex::new(rx));
    for i in 0..shared.cfg.workers.max(1) {
        let (s, rx) = (shared.clone(), rx.clone());
        threads.push(std::thread::Builder::new().name(format!("link-worker-{i}")).spawn(move || s.worker(&rx))?);
    }
    if let Some(sock) = udp {
        let s = shared.clone();
        threads.push(std::thread::Builder::new().name("link-udp".into()).spawn(move || s.udp_loop(sock))?);
    }
    if let Some(l) = listener {
        let s = shared.clone();
        threads.push(std::thread::Builder::new().name("link-tcp-accept".into()).spawn(move || s.accept_loop(l))?);
        let s = shared.clone();
        threads.push(std::thread::Builder::new().name("link-tick".into()).spawn(move || {
            while !s.stop.load(Ordering::Relaxed) {
                std::thread::sleep(TICK * 2);
                let mut out = Vec::new();
                s.tick(&mut out);
                s.send_all(out);
            }
        })?);
    }
    Ok(Server { shared, addr, threads })
}

impl Server {
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
    pub fn epoch(&self) -> u64 {
        self.shared.epoch
    }
    pub fn transport(&self) -> Transport {
        self.shared.transport
    }
    pub fn stats(&self) -> LinkStats {
        self.shared.counters.snapshot()
    }
    /// Feeds one datagram to the state machine as if it came from `from` over UDP, and
    /// runs the timers; replies are counted but not sent. For fuzzing and tests.
    #[doc(hidden)]
    pub fn inject(&self, from: SocketAddr, bytes: &[u8]) -> usize {
        let mut out = Vec::new();
        self.shared.handle(Peer::Udp(from), bytes, &mut out);
        self.shared.tick(&mut out);
        out.len()
    }

    /// Closes every TCP connection (the server and its sessions stay); for tests of
    /// reconnection.
    #[doc(hidden)]
    pub fn drop_connections(&self) -> usize {
        let Io::Tcp { conns } = &self.shared.io else { return 0 };
        let map = conns.lock().unwrap();
        for c in map.values() {
            let _ = c.lock().map(|s| s.shutdown(Shutdown::Both));
        }
        map.len()
    }

    /// Stops the threads and closes the socket (the port is free when this returns).
    pub fn stop(mut self) {
        self.halt();
    }
    fn halt(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.jobs.lock().unwrap().take();
        if let Io::Tcp { conns } = &self.shared.io {
            for c in conns.lock().unwrap().values() {
                let _ = c.lock().map(|s| s.shutdown(Shutdown::Both));
            }
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        if let Io::Tcp { conns } = &self.shared.io {
            conns.lock().unwrap().clear();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.halt();
    }
}

impl Shared {
    fn key(&self) -> Option<&Key> {
        self.cfg.key.as_ref()
    }

    fn frame(&self, h: &Header, payload: &[u8]) -> Vec<u8> {
        frame::encode_vec(h, payload, self.key())
    }

    fn send_all(&self, out: Out) {
        if out.is_empty() {
            return;
        }
        match &self.io {
            Io::Udp { sock, faults } => {
                let mut list = Vec::with_capacity(out.len());
                {
                    let mut inj = faults.lock().unwrap();
                    if inj.active() {
                        let mut tmp = Vec::with_capacity(out.len());
                        inj.apply_all(out.into_iter().map(|(p, b)| PeerBytes(p, b)), &mut tmp, &self.counters.faults);
                        list.extend(tmp.into_iter().map(|PeerBytes(p, b)| (p, b)));
                    } else {
                        list = out;
                    }
                }
                for (p, b) in list {
                    if let Peer::Udp(a) = p {
                        if sock.send_to(&b, a).is_ok() {
                            bump(&self.counters.frames_out);
                            self.counters.bytes_out.fetch_add(b.len() as u64, Ordering::Relaxed);
                        }
                    }
                }
            }
            Io::Tcp { conns } => {
                for (p, b) in out {
                    let Peer::Tcp(id) = p else { continue };
                    let Some(c) = conns.lock().unwrap().get(&id).cloned() else { continue };
                    let mut s = c.lock().unwrap();
                    let ok = s.write_all(&(b.len() as u32).to_le_bytes()).and_then(|_| s.write_all(&b));
                    if ok.is_ok() {
                        bump(&self.counters.frames_out);
                        self.counters.bytes_out.fetch_add(b.len() as u64 + 4, Ordering::Relaxed);
                    } else {
                        let _ = s.shutdown(Shutdown::Both);
                    }
                }
            }
        }
    }

    fn udp_loop(self: Arc<Self>, sock: UdpSocket) {
        let mut buf = vec![0u8; 65536];
        let mut last_tick = Instant::now();
        let mut rx_faults: Injector<PeerBytes> = Injector::new(self.cfg.faults, self.epoch ^ 0x5555);
        while !self.stop.load(Ordering::Relaxed) {
            let mut out = Vec::new();
            match sock.recv_from(&mut buf) {
                Ok((n, from)) => {
                    let item = PeerBytes(Peer::Udp(from), buf[..n].to_vec());
                    if rx_faults.active() {
                        let mut items = Vec::new();
                        rx_faults.apply_all([item], &mut items, &self.counters.faults);
                        for PeerBytes(p, b) in items {
                            self.handle(p, &b, &mut out);
                        }
                    } else {
                        self.handle(item.0, &item.1, &mut out);
                    }
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    let mut items = Vec::new();
                    rx_faults.flush(&mut items);
                    for PeerBytes(p, b) in items {
                        self.handle(p, &b, &mut out);
                    }
                }
                Err(_) => {}
            }
            if last_tick.elapsed() >= TICK {
                last_tick = Instant::now();
                self.tick(&mut out);
                if let Io::Udp { faults, .. } = &self.io {
                    let mut held = Vec::new();
                    faults.lock().unwrap().flush(&mut held);
                    out.extend(held.into_iter().map(|PeerBytes(p, b)| (p, b)));
                }
            }
            self.send_all(out);
        }
    }

    fn accept_loop(self: Arc<Self>, l: TcpListener) {
        let next_id = AtomicU64::new(1);
        let mut readers: Vec<JoinHandle<()>> = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            match l.accept() {
                Ok((s, _)) => {
                    let Io::Tcp { conns } = &self.io else { return };
                    let mut map = conns.lock().unwrap();
                    if map.len() >= self.cfg.limits.max_sessions {
                        bump(&self.counters.over_cap);
                        let _ = s.shutdown(Shutdown::Both);
                        continue;
                    }
                    let id = next_id.fetch_add(1, Ordering::Relaxed);
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_nodelay(true);
                    let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
                    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
                    let Ok(r) = s.try_clone() else { continue };
                    map.insert(id, Arc::new(Mutex::new(s)));
                    drop(map);
                    let me = self.clone();
                    if let Ok(t) = std::thread::Builder::new().name(format!("link-tcp-{id}")).spawn(move || me.tcp_reader(id, r)) {
                        readers.push(t);
                    }
                    readers.retain(|t| !t.is_finished());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(TICK),
                Err(_) => std::thread::sleep(TICK),
            }
        }
        for t in readers {
            let _ = t.join();
        }
    }

    fn tcp_reader(self: Arc<Self>, id: u64, mut s: TcpStream) {
        let max_frame = HEADER_LEN + MAX_CHUNK + super::auth::MAC_LEN;
        let mut buf = Vec::new();
        'conn: while !self.stop.load(Ordering::Relaxed) {
            let mut len = [0u8; 4];
            match read_full(&mut s, &mut len, &self.stop) {
                Ok(true) => {}
                _ => break,
            }
            let n = u32::from_le_bytes(len) as usize;
            if n > max_frame {
                bump(&self.counters.too_large);
                break;
            }
            if n < HEADER_LEN {
                bump(&self.counters.malformed);
                break 'conn;
            }
            buf.resize(n, 0);
            match read_full(&mut s, &mut buf, &self.stop) {
                Ok(true) => {}
                _ => break,
            }
            let mut out = Vec::new();
            self.handle(Peer::Tcp(id), &buf, &mut out);
            self.send_all(out);
        }
        let _ = s.shutdown(Shutdown::Both);
        if let Io::Tcp { conns } = &self.io {
            conns.lock().unwrap().remove(&id);
        }
    }

    fn worker(self: Arc<Self>, rx: &Mutex<Receiver<Job>>) {
        loop {
            let job = {
                let r = rx.lock().unwrap();
                match r.recv_timeout(Duration::from_millis(50)) {
                    Ok(j) => j,
                    Err(RecvTimeoutError::Timeout) => {
                        if self.stop.load(Ordering::Relaxed) {
                            return;
                        }
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            };
            self.state.lock().unwrap().mem.unreserve(job.reserved, &self.counters);
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            let result = catch_unwind(AssertUnwindSafe(|| self.service.call(&job.request)));
            bump(&self.counters.requests);
            let mut out = Vec::new();
            {
                let mut guard = self.state.lock().unwrap();
                let st = &mut *guard;
                let Some(sess) = st.sessions.get_mut(&job.session) else { continue };
                let peer = sess.peer;
                let Some(slot) = sess.slots.get_mut(&job.seq) else { continue };
                let Slot::Running { chunk } = *slot else { continue };
                let max = self.cfg.limits.max_message;
                let refusal = match &result {
                    Err(_) => Some(frame::encode_error(frame::ERR_SERVICE, 0, 0, "the service panicked")),
                    Ok(r) if r.len() > max => Some(frame::encode_error(
                        frame::ERR_RESPONSE_TOO_LARGE,
                        r.len() as u64,
                        max as u64,
                        &format!("response of {} bytes is larger than the {max}-byte maximum", r.len()),
                    )),
                    Ok(_) => None,
                };
                if let Some(p) = refusal {
                    out.push((peer, self.frame(&Header::control(Kind::Error, job.session, self.epoch, job.seq), &p)));
                    *slot = Slot::Refused(p);
                } else {
                    let resp = Arc::new(result.unwrap());
                    st.mem.results(resp.len(), 0, &self.counters);
                    self.push_response(job.session, job.seq, &resp, chunk, None, peer, &mut out);
                    // The first timer allows for moving the response (at 50 MB/s).
                    let first = self.cfg.rto + Duration::from_nanos(resp.len() as u64 * 20);
                    *slot = Slot::Done { resp, chunk, next_retx: Instant::now() + first, rto: self.cfg.rto, tries: 0 };
                }
            }
            self.send_all(out);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push_response(&self, session: u64, seq: u64, resp: &[u8], chunk: usize, have: Option<&FragSet>, peer: Peer, out: &mut Out) {
        let n = frame::fragment_count(resp.len(), chunk);
        for i in 0..n {
            if have.is_some_and(|h| h.has(i)) {
                continue;
            }
            let r = frame::fragment_range(resp.len(), chunk, i);
            let h = Header {
                kind: Kind::Response,
                flags: 0,
                chunk: chunk as u16,
                session,
                epoch: self.epoch,
                seq,
                low: 0,
                index: i as u32,
                total: resp.len() as u32,
            };
            out.push((peer, self.frame(&h, &resp[r])));
        }
    }

    fn limits_payload(&self) -> Vec<u8> {
        WireLimits {
            max_message: self.cfg.limits.max_message as u64,
            window: self.cfg.limits.result_cache.max(1) as u32,
            max_chunk: self.max_chunk as u16,
        }
        .encode()
    }

    #[allow(clippy::too_many_arguments)]
    fn reply(&self, peer: Peer, kind: Kind, session: u64, seq: u64, flags: u8, payload: &[u8], out: &mut Out) {
        let mut h = Header::control(kind, session, self.epoch, seq);
        h.flags = flags;
        out.push((peer, self.frame(&h, payload)));
    }

    /// One frame in: checks, state changes, replies into `out`. Never panics.
    fn handle(&self, peer: Peer, bytes: &[u8], out: &mut Out) {
        let c = &self.counters;
        bump(&c.frames_in);
        c.bytes_in.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let (h, payload) = match frame::decode(bytes, self.key()) {
            Ok(x) => x,
            Err(e) => return c.decode_error(e),
        };
        if !matches!(h.kind, Kind::Hello | Kind::Request | Kind::Poll | Kind::Ack) {
            return bump(&c.malformed);
        }
        let now = Instant::now();
        let mut st = self.state.lock().unwrap();
        let st = &mut *st;
        if h.kind == Kind::Hello {
            if !st.sessions.contains_key(&h.session) {
                if st.sessions.len() >= self.cfg.limits.max_sessions.max(1) {
                    let lru = st.sessions.iter().min_by_key(|(_, s)| s.last_active).map(|(k, s)| (*k, s.last_active));
                    match lru {
                        Some((k, at)) if now.duration_since(at) >= self.cfg.limits.session_min_idle => {
                            self.evict(st, k);
                        }
                        _ => {
                            bump(&c.over_cap);
                            return self.reply(peer, Kind::Busy, h.session, h.seq, 0, &[], out);
                        }
                    }
                }
                st.sessions.insert(h.session, Session { peer, last_active: now, floor: h.low, slots: BTreeMap::new() });
                c.sessions.store(st.sessions.len() as u64, Ordering::Relaxed);
            }
            let s = st.sessions.get_mut(&h.session).unwrap();
            s.peer = peer;
            s.last_active = now;
            Self::advance(s, h.low, &mut st.mem, c);
            let p = self.limits_payload();
            return self.reply(peer, Kind::HelloAck, h.session, h.seq, 0, &p, out);
        }
        if h.epoch != self.epoch {
            bump(&c.stale);
            return self.reply(peer, Kind::Stale, h.session, h.seq, 0, &[], out);
        }
        let Some(s) = st.sessions.get_mut(&h.session) else {
            bump(&c.unknown_session);
            return self.reply(peer, Kind::UnknownSession, h.session, h.seq, 0, &[], out);
        };
        s.peer = peer;
        s.last_active = now;
        Self::advance(s, h.low, &mut st.mem, c);
        if h.seq < s.floor {
            return bump(&c.duplicate);
        }
        let window = self.cfg.limits.result_cache.max(1) as u64;
        if h.seq - s.floor >= window {
            return bump(&c.over_cap);
        }
        let (session, seq) = (h.session, h.seq);
        match h.kind {
            Kind::Ack => match s.slots.get_mut(&seq) {
                Some(slot @ Slot::Done { .. }) => {
                    st.mem.release(slot, c);
                    *slot = Slot::Finished;
                }
                Some(slot @ Slot::Refused(_)) => *slot = Slot::Finished,
                _ => bump(&c.duplicate),
            },
            Kind::Poll => match s.slots.get(&seq) {
                None => self.reply(peer, Kind::ReqAck, session, seq, 0, &FragSet::new(0).encode(8), out),
                Some(Slot::Reassembling { got, .. }) => {
                    let p = got.encode(self.max_chunk);
                    self.reply(peer, Kind::ReqAck, session, seq, 0, &p, out)
                }
                Some(Slot::Running { .. }) => self.reply(peer, Kind::ReqAck, session, seq, FLAG_COMPLETE, &[], out),
                Some(Slot::Done { resp, chunk, .. }) => {
                    let n = frame::fragment_count(resp.len(), *chunk);
                    let have = FragSet::decode(payload, n);
                    bump(&c.retransmits);
                    self.push_response(session, seq, resp, *chunk, have.as_ref(), peer, out);
                }
                Some(Slot::Refused(p)) => self.reply(peer, Kind::Error, session, seq, 0, p, out),
                Some(Slot::Finished) => bump(&c.duplicate),
            },
            Kind::Request => {
                let (total, chunk) = (h.total as usize, h.chunk as usize);
                if total > self.cfg.limits.max_message {
                    bump(&c.too_large);
                    let max = self.cfg.limits.max_message;
                    let p = frame::encode_error(
                        frame::ERR_TOO_LARGE,
                        total as u64,
                        max as u64,
                        &format!("request of {total} bytes is larger than the {max}-byte maximum"),
                    );
                    return self.reply(peer, Kind::Error, session, seq, 0, &p, out);
                }
                if chunk > self.max_chunk {
                    return bump(&c.too_large);
                }
                let n = frame::fragment_count(total, chunk);
                let idx = h.index as usize;
                let lim = &self.cfg.limits;
                let full = st.mem.reassembly + total > lim.max_reassembly_bytes || st.mem.results > lim.max_result_bytes;
                match s.slots.get_mut(&seq) {
                    None if full => bump(&c.over_cap),
                    None if n == 1 => {
                        st.mem.reserve(total, c);
                        s.slots.insert(seq, Slot::Running { chunk });
                        self.run(session, seq, payload.to_vec(), total);
                    }
                    None => {
                        st.mem.reserve(total, c);
                        let mut got = FragSet::new(n);
                        got.insert(idx);
                        let mut buf = vec![0u8; total];
                        buf[frame::fragment_range(total, chunk, idx)].copy_from_slice(payload);
                        s.slots.insert(seq, Slot::Reassembling { buf, got, chunk, last: now });
                    }
                    Some(Slot::Reassembling { buf, got, chunk: ch, last }) => {
                        if *ch != chunk || buf.len() != total {
                            return bump(&c.malformed);
                        }
                        if !got.insert(idx) {
                            return bump(&c.duplicate);
                        }
                        *last = now;
                        buf[frame::fragment_range(total, chunk, idx)].copy_from_slice(payload);
                        if got.complete() {
                            let req = std::mem::take(buf);
                            s.slots.insert(seq, Slot::Running { chunk });
                            self.run(session, seq, req, total);
                        }
                    }
                    Some(Slot::Running { .. }) => {
                        bump(&c.duplicate);
                        if idx + 1 == n {
                            self.reply(peer, Kind::ReqAck, session, seq, FLAG_COMPLETE, &[], out);
                        }
                    }
                    Some(Slot::Done { resp, chunk, .. }) => {
                        // A retransmitted request: answered from the result cache.
                        bump(&c.duplicate);
                        if idx + 1 == n {
                            bump(&c.retransmits);
                            let (resp, chunk) = (resp.clone(), *chunk);
                            self.push_response(session, seq, &resp, chunk, None, peer, out);
                        }
                    }
                    Some(Slot::Refused(p)) => {
                        bump(&c.duplicate);
                        if idx + 1 == n {
                            self.reply(peer, Kind::Error, session, seq, 0, p, out);
                        }
                    }
                    Some(Slot::Finished) => bump(&c.duplicate),
                }
            }
            _ => unreachable!(),
        }
    }

    /// Queues a request for the workers; its `reserved` bytes stay counted until one
    /// takes it.
    fn run(&self, session: u64, seq: u64, request: Vec<u8>, reserved: usize) {
        if let Some(tx) = self.jobs.lock().unwrap().as_ref() {
            let _ = tx.send(Job { session, seq, request, reserved });
        }
    }

    /// The client will not ask again about sequences below `low`: forget them.
    fn advance(s: &mut Session, low: u64, mem: &mut Mem, c: &Counters) {
        if low <= s.floor {
            return;
        }
        while let Some(e) = s.slots.first_entry() {
            if *e.key() >= low {
                break;
            }
            mem.release(&e.remove(), c);
        }
        s.floor = low;
    }

    fn evict(&self, st: &mut State, id: u64) {
        if let Some(s) = st.sessions.remove(&id) {
            for slot in s.slots.values() {
                st.mem.release(slot, &self.counters);
            }
            bump(&self.counters.sessions_evicted);
            self.counters.sessions.store(st.sessions.len() as u64, Ordering::Relaxed);
        }
    }

    /// Timers: idle sessions, stale reassemblies, response retransmission (UDP).
    fn tick(&self, out: &mut Out) {
        let now = Instant::now();
        let lim = &self.cfg.limits;
        let mut st = self.state.lock().unwrap();
        let st = &mut *st;
        let idle: Vec<u64> =
            st.sessions.iter().filter(|(_, s)| now.duration_since(s.last_active) >= lim.session_idle).map(|(k, _)| *k).collect();
        for k in idle {
            self.evict(st, k);
        }
        let udp = self.transport == Transport::Udp;
        for (&session, s) in st.sessions.iter_mut() {
            let mut expired = Vec::new();
            for (&seq, slot) in s.slots.iter_mut() {
                match slot {
                    Slot::Reassembling { last, .. } if now.duration_since(*last) >= lim.reassembly_timeout => expired.push(seq),
                    Slot::Done { resp, chunk, next_retx, rto, tries } if udp && now >= *next_retx && *tries < self.cfg.max_retransmits => {
                        *tries += 1;
                        *rto = (*rto * 2).min(self.cfg.max_rto);
                        *next_retx = now + *rto;
                        bump(&self.counters.retransmits);
                        let (resp, chunk) = (resp.clone(), *chunk);
                        self.push_response(session, seq, &resp, chunk, None, s.peer, out);
                    }
                    _ => {}
                }
            }
            for seq in expired {
                if let Some(slot) = s.slots.remove(&seq) {
                    st.mem.release(&slot, &self.counters);
                }
            }
        }
    }
}

#[derive(Clone)]
struct PeerBytes(Peer, Vec<u8>);

impl AsMut<[u8]> for PeerBytes {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.1
    }
}

/// Reads exactly `buf.len()` bytes; Ok(false) on a clean end of stream or a stop.
pub(crate) fn read_full(s: &mut TcpStream, buf: &mut [u8], stop: &AtomicBool) -> io::Result<bool> {
    let mut at = 0;
    while at < buf.len() {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        match s.read(&mut buf[at..]) {
            Ok(0) => return Ok(false),
            Ok(n) => at += n,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

pub(crate) use self::read_full as tcp_read_full;
