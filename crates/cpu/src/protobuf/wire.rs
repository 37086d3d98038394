//! Protobuf wire primitives shared by decode and encode.

/// Why a read failed; the caller adds the offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadErr {
    Truncated,
    TooLong,
}

/// Reads a base-128 varint at `pos`. At most 10 bytes; bits past 64 in the tenth byte
/// are dropped, as the official parsers do.
#[inline(always)]
pub(crate) fn read_varint(buf: &[u8], pos: usize, end: usize) -> Result<(u64, usize), ReadErr> {
    if pos + 1 < end {
        let b = buf[pos];
        if b < 0x80 {
            return Ok((b as u64, pos + 1));
        }
        let c = buf[pos + 1];
        if c < 0x80 {
            return Ok(((b & 0x7f) as u64 | (c as u64) << 7, pos + 2));
        }
    } else if pos < end && buf[pos] < 0x80 {
        return Ok((buf[pos] as u64, pos + 1));
    }
    read_varint_slow(buf, pos, end)
}

#[cold]
fn read_varint_slow(buf: &[u8], pos: usize, end: usize) -> Result<(u64, usize), ReadErr> {
    let mut v = 0u64;
    for i in 0..10 {
        if pos + i >= end {
            return Err(ReadErr::Truncated);
        }
        let b = buf[pos + i];
        v |= ((b & 0x7f) as u64).wrapping_shl(7 * i as u32);
        if b < 0x80 {
            return Ok((v, pos + i + 1));
        }
    }
    Err(ReadErr::TooLong)
}

/// Tags are varints of at most 5 bytes whose value fits 32 bits.
#[inline(always)]
pub(crate) fn read_tag(buf: &[u8], pos: usize, end: usize) -> Result<(u32, usize), ReadErr> {
    if pos < end {
        let b = buf[pos];
        if b < 0x80 {
            return Ok((b as u32, pos + 1));
        }
    }
    let mut v = 0u64;
    for i in 0..5 {
        if pos + i >= end {
            return Err(ReadErr::Truncated);
        }
        let b = buf[pos + i];
        v |= ((b & 0x7f) as u64) << (7 * i);
        if b < 0x80 {
            return if v > u32::MAX as u64 { Err(ReadErr::TooLong) } else { Ok((v as u32, pos + i + 1)) };
        }
    }
    Err(ReadErr::TooLong)
}

pub use heapwire_engine::framing::{put_varint, varint_len};

#[inline(always)]
pub fn zigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

#[inline(always)]
pub fn zigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

pub fn enc_zigzag32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

pub fn enc_zigzag64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_and_limits() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX, 1 << 63] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), varint_len(v));
            assert_eq!(read_varint(&b, 0, b.len()), Ok((v, b.len())));
            assert_eq!(read_varint(&b, 0, b.len() - 1), Err(ReadErr::Truncated));
        }
        let eleven = [0xffu8; 10].iter().copied().chain([0x01]).collect::<Vec<_>>();
        assert_eq!(read_varint(&eleven, 0, 11), Err(ReadErr::TooLong));
        // A tenth byte with bits beyond 64 is accepted; the bits are dropped.
        let ten = [0xffu8; 9].iter().copied().chain([0x7f]).collect::<Vec<_>>();
        assert_eq!(read_varint(&ten, 0, 10), Ok((u64::MAX, 10)));
        assert_eq!(read_tag(&[0x88, 0x80, 0x80, 0x80, 0x00], 0, 5), Ok((8, 5)));
        assert_eq!(read_tag(&[0x88, 0x80, 0x80, 0x80, 0x80, 0x00], 0, 6), Err(ReadErr::TooLong));
        assert_eq!(read_tag(&[0xff, 0xff, 0xff, 0xff, 0x1f], 0, 5), Err(ReadErr::TooLong));
        assert_eq!(zigzag32(enc_zigzag32(i32::MIN)), i32::MIN);
        assert_eq!(zigzag64(enc_zigzag64(-3)), -3);
    }
}
