//! The attachment's link layer: a reliable, at-most-once request/response channel over
//! UDP and over TCP carrying opaque request and response messages (the paper's write&go:
//! the request's fragments go out, the server runs it when the last one arrives and
//! pushes the response back). Format, state machines and caps: `docs/device.md`, "Link
//! layer".
//!
//! * [`serve`] runs a [`Service`] behind a UDP socket or a TCP listener; it calls the
//!   service at most once per (session, request sequence) of one server run (epoch).
//! * [`Client::connect`] opens a session; [`Client::submit`] / [`Client::next`] stream
//!   requests with up to `max_inflight` outstanding, responses strictly in submission
//!   order; [`Client::call`] is one round trip.
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub mod auth;
mod client;
pub mod faults;
pub mod frame;
mod server;

pub use auth::Key;
pub use client::{Client, ClientConfig, ServerLimits};
pub use faults::{Faults, FaultsParseError};
pub use server::{serve, Server, ServerConfig};

/// What runs a request on the server. Called at most once per (session, request
/// sequence) of one server run, from the server's worker threads (several at once).
pub trait Service: Send + Sync + 'static {
    fn call(&self, request: &[u8]) -> Vec<u8>;
}

impl<F: Fn(&[u8]) -> Vec<u8> + Send + Sync + 'static> Service for F {
    fn call(&self, request: &[u8]) -> Vec<u8> {
        self(request)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    Udp,
    Tcp,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Udp => "udp",
            Transport::Tcp => "tcp",
        })
    }
}

impl std::str::FromStr for Transport {
    type Err = String;
    fn from_str(s: &str) -> Result<Transport, String> {
        match s {
            "udp" => Ok(Transport::Udp),
            "tcp" => Ok(Transport::Tcp),
            _ => Err(format!("unknown transport `{s}` (udp or tcp)")),
        }
    }
}

/// The server's caps (`docs/device.md`, "Link layer": what each bounds and what happens
/// past it).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest request and largest response, in bytes.
    pub max_message: usize,
    /// Sessions held at once; a hello past it evicts the least recently active session if
    /// that one has been idle for `session_min_idle`, else it is answered Busy.
    pub max_sessions: usize,
    /// Bytes of requests received and not yet handed to the service, all sessions
    /// together: a message's whole length is reserved when its first fragment arrives
    /// and given back when a worker takes it. A first fragment that would pass the cap is
    /// dropped (counted in `over_cap`; the client sends it again later), so admitted
    /// messages can always complete.
    pub max_reassembly_bytes: usize,
    /// Bytes of responses in the result caches, all sessions together; while they are
    /// over this, new requests are dropped (counted in `over_cap`) until clients ack.
    pub max_result_bytes: usize,
    /// Requests a session may have in flight, i.e. result-cache entries per session (the
    /// session's window: sequences at or past `low + result_cache` are dropped).
    pub result_cache: usize,
    /// A session with no traffic for this long is evicted.
    pub session_idle: Duration,
    /// How long the least recently active session must have been quiet before a new
    /// session may evict it.
    pub session_min_idle: Duration,
    /// A partly received request with no new fragment for this long is discarded.
    pub reassembly_timeout: Duration,
    /// Largest fragment payload accepted and sent over UDP (the datagram is 72 bytes more
    /// with a MAC); TCP frames carry up to 65535.
    pub max_chunk: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_message: 16 << 20,
            max_sessions: 1024,
            max_reassembly_bytes: 64 << 20,
            max_result_bytes: 256 << 20,
            result_cache: 256,
            session_idle: Duration::from_secs(60),
            session_min_idle: Duration::from_secs(2),
            reassembly_timeout: Duration::from_secs(10),
            max_chunk: 1400,
        }
    }
}

/// Counters of one server or client. Drop reasons are counted where the frame is seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub frames_in: u64,
    pub frames_out: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub dropped_bad_crc: u64,
    pub dropped_bad_mac: u64,
    pub dropped_malformed: u64,
    /// Duplicates and replays: fragments already held, requests already run or acked,
    /// sequences below the session's low mark.
    pub dropped_duplicate: u64,
    /// Frames naming another epoch (answered Stale by a server).
    pub dropped_stale: u64,
    /// Frames of sessions the server does not hold (answered UnknownSession).
    pub dropped_unknown_session: u64,
    /// Requests longer than `max_message` (answered with an error), TCP frames longer
    /// than the largest frame (connection closed).
    pub dropped_too_large: u64,
    /// Over a cap: reassembly bytes, sessions (answered Busy), a session's window, TCP
    /// connections.
    pub dropped_over_cap: u64,
    /// Server: service calls made. Client: responses received whole.
    pub requests: u64,
    /// Fragments or polls sent again after a timeout or a selective ack.
    pub retransmits: u64,
    /// Server: sessions held now. Client: 1 while a session is open.
    pub sessions: u64,
    pub sessions_evicted: u64,
    /// Bytes reserved by partly received messages now, and the most ever at once.
    pub reassembly_bytes: u64,
    pub reassembly_bytes_peak: u64,
    /// Bytes of cached responses now (server).
    pub result_bytes: u64,
    /// Client: server restarts seen (epoch changes).
    pub restarts: u64,
    /// Faults injected by this end: dropped, corrupted, duplicated, reordered.
    pub faults_injected: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub frames_in: AtomicU64,
    pub frames_out: AtomicU64,
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    pub bad_crc: AtomicU64,
    pub bad_mac: AtomicU64,
    pub malformed: AtomicU64,
    pub duplicate: AtomicU64,
    pub stale: AtomicU64,
    pub unknown_session: AtomicU64,
    pub too_large: AtomicU64,
    pub over_cap: AtomicU64,
    pub requests: AtomicU64,
    pub retransmits: AtomicU64,
    pub sessions: AtomicU64,
    pub sessions_evicted: AtomicU64,
    pub reassembly_bytes: AtomicU64,
    pub reassembly_peak: AtomicU64,
    pub result_bytes: AtomicU64,
    pub restarts: AtomicU64,
    pub faults: AtomicU64,
}

pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    pub fn decode_error(&self, e: frame::DecodeError) {
        match e {
            frame::DecodeError::BadCrc => bump(&self.bad_crc),
            frame::DecodeError::BadMac => bump(&self.bad_mac),
            frame::DecodeError::Malformed(_) => bump(&self.malformed),
        }
    }
    pub fn snapshot(&self) -> LinkStats {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        LinkStats {
            frames_in: g(&self.frames_in),
            frames_out: g(&self.frames_out),
            bytes_in: g(&self.bytes_in),
            bytes_out: g(&self.bytes_out),
            dropped_bad_crc: g(&self.bad_crc),
            dropped_bad_mac: g(&self.bad_mac),
            dropped_malformed: g(&self.malformed),
            dropped_duplicate: g(&self.duplicate),
            dropped_stale: g(&self.stale),
            dropped_unknown_session: g(&self.unknown_session),
            dropped_too_large: g(&self.too_large),
            dropped_over_cap: g(&self.over_cap),
            requests: g(&self.requests),
            retransmits: g(&self.retransmits),
            sessions: g(&self.sessions),
            sessions_evicted: g(&self.sessions_evicted),
            reassembly_bytes: g(&self.reassembly_bytes),
            reassembly_bytes_peak: g(&self.reassembly_peak),
            result_bytes: g(&self.result_bytes),
            restarts: g(&self.restarts),
            faults_injected: g(&self.faults),
        }
    }
}

/// Why a request or the link failed. Display says what failed and where.
#[derive(Debug)]
pub enum LinkError {
    /// No response to request `seq` from `peer` within the total timeout `after`.
    Timeout { seq: u64, after: Duration, peer: String },
    /// The server restarted (new epoch) while `seq` was in flight and the client was told
    /// not to retry (`retry_on_restart = false`); it may or may not have run.
    ServerRestarted { seq: u64, peer: String },
    /// The server no longer held the session (evicted after idling) while `seq` was in
    /// flight, and the client was told not to retry; it may or may not have run.
    SessionLost { seq: u64, peer: String },
    /// A request (or a response) longer than the largest message the other end takes.
    TooLarge { len: usize, max: usize },
    /// The server's session table stayed full of active sessions during the handshake.
    Busy { peer: String },
    /// The server refused request `seq` (e.g. its response was too large).
    Remote { seq: u64, message: String },
    /// `next()` with no request outstanding.
    NothingPending,
    Closed,
    Io(io::Error),
    Protocol(String),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Timeout { seq, after, peer } if *seq == 0 => {
                write!(f, "link: no answer from {peer} to the handshake within {:.1}s (is the server running?)", after.as_secs_f64())
            }
            LinkError::Timeout { seq, after, peer } => write!(
                f,
                "link: request {seq} to {peer} got no response within {:.1}s (server down or unreachable?)",
                after.as_secs_f64()
            ),
            LinkError::ServerRestarted { seq, peer } => write!(
                f,
                "link: server {peer} restarted while request {seq} was in flight (not retried; it may or may not have run)"
            ),
            LinkError::SessionLost { seq, peer } => write!(
                f,
                "link: server {peer} dropped this session while request {seq} was in flight (not retried; it may or may not have run)"
            ),
            LinkError::TooLarge { len, max } => write!(f, "link: message of {len} bytes is larger than the {max}-byte maximum"),
            LinkError::Busy { peer } => write!(f, "link: server {peer} has no free session (all busy)"),
            LinkError::Remote { seq, message } => write!(f, "link: server refused request {seq}: {message}"),
            LinkError::NothingPending => f.write_str("link: next() with no request outstanding"),
            LinkError::Closed => f.write_str("link: client closed"),
            LinkError::Io(e) => write!(f, "link: {e}"),
            LinkError::Protocol(m) => write!(f, "link: protocol error: {m}"),
        }
    }
}

impl std::error::Error for LinkError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LinkError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for LinkError {
    fn from(e: io::Error) -> LinkError {
        LinkError::Io(e)
    }
}

/// Sets large socket buffers (best effort: the kernel caps them).
pub(crate) fn big_buffers<S: std::os::fd::AsFd>(s: &S) {
    let r = socket2::SockRef::from(s);
    let _ = r.set_recv_buffer_size(4 << 20);
    let _ = r.set_send_buffer_size(4 << 20);
}

pub(crate) fn random_u64() -> u64 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut h = RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    h.write_u64(std::process::id() as u64);
    let v = h.finish();
    if v == 0 { 1 } else { v }
}

/// Reads `udp://HOST:PORT` or `tcp://HOST:PORT` (HOST a name or an address, IPv6 in
/// brackets) into the transport and the first address HOST resolves to.
pub fn parse_endpoint(uri: &str) -> Result<(Transport, SocketAddr), String> {
    use std::net::ToSocketAddrs;
    let (scheme, rest) = uri.split_once("://").ok_or_else(|| format!("`{uri}` is not udp://HOST:PORT or tcp://HOST:PORT"))?;
    let t: Transport = scheme.parse().map_err(|e| format!("`{uri}`: {e}"))?;
    let rest = rest.trim_end_matches('/');
    let addr = rest
        .to_socket_addrs()
        .map_err(|e| format!("`{uri}`: cannot resolve `{rest}`: {e}"))?
        .next()
        .ok_or_else(|| format!("`{uri}`: `{rest}` resolves to no address"))?;
    Ok((t, addr))
}

pub(crate) fn peer_name(t: Transport, a: SocketAddr) -> String {
    format!("{t}://{a}")
}
