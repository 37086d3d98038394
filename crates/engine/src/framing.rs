//! Varint-delimited streams (protobuf's `writeDelimitedTo`): each message preceded by its
//! length as a varint. Every command with `--delimited`, the device runtime and the pool
//! frame messages this way.

use std::io::{BufRead, Read};

use crate::{Error, RejectKind, Rejection};

/// Bytes the varint encoding of `v` takes (1-10).
#[inline]
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends the varint encoding of `v`.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `msg` preceded by its length.
pub fn put_delimited(out: &mut Vec<u8>, msg: &[u8]) {
    put_varint(out, msg.len() as u64);
    out.extend_from_slice(msg);
}

/// Largest single message a [`Delimited`] reader accepts by default.
pub const MAX_MESSAGE_BYTES: u64 = 1 << 31;

/// One message of a stream: its bytes, where they start in the stream, its index.
#[derive(Debug)]
pub struct Frame<'a> {
    pub bytes: &'a [u8],
    pub start: u64,
    pub index: u64,
}

/// Reads the messages of a delimited stream one at a time, holding one in memory.
/// A length prefix that is cut off or too long, a claimed length over the limit, or a
/// message cut off by the end of the stream is a [`Rejection`] naming the byte and the
/// message index; read errors are [`Error::Engine`].
pub struct Delimited<R> {
    input: R,
    at: u64,
    index: u64,
    max_message: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> Delimited<R> {
    pub fn new(input: R) -> Self {
        Delimited { input, at: 0, index: 0, max_message: MAX_MESSAGE_BYTES, buf: Vec::new() }
    }

    /// Rejects messages longer than `bytes` (a claimed length alone never allocates it).
    pub fn max_message(mut self, bytes: u64) -> Self {
        self.max_message = bytes;
        self
    }

    fn io(e: std::io::Error) -> Error {
        Error::Engine(format!("i/o: {e}"))
    }

    /// The length prefix at `self.at`; `None` at a clean end of the stream.
    fn read_len(&mut self) -> Result<Option<u64>, Error> {
        let mut v = 0u64;
        for i in 0..10 {
            let mut b = [0u8; 1];
            if self.input.read(&mut b).map_err(Self::io)? == 0 {
                return if i == 0 {
                    Ok(None)
                } else {
                    Err(Rejection::new(RejectKind::Truncated, self.at + i).within(0, self.index).into())
                };
            }
            v |= ((b[0] & 0x7f) as u64) << (7 * i);
            if b[0] < 0x80 {
                return Ok(Some(v));
            }
        }
        Err(Rejection::new(RejectKind::VarintTooLong, self.at).within(0, self.index).into())
    }

    /// The next message, or `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, Error> {
        let Some(len) = self.read_len()? else { return Ok(None) };
        let start = self.at + varint_len(len) as u64;
        if len > self.max_message {
            return Err(Rejection::new(RejectKind::LengthPastEnd, self.at).within(0, self.index).into());
        }
        self.buf.clear();
        // `take` grows the buffer only as bytes arrive: a huge claimed length costs nothing.
        let got = (&mut self.input).take(len).read_to_end(&mut self.buf).map_err(Self::io)? as u64;
        if got < len {
            return Err(Rejection::new(RejectKind::Truncated, start + got).within(0, self.index).into());
        }
        let index = self.index;
        self.at = start + len;
        self.index += 1;
        Ok(Some(Frame { bytes: &self.buf, start, index }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_lengths() {
        for (v, n) in [(0u64, 1), (127, 1), (128, 2), (16383, 2), (16384, 3), (u64::MAX, 10)] {
            assert_eq!(varint_len(v), n, "{v}");
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), n);
        }
    }

    fn frames(bytes: &[u8]) -> Result<Vec<(Vec<u8>, u64, u64)>, Error> {
        let mut d = Delimited::new(bytes);
        let mut v = Vec::new();
        while let Some(f) = d.next_frame()? {
            v.push((f.bytes.to_vec(), f.start, f.index));
        }
        Ok(v)
    }

    #[test]
    fn reads_messages_with_offsets() {
        let mut s = Vec::new();
        put_delimited(&mut s, b"abc");
        put_delimited(&mut s, b"");
        put_delimited(&mut s, &[7u8; 200]);
        let f = frames(&s).unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!((f[0].1, f[0].2), (1, 0));
        assert_eq!((f[1].1, f[1].2), (5, 1));
        assert_eq!((f[2].1, f[2].2, f[2].0.len()), (7, 2, 200));
        assert!(frames(&[]).unwrap().is_empty());
    }

    #[test]
    fn bad_streams_are_rejected_where_they_go_wrong() {
        let rej = |b: &[u8]| match frames(b) {
            Err(Error::Rejected(r)) => (r.kind, r.offset, r.message),
            other => panic!("{other:?}"),
        };
        // message 1's body is cut off after 1 of 3 bytes
        assert_eq!(rej(&[1, 9, 3, 9]), (RejectKind::Truncated, 4, Some(1)));
        // a length prefix cut off
        assert_eq!(rej(&[0, 0x80]), (RejectKind::Truncated, 2, Some(1)));
        // an 11-byte length prefix
        assert_eq!(rej(&[0xff; 11]), (RejectKind::VarintTooLong, 0, Some(0)));
        // a claimed length over the limit allocates nothing
        let mut d = Delimited::new(&[0xff, 0xff, 0xff, 0xff, 0x0f][..]).max_message(1 << 20);
        assert!(matches!(d.next_frame(), Err(Error::Rejected(Rejection { kind: RejectKind::LengthPastEnd, offset: 0, .. }))));
    }
}
