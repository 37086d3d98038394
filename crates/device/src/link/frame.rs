//! The datagram/frame format (`docs/device.md`, "Link layer"): a 56-byte header, the
//! payload, and a 16-byte MAC when the session is keyed. Everything little-endian.
//!
//! ```text
//!  0  2  magic "HW"            24  8  seq (request sequence)
//!  2  1  version (1)           32  8  low (client: lowest seq it still waits for)
//!  3  1  kind                  40  4  index (fragment index)
//!  4  1  flags                 44  4  total (message length in bytes)
//!  5  1  reserved (0)          48  4  len (payload bytes in this datagram)
//!  6  2  chunk (fragment size) 52  4  CRC-32C of bytes 0..52 and the payload
//!  8  8  session               56  len payload, then the MAC if flags bit 0
//! 16  8  epoch
//! ```
use super::auth::{Key, MAC_LEN};

pub const MAGIC: [u8; 2] = *b"HW";
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 56;
/// Flag bit 0: a MAC follows the payload.
pub const FLAG_MAC: u8 = 1;
/// Flag bit 1 (ReqAck): the whole request is here (running or done); nothing to resend.
pub const FLAG_COMPLETE: u8 = 2;
/// Largest fragment payload the format allows (`chunk` is 16 bits).
pub const MAX_CHUNK: usize = u16::MAX as usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// client → server: open or refresh the session (seq = the client's next seq).
    Hello = 1,
    /// server → client: the epoch (header) and the server's limits (payload).
    HelloAck = 2,
    /// client → server: one fragment of request `seq`.
    Request = 3,
    /// server → client: one fragment of the response to `seq`.
    Response = 4,
    /// server → client: which fragments of request `seq` arrived (bitmap payload), or
    /// FLAG_COMPLETE when all did.
    ReqAck = 5,
    /// client → server: the whole response to `seq` arrived; stop retransmitting it.
    Ack = 6,
    /// client → server: request `seq` has had no answer; payload = bitmap of the response
    /// fragments the client holds. The server resends what is missing or answers ReqAck.
    Poll = 7,
    /// server → client: the frame named an epoch that is not this server's (header epoch =
    /// the current one): the server restarted.
    Stale = 8,
    /// server → client: no such session (evicted after idling); open a new one.
    UnknownSession = 9,
    /// server → client: the session table is full of active sessions; try again later.
    Busy = 10,
    /// server → client: request `seq` is refused (payload: code, two numbers, text).
    Error = 11,
}

impl Kind {
    pub fn from_u8(v: u8) -> Option<Kind> {
        use Kind::*;
        Some(match v {
            1 => Hello,
            2 => HelloAck,
            3 => Request,
            4 => Response,
            5 => ReqAck,
            6 => Ack,
            7 => Poll,
            8 => Stale,
            9 => UnknownSession,
            10 => Busy,
            11 => Error,
            _ => return None,
        })
    }
    /// Kinds that carry a fragment of a message.
    pub fn is_fragment(self) -> bool {
        matches!(self, Kind::Request | Kind::Response)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub flags: u8,
    pub chunk: u16,
    pub session: u64,
    pub epoch: u64,
    pub seq: u64,
    pub low: u64,
    pub index: u32,
    pub total: u32,
}

impl Header {
    pub fn control(kind: Kind, session: u64, epoch: u64, seq: u64) -> Header {
        Header { kind, flags: 0, chunk: 0, session, epoch, seq, low: 0, index: 0, total: 0 }
    }
}

/// Number of fragments of a `total`-byte message cut in `chunk`-byte pieces (at least one:
/// an empty message is one empty fragment).
pub fn fragment_count(total: usize, chunk: usize) -> usize {
    if total == 0 {
        1
    } else {
        total.div_ceil(chunk.max(1))
    }
}

/// Byte range of fragment `index`.
pub fn fragment_range(total: usize, chunk: usize, index: usize) -> std::ops::Range<usize> {
    let start = (index * chunk).min(total);
    start..(start + chunk).min(total)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Not a frame of this protocol, or inconsistent fields (what is wrong).
    Malformed(&'static str),
    BadCrc,
    /// A key is set and the MAC is missing or wrong.
    BadMac,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Malformed(w) => write!(f, "malformed frame: {w}"),
            DecodeError::BadCrc => f.write_str("CRC-32C mismatch"),
            DecodeError::BadMac => f.write_str("missing or wrong MAC"),
        }
    }
}

fn crc_of(head: &[u8], payload: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&head[..52]), payload)
}

/// Appends one encoded frame to `out`. The MAC flag is set iff `key` is given.
pub fn encode(h: &Header, payload: &[u8], key: Option<&Key>, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    out.push(h.kind as u8);
    out.push((h.flags & !FLAG_MAC) | if key.is_some() { FLAG_MAC } else { 0 });
    out.push(0);
    out.extend_from_slice(&h.chunk.to_le_bytes());
    out.extend_from_slice(&h.session.to_le_bytes());
    out.extend_from_slice(&h.epoch.to_le_bytes());
    out.extend_from_slice(&h.seq.to_le_bytes());
    out.extend_from_slice(&h.low.to_le_bytes());
    out.extend_from_slice(&h.index.to_le_bytes());
    out.extend_from_slice(&h.total.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    let crc = crc_of(&out[start..], payload);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(payload);
    if let Some(k) = key {
        let tag = k.tag(&out[start..]);
        out.extend_from_slice(&tag);
    }
}

pub fn encode_vec(h: &Header, payload: &[u8], key: Option<&Key>) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER_LEN + payload.len() + MAC_LEN);
    encode(h, payload, key, &mut v);
    v
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Decodes and checks one frame: length, magic, version, CRC-32C, then the MAC when `key`
/// is given (a keyed receiver drops frames without one), then the fields' consistency.
/// Never panics, whatever the bytes.
pub fn decode<'a>(b: &'a [u8], key: Option<&Key>) -> Result<(Header, &'a [u8]), DecodeError> {
    use DecodeError::*;
    if b.len() < HEADER_LEN {
        return Err(Malformed("shorter than the 56-byte header"));
    }
    if b[0..2] != MAGIC {
        return Err(Malformed("bad magic"));
    }
    if b[2] != VERSION {
        return Err(Malformed("unsupported version"));
    }
    let flags = b[4];
    let len = u32_at(b, 48) as usize;
    let mac = if flags & FLAG_MAC != 0 { MAC_LEN } else { 0 };
    if (b.len() - HEADER_LEN) as u64 != len as u64 + mac as u64 {
        return Err(Malformed("length field disagrees with the frame size"));
    }
    let payload = &b[HEADER_LEN..HEADER_LEN + len];
    if crc_of(b, payload) != u32_at(b, 52) {
        return Err(BadCrc);
    }
    if let Some(k) = key {
        if mac == 0 || !k.verify(&b[..HEADER_LEN + len], &b[HEADER_LEN + len..]) {
            return Err(BadMac);
        }
    }
    let kind = Kind::from_u8(b[3]).ok_or(Malformed("unknown kind"))?;
    if b[5] != 0 {
        return Err(Malformed("reserved byte not zero"));
    }
    let h = Header {
        kind,
        flags,
        chunk: u16_at(b, 6),
        session: u64_at(b, 8),
        epoch: u64_at(b, 16),
        seq: u64_at(b, 24),
        low: u64_at(b, 32),
        index: u32_at(b, 40),
        total: u32_at(b, 44),
    };
    if kind.is_fragment() {
        if h.chunk == 0 {
            return Err(Malformed("fragment with chunk 0"));
        }
        let (total, chunk) = (h.total as usize, h.chunk as usize);
        if h.index as usize >= fragment_count(total, chunk) {
            return Err(Malformed("fragment index past the message"));
        }
        if fragment_range(total, chunk, h.index as usize).len() != len {
            return Err(Malformed("fragment length disagrees with chunk and total"));
        }
    }
    Ok((h, payload))
}

/// A set of fragment indices received, sent as `base u32` + bitmap (bit i of byte i/8,
/// LSB first = fragment base+i); every index below base is received, every index past
/// the bitmap is not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FragSet {
    bits: Vec<u64>,
    count: usize,
    n: usize,
}

impl FragSet {
    pub fn new(n: usize) -> FragSet {
        FragSet { bits: vec![0; n.div_ceil(64)], count: 0, n }
    }
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    pub fn received(&self) -> usize {
        self.count
    }
    pub fn complete(&self) -> bool {
        self.count == self.n
    }
    pub fn has(&self, i: usize) -> bool {
        i < self.n && self.bits[i / 64] >> (i % 64) & 1 == 1
    }
    /// Marks `i`; false when it was already marked (a duplicate) or out of range.
    pub fn insert(&mut self, i: usize) -> bool {
        if i >= self.n || self.has(i) {
            return false;
        }
        self.bits[i / 64] |= 1 << (i % 64);
        self.count += 1;
        true
    }
    pub fn missing(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.n).filter(move |&i| !self.has(i))
    }
    /// Wire form, at most `max_bytes` long (the tail past that reads as not received).
    pub fn encode(&self, max_bytes: usize) -> Vec<u8> {
        let base = (0..self.n).find(|&i| !self.has(i)).unwrap_or(self.n);
        let mut out = (base as u32).to_le_bytes().to_vec();
        let room = max_bytes.saturating_sub(4) * 8;
        let end = self.n.min(base + room);
        let mut byte = 0u8;
        for (k, i) in (base..end).enumerate() {
            if self.has(i) {
                byte |= 1 << (k % 8);
            }
            if k % 8 == 7 {
                out.push(byte);
                byte = 0;
            }
        }
        if (end - base) % 8 != 0 {
            out.push(byte);
        }
        out
    }
    /// Reads the wire form for an `n`-fragment message; None when malformed.
    pub fn decode(b: &[u8], n: usize) -> Option<FragSet> {
        if b.len() < 4 {
            return None;
        }
        let base = u32_at(b, 0) as usize;
        if base > n {
            return None;
        }
        let mut s = FragSet::new(n);
        for i in 0..base {
            s.insert(i);
        }
        for (k, byte) in b[4..].iter().enumerate() {
            for bit in 0..8 {
                if byte >> bit & 1 == 1 {
                    s.insert(base + k * 8 + bit);
                }
            }
        }
        Some(s)
    }
}

/// The server's limits as the HelloAck payload carries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireLimits {
    pub max_message: u64,
    /// Requests a session may have in flight (= the result cache entries per session).
    pub window: u32,
    /// Largest fragment payload the server accepts.
    pub max_chunk: u16,
}

impl WireLimits {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(14);
        v.extend_from_slice(&self.max_message.to_le_bytes());
        v.extend_from_slice(&self.window.to_le_bytes());
        v.extend_from_slice(&self.max_chunk.to_le_bytes());
        v
    }
    pub fn decode(b: &[u8]) -> Option<WireLimits> {
        if b.len() < 14 {
            return None;
        }
        Some(WireLimits { max_message: u64_at(b, 0), window: u32_at(b, 8), max_chunk: u16_at(b, 12) })
    }
}

/// Error frame codes.
pub const ERR_TOO_LARGE: u8 = 1;
pub const ERR_RESPONSE_TOO_LARGE: u8 = 2;
pub const ERR_SERVICE: u8 = 3;

pub fn encode_error(code: u8, a: u64, b: u64, text: &str) -> Vec<u8> {
    let mut v = vec![code];
    v.extend_from_slice(&a.to_le_bytes());
    v.extend_from_slice(&b.to_le_bytes());
    v.extend_from_slice(&text.as_bytes()[..text.len().min(512)]);
    v
}

pub fn decode_error(p: &[u8]) -> Option<(u8, u64, u64, String)> {
    if p.len() < 17 {
        return None;
    }
    Some((p[0], u64_at(p, 1), u64_at(p, 9), String::from_utf8_lossy(&p[17..]).into_owned()))
}
