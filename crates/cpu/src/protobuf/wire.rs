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
    if pos < end {
        let b = buf[pos];
        if b < 0x80 {
            return Ok((b as u64, pos + 1));
        }
        // Ten bytes of the buffer past `pos`, though maybe not before `end` (the last
        // values of a message or a packed run): read the word, then check its end.
        if buf.len() - pos >= 10 {
            return match read_varint_word(buf, pos) {
                Ok((v, q)) if q <= end => Ok((v, q)),
                Err(ReadErr::TooLong) if end - pos >= 10 => Err(ReadErr::TooLong),
                _ => Err(ReadErr::Truncated),
            };
        }
    }
    read_varint_slow(buf, pos, end)
}

/// The 7-bit groups of the eight bytes of `w` (continuation bits ignored) packed into
/// 56 bits: three shift-and-merge steps instead of a loop.
#[inline(always)]
fn pack_groups(w: u64) -> u64 {
    let x = w & 0x7f7f_7f7f_7f7f_7f7f;
    let x = ((x & 0x7f00_7f00_7f00_7f00) >> 1) | (x & 0x007f_007f_007f_007f);
    let x = ((x & 0x3fff_0000_3fff_0000) >> 2) | (x & 0x0000_3fff_0000_3fff);
    ((x & 0x0fff_ffff_0000_0000) >> 4) | (x & 0x0000_0000_0fff_ffff)
}

/// A varint of two or more bytes with at least ten bytes before `end`: one 8-byte load,
/// its end found from the continuation bits, no loop and no branch per byte (the ids and
/// negative numbers of real traffic are 9- and 10-byte varints).
#[inline(always)]
fn read_varint_word(buf: &[u8], pos: usize) -> Result<(u64, usize), ReadErr> {
    let w = u64::from_le_bytes(buf[pos..pos + 8].try_into().unwrap());
    let stops = !w & 0x8080_8080_8080_8080;
    if stops != 0 {
        // Keep the bytes up to the first one without a continuation bit.
        let len = (stops.trailing_zeros() as usize + 1) / 8;
        return Ok((pack_groups(w & (stops ^ (stops - 1))), pos + len));
    }
    let low = pack_groups(w);
    let b8 = buf[pos + 8];
    if b8 < 0x80 {
        return Ok((low | (b8 as u64) << 56, pos + 9));
    }
    let b9 = buf[pos + 9];
    if b9 < 0x80 {
        return Ok((low | ((b8 & 0x7f) as u64) << 56 | (b9 as u64) << 63, pos + 10));
    }
    Err(ReadErr::TooLong)
}

/// Near the end of the input: byte by byte.
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
        // Field numbers 16 to 2047.
        if pos + 1 < end && buf[pos + 1] < 0x80 {
            return Ok(((b & 0x7f) as u32 | (buf[pos + 1] as u32) << 7, pos + 2));
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

    /// The byte-by-byte definition `read_varint` and `read_tag` must agree with.
    fn varint_bytewise(buf: &[u8], pos: usize, end: usize, max: usize) -> Result<(u64, usize), ReadErr> {
        let mut v = 0u64;
        for i in 0..max {
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

    #[test]
    fn word_varints_agree_with_the_bytewise_reading_at_every_length_and_end() {
        // Every length 1-11, every end from the start to past it, with continuation and
        // high bits of every shape, and bytes after the varint that must not be read.
        for len in 1..=11usize {
            for fill in [0x80u8, 0xff, 0xaa, 0xd5] {
                for last in [0x00u8, 0x01, 0x7f, 0x40] {
                    let mut b = vec![fill; len - 1];
                    b.push(if len == 11 { fill } else { last });
                    b.extend_from_slice(&[0x01, 0x80, 0x7f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0]);
                    for end in 0..=b.len() {
                        assert_eq!(read_varint(&b, 0, end), varint_bytewise(&b, 0, end, 10), "{b:02x?} end {end}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn varints_and_tags_agree_with_the_bytewise_reading(buf in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..32), pos in 0usize..32, cut in 0usize..32) {
            // Bytes mostly with continuation bits, so long varints are common.
            let buf: Vec<u8> = buf.iter().map(|&x| if x % 3 == 0 { x & 0x7f } else { x | 0x80 }).collect();
            let end = buf.len().saturating_sub(cut);
            let pos = pos.min(end);
            proptest::prop_assert_eq!(read_varint(&buf, pos, end), varint_bytewise(&buf, pos, end, 10));
            let tag = varint_bytewise(&buf, pos, end, 5).and_then(|(v, p)| if v > u32::MAX as u64 { Err(ReadErr::TooLong) } else { Ok((v as u32, p)) });
            proptest::prop_assert_eq!(read_tag(&buf, pos, end), tag);
        }
    }
}
