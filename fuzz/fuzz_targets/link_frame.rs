//! The link layer's datagram/frame parser and the server state machine behind it. The
//! raw input is decoded (with and without a key): never a panic, and an unkeyed frame
//! that decodes re-encodes to the same bytes. Then the input is read as a script of
//! well-formed frames (valid CRC, the server's epoch most of the time) fed to a live
//! server's state machine: no panic, and its reassembly bytes and sessions stay within
//! their caps.
#![cfg_attr(fuzzing, no_main)]
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use heapwire_device::link::frame::{self, Header, Kind, FLAG_MAC};
use heapwire_device::link::{serve, Key, Limits, Server, ServerConfig, Transport};

const CAP: usize = 64 << 10;

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let limits = Limits {
            max_message: 32 << 10,
            max_sessions: 4,
            max_reassembly_bytes: CAP,
            result_cache: 8,
            session_min_idle: Duration::ZERO,
            reassembly_timeout: Duration::from_secs(1),
            ..Default::default()
        };
        let echo = |r: &[u8]| r.iter().rev().copied().collect::<Vec<u8>>();
        serve(Transport::Udp, ServerConfig { limits, workers: 1, ..Default::default() }, Arc::new(echo)).unwrap()
    })
}

fn key() -> &'static Key {
    static K: OnceLock<Key> = OnceLock::new();
    K.get_or_init(|| Key::from_bytes(*b"fuzzing key, 16+ bytes").unwrap())
}

/// The target's check of one input (also replayed by `cargo test`, see
/// crates/cli/tests/fuzz_regressions.rs).
pub fn check(data: &[u8]) {
    let _ = frame::decode(data, Some(key()));
    if let Ok((h, p)) = frame::decode(data, None) {
        if h.flags & FLAG_MAC == 0 {
            assert_eq!(frame::encode_vec(&h, p, None), data, "decode/encode round trip");
        }
    }
    let srv = server();
    let from: SocketAddr = ([127, 0, 0, 1], 9).into();
    srv.inject(from, data);
    // Script: 12-byte steps of kind, session, seq, low, index, total, chunk, flags.
    for step in data.chunks(12) {
        if step.len() < 12 {
            break;
        }
        let kind = Kind::from_u8(1 + step[0] % 11).unwrap();
        let chunk = 1 + (u16::from_le_bytes([step[9], step[10]]) % 1500);
        let total = u16::from_le_bytes([step[6], step[7]]) as u32 % (40 << 10);
        let mut h = Header {
            kind,
            flags: step[11] & 2,
            chunk,
            session: 1 + (step[1] % 6) as u64,
            epoch: if step[11] & 0x80 != 0 { 7 } else { srv.epoch() },
            seq: (step[2] % 24) as u64,
            low: (step[3] % 24) as u64,
            index: step[4] as u32,
            total,
        };
        let mut payload = vec![step[5]; (step[8] as usize) * 4];
        if kind.is_fragment() {
            let n = frame::fragment_count(total as usize, chunk as usize);
            h.index %= n as u32;
            payload.resize(frame::fragment_range(total as usize, chunk as usize, h.index as usize).len(), step[5]);
        }
        srv.inject(from, &frame::encode_vec(&h, &payload, None));
        let s = srv.stats();
        assert!(s.reassembly_bytes <= CAP as u64 && s.sessions <= 4, "{s:?}");
    }
}

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
