//! The frame codec: encode/decode round trips, and decode never panics on any bytes.
use heapwire_device::link::frame::{self, DecodeError, FragSet, Header, Kind, WireLimits, HEADER_LEN};
use heapwire_device::link::Key;
use proptest::prelude::*;

fn kind() -> impl Strategy<Value = Kind> {
    (1u8..=11).prop_map(|k| Kind::from_u8(k).unwrap())
}

/// A consistent header and payload: fragments carry exactly their piece of the message.
fn frame_parts() -> impl Strategy<Value = (Header, Vec<u8>)> {
    (kind(), any::<u8>(), 1u16..=2000, any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), 0u32..20_000, any::<u32>(), any::<u64>())
        .prop_flat_map(|(kind, flags, chunk, session, epoch, seq, low, total, idx, salt)| {
            let flags = flags & !frame::FLAG_MAC;
            let (index, total, len) = if kind.is_fragment() {
                let n = frame::fragment_count(total as usize, chunk as usize);
                let index = idx as usize % n;
                (index as u32, total, frame::fragment_range(total as usize, chunk as usize, index).len())
            } else {
                (idx, total, (salt % 300) as usize)
            };
            let h = Header { kind, flags, chunk, session, epoch, seq, low, index, total };
            (Just(h), proptest::collection::vec(any::<u8>(), len))
        })
}

fn key() -> Key {
    Key::from_bytes(*b"proptest key, 24 bytes!!").unwrap()
}

proptest! {
    #[test]
    fn roundtrip((h, payload) in frame_parts(), keyed in any::<bool>()) {
        let k = key();
        let key = keyed.then_some(&k);
        let bytes = frame::encode_vec(&h, &payload, key);
        prop_assert_eq!(bytes.len(), HEADER_LEN + payload.len() + if keyed { 16 } else { 0 });
        let (h2, p2) = frame::decode(&bytes, key).unwrap();
        let mut expect = h;
        if keyed { expect.flags |= frame::FLAG_MAC; }
        prop_assert_eq!(h2, expect);
        prop_assert_eq!(p2, &payload[..]);
        // A keyed receiver refuses the unkeyed frame; any single bit flip is refused.
        if !keyed {
            prop_assert_eq!(frame::decode(&bytes, Some(&k)).unwrap_err(), DecodeError::BadMac);
        }
    }

    #[test]
    fn any_bit_flip_is_refused((h, payload) in frame_parts(), keyed in any::<bool>(), at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let k = key();
        let key = keyed.then_some(&k);
        let mut bytes = frame::encode_vec(&h, &payload, key);
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        prop_assert!(frame::decode(&bytes, key).is_err(), "flip of bit {} of byte {} accepted", bit, i);
    }

    #[test]
    fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2000), keyed in any::<bool>()) {
        let k = key();
        let _ = frame::decode(&bytes, keyed.then_some(&k));
        let _ = FragSet::decode(&bytes, bytes.len() * 3);
        let _ = WireLimits::decode(&bytes);
        let _ = frame::decode_error(&bytes);
    }

    #[test]
    fn decode_of_a_mangled_frame_never_panics((h, payload) in frame_parts(), cut in any::<prop::sample::Index>(), junk in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut bytes = frame::encode_vec(&h, &payload, None);
        let c = cut.index(bytes.len() + 1);
        bytes.truncate(c);
        bytes.extend_from_slice(&junk);
        let _ = frame::decode(&bytes, None);
        let _ = frame::decode(&bytes, Some(&key()));
    }

    #[test]
    fn fragset_roundtrip(n in 0usize..5000, marks in proptest::collection::vec(any::<prop::sample::Index>(), 0..400), room in 8usize..1400) {
        let mut s = FragSet::new(n);
        if n > 0 {
            for m in &marks { s.insert(m.index(n)); }
        }
        let wire = s.encode(room);
        prop_assert!(wire.len() <= room.max(4));
        let back = FragSet::decode(&wire, n).unwrap();
        // Everything the decoded set claims is really there; what fit in the bitmap is exact.
        for i in 0..n {
            if back.has(i) { prop_assert!(s.has(i)); }
        }
        if wire.len() < room - 1 {
            prop_assert_eq!(back, s);
        }
    }
}

#[test]
fn fuzz_regressions_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/link_frame");
    let Ok(rd) = std::fs::read_dir(&dir) else { return };
    for e in rd {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        let _ = frame::decode(&bytes, None);
        let _ = frame::decode(&bytes, Some(&key()));
    }
}
