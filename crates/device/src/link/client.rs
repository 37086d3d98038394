//! The client: a session with one server, requests numbered from 1, responses reassembled
//! and handed out in submission order; retransmission and restart handling run on a
//! background thread.
use std::collections::BTreeMap;
use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::faults::Injector;
use super::frame::{self, FragSet, Header, Kind, WireLimits, FLAG_COMPLETE, HEADER_LEN, MAX_CHUNK};
use super::{bump, Counters, Faults, Key, LinkError, LinkStats, Transport};

#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Must match the server's key when it has one.
    pub key: Option<Key>,
    /// Requests submitted and not yet returned by `next`/`call` (capped by the server's
    /// window).
    pub max_inflight: usize,
    /// Total time a request may take, retransmissions and restarts included, before it
    /// fails with `Timeout`.
    pub timeout: Duration,
    /// How long `connect` waits for the handshake.
    pub connect_timeout: Duration,
    /// On a server restart (new epoch) or a lost session, send the requests in flight
    /// again (true), or fail them with `ServerRestarted` / `SessionLost` (false).
    pub retry_on_restart: bool,
    /// Faults injected into the datagrams this client sends and receives (UDP only).
    pub faults: Faults,
    /// First retransmission timeout (UDP; TCP uses at least 500 ms); doubles per try up
    /// to `max_rto`, and starts again when a fragment arrives.
    pub rto: Duration,
    pub max_rto: Duration,
    /// Largest fragment payload sent over UDP (capped by the server's).
    pub max_chunk: usize,
    /// Largest response accepted.
    pub max_response: usize,
}

impl Default for ClientConfig {
    fn default() -> ClientConfig {
        ClientConfig {
            key: None,
            max_inflight: 64,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            retry_on_restart: true,
            faults: Faults::default(),
            rto: Duration::from_millis(40),
            max_rto: Duration::from_secs(1),
            max_chunk: 1400,
            max_response: 16 << 20,
        }
    }
}

/// What the handshake learned about the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    pub epoch: u64,
    pub max_message: usize,
    /// Requests the server lets a session have in flight.
    pub window: usize,
    pub max_chunk: usize,
}

struct RespAsm {
    buf: Vec<u8>,
    got: FragSet,
    chunk: usize,
}

struct Req {
    data: Arc<Vec<u8>>,
    chunk: usize,
    deadline: Instant,
    next_retx: Instant,
    rto: Duration,
    /// First and last transmission (Karn: only never-retransmitted requests give RTT
    /// samples); later requests answered first count as `overtaken` (fast retransmit).
    first_sent: Instant,
    last_sent: Instant,
    retransmitted: bool,
    overtaken: u32,
    resp: Option<RespAsm>,
    outcome: Option<Result<Vec<u8>, LinkError>>,
    claimed: bool,
}

struct CState {
    session: u64,
    epoch: u64,
    connected: bool,
    limits: Option<ServerLimits>,
    next_seq: u64,
    reqs: BTreeMap<u64, Req>,
    hello_next: Instant,
    hello_rto: Duration,
    busy: bool,
    closed: bool,
    /// Smoothed round trip and its variation (RFC 6298), from never-retransmitted requests.
    srtt: Option<Duration>,
    rttvar: Duration,
    /// When a valid frame last came from the server: retransmission timeouts only back off
    /// while the server is silent (loss on a live link is not congestion here).
    last_heard: Instant,
}

enum CIo {
    Udp { sock: UdpSocket, faults: Mutex<Injector<Vec<u8>>> },
    Tcp { stream: Mutex<Option<(u64, TcpStream)>> },
}

struct Inner {
    transport: Transport,
    addr: SocketAddr,
    peer: String,
    cfg: ClientConfig,
    rto: Duration,
    counters: Counters,
    state: Mutex<CState>,
    cv: Condvar,
    io: CIo,
    stop: AtomicBool,
}

/// One session with a server. Send + Sync: several threads may submit, but `next` hands
/// out responses in submission order to whichever thread asks.
pub struct Client {
    inner: Arc<Inner>,
    threads: Vec<JoinHandle<()>>,
}

const TICK: Duration = Duration::from_millis(2);

type Out = Vec<Vec<u8>>;

impl Client {
    /// Opens a session with the server at `addr`: the handshake learns its epoch and
    /// limits. Fails with `Timeout { seq: 0, .. }` when nothing answers within
    /// `connect_timeout`, `Busy` when the server's session table stays full.
    pub fn connect(transport: Transport, addr: SocketAddr, cfg: ClientConfig) -> Result<Client, LinkError> {
        let io = match transport {
            Transport::Udp => {
                // A loopback server gets a loopback client socket; otherwise any interface.
                let local: SocketAddr = match (addr.is_ipv4(), addr.ip().is_loopback()) {
                    (true, true) => ([127, 0, 0, 1], 0).into(),
                    (true, false) => ([0, 0, 0, 0], 0).into(),
                    (false, true) => (std::net::Ipv6Addr::LOCALHOST, 0).into(),
                    (false, false) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
                };
                let sock = UdpSocket::bind(local)?;
                sock.connect(addr)?;
                super::big_buffers(&sock);
                sock.set_read_timeout(Some(TICK))?;
                CIo::Udp { sock, faults: Mutex::new(Injector::new(cfg.faults, 0xC11E)) }
            }
            Transport::Tcp => CIo::Tcp { stream: Mutex::new(None) },
        };
        let now = Instant::now();
        let rto = match transport {
            Transport::Udp => cfg.rto,
            Transport::Tcp => cfg.rto.max(Duration::from_millis(500)),
        };
        let inner = Arc::new(Inner {
            transport,
            addr,
            peer: super::peer_name(transport, addr),
            rto,
            counters: Counters::default(),
            state: Mutex::new(CState {
                session: super::random_u64(),
                epoch: 0,
                connected: false,
                limits: None,
                next_seq: 1,
                reqs: BTreeMap::new(),
                hello_next: now,
                hello_rto: rto,
                busy: false,
                closed: false,
                srtt: None,
                rttvar: Duration::ZERO,
                last_heard: now,
            }),
            cv: Condvar::new(),
            io,
            stop: AtomicBool::new(false),
            cfg,
        });
        let me = inner.clone();
        let t = match transport {
            Transport::Udp => std::thread::Builder::new().name("link-client-udp".into()).spawn(move || me.udp_loop())?,
            Transport::Tcp => std::thread::Builder::new().name("link-client-tcp".into()).spawn(move || me.tcp_loop())?,
        };
        let client = Client { inner, threads: vec![t] };
        let deadline = now + client.inner.cfg.connect_timeout;
        let mut st = client.inner.state.lock().unwrap();
        while !st.connected {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let busy = st.busy;
                drop(st);
                let peer = client.inner.peer.clone();
                return Err(if busy {
                    LinkError::Busy { peer }
                } else {
                    LinkError::Timeout { seq: 0, after: client.inner.cfg.connect_timeout, peer }
                });
            }
            st = client.inner.cv.wait_timeout(st, left).unwrap().0;
        }
        drop(st);
        Ok(client)
    }

    /// Sends a request (write&go) and returns its sequence number; blocks while
    /// `max_inflight` requests are outstanding (submitted, not yet returned by `next`).
    pub fn submit(&self, request: Vec<u8>) -> Result<u64, LinkError> {
        self.inner.submit(request, false)
    }

    /// The response to the oldest outstanding request (strictly in submission order),
    /// waiting for it; that request's error if it failed. `NothingPending` when no
    /// request is outstanding.
    pub fn next(&self) -> Result<(u64, Vec<u8>), LinkError> {
        let inner = &self.inner;
        let mut st = inner.state.lock().unwrap();
        loop {
            let Some((&seq, r)) = st.reqs.iter().find(|(_, r)| !r.claimed) else {
                return Err(if st.closed { LinkError::Closed } else { LinkError::NothingPending });
            };
            if r.outcome.is_some() {
                let r = st.reqs.remove(&seq).unwrap();
                inner.cv.notify_all();
                return r.outcome.unwrap().map(|v| (seq, v));
            }
            st = inner.cv.wait(st).unwrap();
        }
    }

    /// One request, one response (may be used alongside submit/next from other threads).
    pub fn call(&self, request: Vec<u8>) -> Result<Vec<u8>, LinkError> {
        let seq = self.inner.submit(request, true)?;
        let inner = &self.inner;
        let mut st = inner.state.lock().unwrap();
        loop {
            if st.reqs.get(&seq).is_some_and(|r| r.outcome.is_some()) {
                let r = st.reqs.remove(&seq).unwrap();
                inner.cv.notify_all();
                return r.outcome.unwrap();
            }
            st = inner.cv.wait(st).unwrap();
        }
    }

    /// The server's limits and epoch as last learned (the epoch changes on a restart).
    pub fn server_limits(&self) -> ServerLimits {
        self.inner.state.lock().unwrap().limits.expect("connected clients know the limits")
    }

    pub fn stats(&self) -> LinkStats {
        self.inner.counters.snapshot()
    }

    /// Requests submitted and not yet returned.
    pub fn outstanding(&self) -> usize {
        self.inner.state.lock().unwrap().reqs.len()
    }

    pub fn peer(&self) -> &str {
        &self.inner.peer
    }

    pub fn transport(&self) -> Transport {
        self.inner.transport
    }

    /// Ends the session's threads; outstanding requests fail with `Closed`.
    pub fn close(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.inner.stop.store(true, Ordering::Relaxed);
        {
            let mut st = self.inner.state.lock().unwrap();
            st.closed = true;
            for r in st.reqs.values_mut() {
                if r.outcome.is_none() {
                    r.outcome = Some(Err(LinkError::Closed));
                }
            }
            self.inner.cv.notify_all();
        }
        if let CIo::Tcp { stream } = &self.inner.io {
            if let Some((_, s)) = stream.lock().unwrap().as_ref() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.halt();
    }
}

impl Inner {
    fn key(&self) -> Option<&Key> {
        self.cfg.key.as_ref()
    }

    fn submit(&self, request: Vec<u8>, claimed: bool) -> Result<u64, LinkError> {
        let mut st = self.state.lock().unwrap();
        let lim = st.limits.expect("connected");
        if st.closed {
            return Err(LinkError::Closed);
        }
        if request.len() > lim.max_message || request.len() > u32::MAX as usize {
            return Err(LinkError::TooLarge { len: request.len(), max: lim.max_message });
        }
        loop {
            let cap = self.cfg.max_inflight.max(1).min(st.limits.map_or(1, |l| l.window.max(1)));
            if st.reqs.len() < cap {
                break;
            }
            st = self.cv.wait(st).unwrap();
            if st.closed {
                return Err(LinkError::Closed);
            }
        }
        let seq = st.next_seq;
        st.next_seq += 1;
        let now = Instant::now();
        let rto = self.base_rto(&st);
        // The first timer also allows for moving the bytes already in flight and these
        // (at 50 MB/s), so large requests are not polled while still on their way.
        let in_flight: usize = st.reqs.values().filter(|r| r.outcome.is_none()).map(|r| r.data.len()).sum();
        let allowance = Duration::from_nanos((in_flight + request.len()) as u64 * 20);
        let chunk = match self.transport {
            Transport::Udp => self.cfg.max_chunk.clamp(64, MAX_CHUNK),
            Transport::Tcp => MAX_CHUNK,
        }
        .min(st.limits.map_or(MAX_CHUNK, |l| l.max_chunk.max(64)));
        st.reqs.insert(
            seq,
            Req {
                data: Arc::new(request),
                chunk,
                deadline: now + self.cfg.timeout,
                next_retx: now + rto + allowance,
                rto,
                first_sent: now,
                last_sent: now,
                retransmitted: false,
                overtaken: 0,
                resp: None,
                outcome: None,
                claimed,
            },
        );
        let mut out = Vec::new();
        if st.connected {
            self.req_frames(&st, seq, None, &mut out);
        }
        drop(st);
        self.send_all(out);
        Ok(seq)
    }

    /// The retransmission timeout for a fresh try: `cfg.rto`, or more when the measured
    /// round trip says so (srtt + 4 rttvar), at most `max_rto`.
    fn base_rto(&self, st: &CState) -> Duration {
        match st.srtt {
            None => self.rto,
            Some(s) => (s + st.rttvar * 4).clamp(self.rto, self.cfg.max_rto.max(self.rto)),
        }
    }

    fn low(st: &CState) -> u64 {
        st.reqs.iter().find(|(_, r)| r.outcome.is_none()).map_or(st.next_seq, |(k, _)| *k)
    }

    fn header(&self, st: &CState, kind: Kind, seq: u64) -> Header {
        let mut h = Header::control(kind, st.session, st.epoch, seq);
        h.low = Self::low(st);
        h
    }

    /// Request fragments of `seq` (those not in `have`, or all).
    fn req_frames(&self, st: &CState, seq: u64, have: Option<&FragSet>, out: &mut Out) {
        let r = &st.reqs[&seq];
        let total = r.data.len();
        let mut h = self.header(st, Kind::Request, seq);
        h.chunk = r.chunk as u16;
        h.total = total as u32;
        for i in 0..frame::fragment_count(total, r.chunk) {
            if have.is_some_and(|s| s.has(i)) {
                continue;
            }
            h.index = i as u32;
            out.push(frame::encode_vec(&h, &r.data[frame::fragment_range(total, r.chunk, i)], self.key()));
        }
    }

    fn hello(&self, st: &mut CState, out: &mut Out) {
        let h = self.header(st, Kind::Hello, st.next_seq);
        out.push(frame::encode_vec(&h, &[], self.key()));
        st.hello_next = Instant::now() + st.hello_rto;
        st.hello_rto = (st.hello_rto * 2).min(self.cfg.max_rto);
    }

    fn finish(&self, r: &mut Req, outcome: Result<Vec<u8>, LinkError>) {
        r.outcome = Some(outcome);
        r.resp = None;
        r.data = Arc::new(Vec::new());
        self.cv.notify_all();
    }

    /// The server restarted (`lost == false`) or forgot the session (`lost == true`).
    fn restart(&self, st: &mut CState, lost: bool) {
        bump(&self.counters.restarts);
        st.connected = false;
        st.hello_rto = self.rto;
        let retry = self.cfg.retry_on_restart;
        for (&seq, r) in st.reqs.iter_mut() {
            if r.outcome.is_some() {
                continue;
            }
            if retry {
                r.resp = None;
                r.rto = self.rto;
                r.retransmitted = true;
            } else {
                let peer = self.peer.clone();
                let e = if lost { LinkError::SessionLost { seq, peer } } else { LinkError::ServerRestarted { seq, peer } };
                self.finish(r, Err(e));
            }
        }
    }

    fn handle(&self, bytes: &[u8], out: &mut Out) {
        let c = &self.counters;
        bump(&c.frames_in);
        c.bytes_in.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let (h, payload) = match frame::decode(bytes, self.key()) {
            Ok(x) => x,
            Err(e) => return c.decode_error(e),
        };
        let mut guard = self.state.lock().unwrap();
        let st = &mut *guard;
        if h.session != st.session {
            return bump(&c.unknown_session);
        }
        let now = Instant::now();
        st.last_heard = now;
        match h.kind {
            Kind::HelloAck => {
                let Some(w) = WireLimits::decode(payload) else { return bump(&c.malformed) };
                if st.epoch != 0 && h.epoch != st.epoch {
                    self.restart(st, false);
                }
                st.epoch = h.epoch;
                st.busy = false;
                st.limits = Some(ServerLimits {
                    epoch: h.epoch,
                    max_message: w.max_message.min(usize::MAX as u64) as usize,
                    window: w.window as usize,
                    max_chunk: w.max_chunk as usize,
                });
                if !st.connected {
                    st.connected = true;
                    c.sessions.store(1, Ordering::Relaxed);
                    let seqs: Vec<u64> = st.reqs.iter().filter(|(_, r)| r.outcome.is_none()).map(|(k, _)| *k).collect();
                    for seq in seqs {
                        let r = st.reqs.get_mut(&seq).unwrap();
                        r.next_retx = now + r.rto;
                        r.last_sent = now;
                        self.req_frames(st, seq, None, out);
                    }
                    self.cv.notify_all();
                } else {
                    bump(&c.duplicate);
                }
            }
            Kind::Stale => {
                if h.epoch != st.epoch {
                    if st.epoch != 0 {
                        self.restart(st, false);
                    }
                    st.connected = false;
                    st.epoch = h.epoch;
                    self.hello(st, out);
                } else {
                    bump(&c.stale);
                }
            }
            Kind::UnknownSession => {
                if h.epoch == st.epoch && st.connected {
                    self.restart(st, true);
                    st.session = super::random_u64();
                    self.hello(st, out);
                } else {
                    bump(&c.duplicate);
                }
            }
            Kind::Busy => {
                st.busy = true;
            }
            Kind::Response | Kind::ReqAck | Kind::Error => {
                if h.epoch != st.epoch {
                    return bump(&c.stale);
                }
                let seq = h.seq;
                let low = Self::low(st);
                let Some(r) = st.reqs.get_mut(&seq).filter(|r| r.outcome.is_none()) else {
                    bump(&c.duplicate);
                    if h.kind == Kind::Response && seq < st.next_seq {
                        let n = frame::fragment_count(h.total as usize, h.chunk as usize);
                        if h.index == 0 || h.index as usize + 1 == n {
                            let mut a = Header::control(Kind::Ack, st.session, st.epoch, seq);
                            a.low = low;
                            out.push(frame::encode_vec(&a, &[], self.key()));
                        }
                    }
                    return;
                };
                let ack = |out: &mut Out| {
                    let mut a = Header::control(Kind::Ack, h.session, h.epoch, seq);
                    a.low = low;
                    out.push(frame::encode_vec(&a, &[], self.key()));
                };
                match h.kind {
                    Kind::Response => {
                        let (total, chunk, idx) = (h.total as usize, h.chunk as usize, h.index as usize);
                        if total > self.cfg.max_response {
                            ack(out);
                            return self.finish(r, Err(LinkError::TooLarge { len: total, max: self.cfg.max_response }));
                        }
                        let asm = r.resp.get_or_insert_with(|| RespAsm {
                            buf: vec![0; total],
                            got: FragSet::new(frame::fragment_count(total, chunk)),
                            chunk,
                        });
                        if asm.chunk != chunk || asm.buf.len() != total {
                            return bump(&c.malformed);
                        }
                        if !asm.got.insert(idx) {
                            return bump(&c.duplicate);
                        }
                        asm.buf[frame::fragment_range(total, chunk, idx)].copy_from_slice(payload);
                        r.rto = self.rto;
                        r.next_retx = now + r.rto;
                        if asm.got.complete() {
                            let buf = std::mem::take(&mut asm.buf);
                            bump(&c.requests);
                            let (sample, sent) = ((!r.retransmitted).then(|| now - r.first_sent), r.last_sent);
                            self.finish(r, Ok(buf));
                            if let Some(x) = sample {
                                self.rtt_sample(st, x);
                            }
                            self.fast_retransmit(st, seq, sent, now, out);
                            // low may have moved: the ack carries the new one.
                            let mut a = Header::control(Kind::Ack, st.session, st.epoch, seq);
                            a.low = Self::low(st);
                            out.push(frame::encode_vec(&a, &[], self.key()));
                        }
                    }
                    Kind::ReqAck => {
                        r.next_retx = now + r.rto;
                        r.last_sent = now;
                        if h.flags & FLAG_COMPLETE != 0 {
                            return;
                        }
                        let n = frame::fragment_count(r.data.len(), r.chunk);
                        let Some(have) = FragSet::decode(payload, n) else { return bump(&c.malformed) };
                        let before = out.len();
                        self.req_frames(st, seq, Some(&have), out);
                        c.retransmits.fetch_add((out.len() - before) as u64, Ordering::Relaxed);
                    }
                    _ => {
                        let Some((code, a, b, text)) = frame::decode_error(payload) else { return bump(&c.malformed) };
                        ack(out);
                        let e = match code {
                            frame::ERR_TOO_LARGE | frame::ERR_RESPONSE_TOO_LARGE => {
                                LinkError::TooLarge { len: a as usize, max: b as usize }
                            }
                            _ => LinkError::Remote { seq, message: text },
                        };
                        self.finish(r, Err(e));
                    }
                }
            }
            _ => bump(&c.malformed),
        }
    }

    fn rtt_sample(&self, st: &mut CState, x: Duration) {
        match st.srtt {
            None => {
                st.srtt = Some(x);
                st.rttvar = x / 2;
            }
            Some(s) => {
                let d = s.abs_diff(x);
                st.rttvar = st.rttvar * 3 / 4 + d / 4;
                st.srtt = Some(s * 7 / 8 + x / 8);
            }
        }
    }

    /// Fast retransmit: request `done` (last sent at `sent`) was answered; single-fragment
    /// requests before it, sent earlier and still without any response, that three such
    /// later requests have overtaken are sent again at once.
    fn fast_retransmit(&self, st: &mut CState, done: u64, sent: Instant, now: Instant, out: &mut Out) {
        let mut again = Vec::new();
        for (&seq, r) in st.reqs.range_mut(..done) {
            if r.outcome.is_some() || r.resp.is_some() || r.last_sent >= sent || frame::fragment_count(r.data.len(), r.chunk) != 1 {
                continue;
            }
            r.overtaken += 1;
            if r.overtaken >= 3 {
                r.overtaken = 0;
                r.last_sent = now;
                r.retransmitted = true;
                r.next_retx = now + r.rto;
                again.push(seq);
            }
        }
        for seq in again {
            bump(&self.counters.retransmits);
            self.req_frames(st, seq, None, out);
        }
    }

    /// Timers: total timeouts, the handshake, retransmission.
    fn tick(&self, out: &mut Out) {
        let now = Instant::now();
        let mut guard = self.state.lock().unwrap();
        let st = &mut *guard;
        for (&seq, r) in st.reqs.iter_mut() {
            if r.outcome.is_none() && now >= r.deadline {
                let e = LinkError::Timeout { seq, after: self.cfg.timeout, peer: self.peer.clone() };
                self.finish(r, Err(e));
            }
        }
        if !st.connected {
            if now >= st.hello_next && self.link_up() {
                self.hello(st, out);
            }
            return;
        }
        let due: Vec<u64> = st.reqs.iter().filter(|(_, r)| r.outcome.is_none() && now >= r.next_retx).map(|(k, _)| *k).collect();
        for seq in due {
            let base = self.base_rto(st);
            let heard = st.last_heard;
            let r = st.reqs.get_mut(&seq).unwrap();
            r.rto = if heard > r.last_sent { base } else { (r.rto * 2).min(self.cfg.max_rto).max(base) };
            r.next_retx = now + r.rto;
            r.last_sent = now;
            r.retransmitted = true;
            r.overtaken = 0;
            bump(&self.counters.retransmits);
            let single = frame::fragment_count(r.data.len(), r.chunk) == 1;
            if single && r.resp.is_none() {
                self.req_frames(st, seq, None, out);
            } else {
                let r = &st.reqs[&seq];
                let have = r.resp.as_ref().map(|a| a.got.encode(r.chunk)).unwrap_or_else(|| FragSet::new(0).encode(8));
                let mut h = self.header(st, Kind::Poll, seq);
                h.chunk = r.chunk as u16;
                h.total = r.data.len() as u32;
                out.push(frame::encode_vec(&h, &have, self.key()));
            }
        }
    }

    fn link_up(&self) -> bool {
        match &self.io {
            CIo::Udp { .. } => true,
            CIo::Tcp { stream } => stream.lock().unwrap().is_some(),
        }
    }

    fn send_all(&self, out: Out) {
        if out.is_empty() {
            return;
        }
        match &self.io {
            CIo::Udp { sock, faults } => {
                let list = {
                    let mut inj = faults.lock().unwrap();
                    if inj.active() {
                        let mut list = Vec::with_capacity(out.len());
                        inj.apply_all(out, &mut list, &self.counters.faults);
                        list
                    } else {
                        out
                    }
                };
                for b in list {
                    if sock.send(&b).is_ok() {
                        bump(&self.counters.frames_out);
                        self.counters.bytes_out.fetch_add(b.len() as u64, Ordering::Relaxed);
                    }
                }
            }
            CIo::Tcp { stream } => {
                let mut g = stream.lock().unwrap();
                let Some((_, s)) = g.as_mut() else { return };
                let mut buf = Vec::with_capacity(out.iter().map(|b| b.len() + 4).sum());
                for b in &out {
                    buf.extend_from_slice(&(b.len() as u32).to_le_bytes());
                    buf.extend_from_slice(b);
                }
                if s.write_all(&buf).is_ok() {
                    self.counters.frames_out.fetch_add(out.len() as u64, Ordering::Relaxed);
                    self.counters.bytes_out.fetch_add(buf.len() as u64, Ordering::Relaxed);
                } else {
                    let _ = s.shutdown(Shutdown::Both);
                }
            }
        }
    }

    fn udp_loop(self: Arc<Self>) {
        let CIo::Udp { sock, .. } = &self.io else { return };
        let mut buf = vec![0u8; 65536];
        let mut rx: Injector<Vec<u8>> = Injector::new(self.cfg.faults, 0xC11E ^ 0x77);
        let mut last_tick = Instant::now();
        {
            let mut out = Vec::new();
            self.hello(&mut self.state.lock().unwrap(), &mut out);
            self.send_all(out);
        }
        while !self.stop.load(Ordering::Relaxed) {
            let mut out = Vec::new();
            let mut items = Vec::new();
            match sock.recv(&mut buf) {
                Ok(n) => {
                    if rx.active() {
                        rx.apply_all([buf[..n].to_vec()], &mut items, &self.counters.faults);
                    } else {
                        self.handle(&buf[..n], &mut out);
                    }
                }
                Err(_) => rx.flush(&mut items),
            }
            for b in items {
                self.handle(&b, &mut out);
            }
            if last_tick.elapsed() >= TICK {
                last_tick = Instant::now();
                self.tick(&mut out);
                if let CIo::Udp { faults, .. } = &self.io {
                    faults.lock().unwrap().flush(&mut out);
                }
            }
            self.send_all(out);
        }
    }

    fn tcp_loop(self: Arc<Self>) {
        let CIo::Tcp { stream } = &self.io else { return };
        let mut gen = 0u64;
        let mut readers: Vec<JoinHandle<()>> = Vec::new();
        let mut backoff = self.cfg.rto;
        let mut next_try = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            if stream.lock().unwrap().is_none() && Instant::now() >= next_try {
                match TcpStream::connect_timeout(&self.addr, Duration::from_millis(500)) {
                    Ok(s) => {
                        backoff = self.cfg.rto;
                        gen += 1;
                        let _ = s.set_nodelay(true);
                        let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
                        let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
                        if let Ok(r) = s.try_clone() {
                            *stream.lock().unwrap() = Some((gen, s));
                            let me = self.clone();
                            let g = gen;
                            if let Ok(t) = std::thread::Builder::new().name("link-client-tcp-rx".into()).spawn(move || me.tcp_reader(g, r)) {
                                readers.push(t);
                            }
                            let mut out = Vec::new();
                            {
                                let mut st = self.state.lock().unwrap();
                                st.connected = false;
                                st.hello_rto = self.rto;
                                self.hello(&mut st, &mut out);
                            }
                            self.send_all(out);
                        }
                    }
                    Err(_) => {
                        next_try = Instant::now() + backoff;
                        backoff = (backoff * 2).min(self.cfg.max_rto);
                    }
                }
            }
            let mut out = Vec::new();
            self.tick(&mut out);
            self.send_all(out);
            readers.retain(|t| !t.is_finished());
            std::thread::sleep(TICK * 5);
        }
        for t in readers {
            let _ = t.join();
        }
    }

    fn tcp_reader(self: Arc<Self>, gen: u64, mut s: TcpStream) {
        let max_frame = HEADER_LEN + MAX_CHUNK + super::auth::MAC_LEN;
        let mut buf = Vec::new();
        loop {
            let mut len = [0u8; 4];
            if !matches!(super::server::tcp_read_full(&mut s, &mut len, &self.stop), Ok(true)) {
                break;
            }
            let n = u32::from_le_bytes(len) as usize;
            if !(HEADER_LEN..=max_frame).contains(&n) {
                bump(&self.counters.malformed);
                break;
            }
            buf.resize(n, 0);
            if !matches!(super::server::tcp_read_full(&mut s, &mut buf, &self.stop), Ok(true)) {
                break;
            }
            let mut out = Vec::new();
            self.handle(&buf, &mut out);
            self.send_all(out);
        }
        let _ = s.shutdown(Shutdown::Both);
        let CIo::Tcp { stream } = &self.io else { return };
        let mut g = stream.lock().unwrap();
        if g.as_ref().is_some_and(|(x, _)| *x == gen) {
            *g = None;
            drop(g);
            let mut st = self.state.lock().unwrap();
            st.connected = false;
            self.counters.sessions.store(0, Ordering::Relaxed);
        }
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn f<T: Send + Sync>() {}
    f::<Client>();
}

#[allow(dead_code)]
type Guard<'a> = MutexGuard<'a, CState>;
