//! The link layer end to end: faults, restarts, bad input, floods, keys, limits.
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use heapwire_device::link::frame::{self, Header, Kind};
use heapwire_device::link::{
    serve, Client, ClientConfig, Faults, Key, LinkError, Limits, Server, ServerConfig, Service, Transport,
};

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ x as u64).wrapping_mul(0x100_0000_01b3))
}

/// Answers hash(request) ++ request reversed, and counts calls per request id (the first
/// 8 bytes of each request).
struct Echo {
    calls: Vec<AtomicU32>,
    total: AtomicU64,
}

impl Echo {
    fn new(n: usize) -> Arc<Echo> {
        Arc::new(Echo { calls: (0..n).map(|_| AtomicU32::new(0)).collect(), total: AtomicU64::new(0) })
    }
}

impl Service for Echo {
    fn call(&self, req: &[u8]) -> Vec<u8> {
        self.total.fetch_add(1, Ordering::Relaxed);
        if req.len() >= 8 {
            let id = u64::from_le_bytes(req[..8].try_into().unwrap()) as usize;
            if let Some(c) = self.calls.get(id) {
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
        expected(req)
    }
}

fn expected(req: &[u8]) -> Vec<u8> {
    let mut v = fnv(req).to_le_bytes().to_vec();
    v.extend(req.iter().rev());
    v
}

fn request(id: u64, len: usize) -> Vec<u8> {
    let mut v = id.to_le_bytes().to_vec();
    let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while v.len() < len.max(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x as u8);
    }
    v
}

fn faults(seed: u64) -> Faults {
    Faults { seed, ..("drop=0.1,dup=0.05,reorder=0.05,corrupt=0.01".parse().unwrap()) }
}

fn fast_client() -> ClientConfig {
    ClientConfig { rto: Duration::from_millis(15), max_rto: Duration::from_millis(200), ..Default::default() }
}

fn fast_server() -> ServerConfig {
    ServerConfig { rto: Duration::from_millis(30), max_rto: Duration::from_millis(300), workers: 2, ..Default::default() }
}

/// Streams `sizes.len()` requests with up to `inflight` outstanding and checks every
/// response, in order.
fn stream(client: &Client, sizes: &[usize], inflight: usize) {
    let mut sent = 0usize;
    let mut got = 0usize;
    while got < sizes.len() {
        while sent < sizes.len() && client.outstanding() < inflight {
            let seq = client.submit(request(sent as u64, sizes[sent])).unwrap();
            assert_eq!(seq, sent as u64 + 1);
            sent += 1;
        }
        let (seq, resp) = client.next().unwrap_or_else(|e| panic!("request {got}: {e}"));
        assert_eq!(seq, got as u64 + 1, "in order");
        assert_eq!(resp, expected(&request(got as u64, sizes[got])), "response to request {got}");
        got += 1;
    }
}

#[test]
fn udp_100k_requests_through_faults_each_run_once() {
    let n: usize = std::env::var("LINK_N").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let nofault = std::env::var("LINK_NOFAULT").is_ok();
    let faults = |s| if nofault { Faults::none() } else { faults(s) };
    let echo = Echo::new(n);
    let server = serve(
        Transport::Udp,
        ServerConfig { faults: faults(1), ..fast_server() },
        echo.clone(),
    )
    .unwrap();
    let client = Client::connect(
        Transport::Udp,
        server.local_addr(),
        ClientConfig { faults: faults(2), max_inflight: 256, ..fast_client() },
    )
    .unwrap();
    // Mostly tens to hundreds of bytes; one in a thousand a few KiB to 64 KiB; a handful
    // of large ones up to 1 MiB.
    let mut sizes: Vec<usize> = (0..n).map(|i| 10 + (i * 7919) % 300).collect();
    for i in (500..n).step_by(1000) {
        sizes[i] = 2048 + (i * 31) % (62 << 10);
    }
    for (k, i) in (5_000..n).step_by(20_000).enumerate() {
        sizes[i] = [1 << 20, 700_000, 300_000, 1 << 20, 123_457][k % 5];
    }
    let t = Instant::now();
    stream(&client, &sizes, 256);
    let took = t.elapsed();
    for (i, c) in echo.calls.iter().enumerate() {
        assert_eq!(c.load(Ordering::Relaxed), 1, "request {i} ran {} times", c.load(Ordering::Relaxed));
    }
    assert_eq!(echo.total.load(Ordering::Relaxed), n as u64);
    let (ss, cs) = (server.stats(), client.stats());
    eprintln!("100k through faults in {took:?}\nserver {ss:?}\nclient {cs:?}");
    if nofault { return; }
    assert!(ss.faults_injected > 0 && cs.faults_injected > 0);
    assert!(ss.dropped_bad_crc + cs.dropped_bad_crc > 0, "corruption is caught by the CRC");
    assert!(ss.dropped_duplicate > 0, "duplicates were suppressed");
}

#[test]
fn tcp_streams_in_order_and_large_messages() {
    let n = 3000;
    let echo = Echo::new(n);
    let server = serve(Transport::Tcp, fast_server(), echo.clone()).unwrap();
    let client = Client::connect(Transport::Tcp, server.local_addr(), fast_client()).unwrap();
    let mut sizes: Vec<usize> = (0..n).map(|i| 1 + (i * 13) % 500).collect();
    sizes[100] = 1 << 20;
    sizes[2000] = 200_000;
    stream(&client, &sizes, 64);
    assert!(echo.calls.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    assert_eq!(client.call(vec![]).unwrap(), expected(&[]));
    std::thread::sleep(Duration::from_millis(100));
    let st = server.stats();
    assert_eq!((st.reassembly_bytes, st.result_bytes), (0, 0), "acked responses leave the cache: {st:?}");
}

/// TCP connections cut mid-stream (same server): the client reconnects, sends what is
/// unanswered again, and the server's result cache keeps every request to one run.
#[test]
fn tcp_reconnects_after_dropped_connections_without_running_twice() {
    let n = 4000;
    let echo = Echo::new(n);
    let server = serve(Transport::Tcp, fast_server(), echo.clone()).unwrap();
    let client = Client::connect(Transport::Tcp, server.local_addr(), fast_client()).unwrap();
    let (mut sent, mut got, mut cuts) = (0usize, 0usize, 0);
    while got < n {
        while sent < n && client.outstanding() < 64 {
            client.submit(request(sent as u64, 30 + sent % 5000)).unwrap();
            sent += 1;
            if sent % 1000 == 0 {
                cuts += server.drop_connections();
            }
        }
        let (seq, resp) = client.next().unwrap_or_else(|e| panic!("request {got}: {e}"));
        assert_eq!(seq as usize, got + 1);
        assert_eq!(resp, expected(&request(got as u64, 30 + got % 5000)));
        got += 1;
    }
    assert!(cuts >= 3, "{cuts}");
    assert_eq!(client.stats().restarts, 0, "same server, same epoch");
    for (i, c) in echo.calls.iter().enumerate() {
        assert_eq!(c.load(Ordering::Relaxed), 1, "request {i}");
    }
}

/// A slow service and a flood of whole single-fragment requests: the bytes queued for the
/// service count against the reassembly cap too, so the queue stays bounded.
#[test]
fn udp_flood_of_queued_requests_stays_within_the_cap() {
    let cap = 20_000;
    let slow = |r: &[u8]| {
        std::thread::sleep(Duration::from_millis(20));
        r.to_vec()
    };
    let limits = Limits { max_reassembly_bytes: cap, ..Default::default() };
    let server = serve(Transport::Udp, ServerConfig { limits, workers: 1, ..fast_server() }, Arc::new(slow)).unwrap();
    let to = server.local_addr();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    for sess in 1..=4u64 {
        sock.send_to(&frame::encode_vec(&Header::control(Kind::Hello, sess, 0, 1), &[], None), to).unwrap();
    }
    std::thread::sleep(Duration::from_millis(50));
    for seq in 1..200u64 {
        for sess in 1..=4u64 {
            let h = Header { kind: Kind::Request, flags: 0, chunk: 1400, session: sess, epoch: server.epoch(), seq, low: 1, index: 0, total: 1000 };
            sock.send_to(&frame::encode_vec(&h, &[1; 1000], None), to).unwrap();
        }
    }
    std::thread::sleep(Duration::from_millis(100));
    let s = server.stats();
    eprintln!("queued flood: {s:?}");
    assert!(s.reassembly_bytes_peak <= cap as u64 && s.reassembly_bytes_peak >= cap as u64 - 1000, "{s:?}");
    assert!(s.dropped_over_cap > 500, "{s:?}");
    // The queue drains; a good client is served.
    std::thread::sleep(Duration::from_millis(500));
    let c = Client::connect(Transport::Udp, to, fast_client()).unwrap();
    assert_eq!(c.call(b"still here".to_vec()).unwrap(), b"still here");
}

fn restart_mid_stream(transport: Transport, retry: bool) {
    let n = 3000;
    let echo = Echo::new(n);
    let cfg = ServerConfig { faults: if transport == Transport::Udp { faults(7) } else { Faults::none() }, ..fast_server() };
    let server = serve(transport, cfg.clone(), echo.clone()).unwrap();
    let addr = server.local_addr();
    let epoch1 = server.epoch();
    let client = Client::connect(
        transport,
        addr,
        ClientConfig { retry_on_restart: retry, timeout: Duration::from_secs(10), max_inflight: 32, ..fast_client() },
    )
    .unwrap();
    let mut server = Some(server);
    let (mut answered, mut restarted, mut timed_out) = (0, 0, 0);
    let mut sent = 0u64;
    let mut got = 0u64;
    while got < n as u64 {
        while sent < n as u64 && client.outstanding() < 32 {
            client.submit(request(sent, 20 + (sent as usize % 3000))).unwrap();
            sent += 1;
            if sent == 1000 {
                // Kill the server mid-stream, wait, start a new one on the same port.
                server.take().unwrap().stop();
                std::thread::sleep(Duration::from_millis(200));
                server = Some(serve(transport, ServerConfig { listen: addr, ..cfg.clone() }, echo.clone()).unwrap());
            }
        }
        match client.next() {
            Ok((seq, resp)) => {
                assert_eq!(seq, got + 1);
                assert_eq!(resp, expected(&request(got, 20 + (got as usize % 3000))));
                answered += 1;
            }
            Err(LinkError::ServerRestarted { seq, .. }) => {
                assert_eq!(seq, got + 1);
                assert!(!retry);
                restarted += 1;
            }
            Err(LinkError::Timeout { seq, .. }) => {
                assert_eq!(seq, got + 1);
                timed_out += 1;
            }
            Err(e) => panic!("request {got}: unexpected {e}"),
        }
        got += 1;
    }
    let server = server.unwrap();
    assert_ne!(server.epoch(), epoch1);
    assert_eq!(answered + restarted + timed_out, n, "every request answered or failed clearly");
    assert_eq!(client.server_limits().epoch, server.epoch());
    assert!(client.stats().restarts >= 1);
    if retry {
        assert_eq!(answered, n, "with retry every request is answered ({restarted} restarted, {timed_out} timed out)");
    } else {
        assert!(restarted > 0, "some requests were in flight at the restart");
    }
    // Within one epoch no request ran twice: only the ones in flight at the restart may
    // have run once on each server.
    let twice = echo.calls.iter().filter(|c| c.load(Ordering::Relaxed) > 1).count();
    assert!(twice <= 64, "{twice} requests ran twice");
    eprintln!("{transport} restart retry={retry}: answered {answered}, restarted {restarted}, timed out {timed_out}, ran twice {twice}");
}

#[test]
fn udp_restart_mid_stream_retries() {
    restart_mid_stream(Transport::Udp, true);
}

#[test]
fn udp_restart_mid_stream_fails_clearly_without_retry() {
    restart_mid_stream(Transport::Udp, false);
}

#[test]
fn tcp_restart_mid_stream_retries() {
    restart_mid_stream(Transport::Tcp, true);
}

#[test]
fn tcp_restart_mid_stream_fails_clearly_without_retry() {
    restart_mid_stream(Transport::Tcp, false);
}

#[test]
fn dead_server_times_out_with_a_clear_message() {
    let server = serve(Transport::Udp, fast_server(), Echo::new(0)).unwrap();
    let addr = server.local_addr();
    let client =
        Client::connect(Transport::Udp, addr, ClientConfig { timeout: Duration::from_millis(400), ..fast_client() }).unwrap();
    assert_eq!(client.call(b"x".to_vec()).unwrap(), expected(b"x"));
    server.stop();
    let t = Instant::now();
    let e = client.call(b"y".to_vec()).unwrap_err();
    assert!(matches!(e, LinkError::Timeout { seq: 2, .. }), "{e}");
    assert!(t.elapsed() >= Duration::from_millis(390) && t.elapsed() < Duration::from_secs(3));
    let msg = e.to_string();
    assert!(msg.contains("request 2") && msg.contains(&addr.to_string()) && msg.contains("0.4s"), "{msg}");
    // Nothing listening at all: the handshake times out.
    let e = Client::connect(Transport::Tcp, addr, ClientConfig { connect_timeout: Duration::from_millis(300), ..fast_client() })
        .err()
        .unwrap();
    assert!(matches!(e, LinkError::Timeout { seq: 0, .. }), "{e}");
    assert!(e.to_string().contains("handshake"), "{e}");
}

#[test]
fn too_large_requests_and_responses_are_refused_clearly() {
    let server = serve(
        Transport::Udp,
        ServerConfig { limits: Limits { max_message: 10_000, ..Default::default() }, ..fast_server() },
        Echo::new(0),
    )
    .unwrap();
    let client = Client::connect(Transport::Udp, server.local_addr(), fast_client()).unwrap();
    assert_eq!(client.server_limits().max_message, 10_000);
    let e = client.submit(vec![0; 10_001]).unwrap_err();
    assert!(matches!(e, LinkError::TooLarge { len: 10_001, max: 10_000 }), "{e}");
    assert!(e.to_string().contains("10001") && e.to_string().contains("10000"));
    // The echo's response is 8 bytes longer than its request.
    let e = client.call(vec![1; 9_995]).unwrap_err();
    assert!(matches!(e, LinkError::TooLarge { len: 10_003, max: 10_000 }), "{e}");
    assert_eq!(client.call(vec![2; 9_992]).unwrap().len(), 10_000);
    // A hand-made request past the limit is answered with an error frame and counted.
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut h = Header::control(Kind::Hello, 99, 0, 1);
    sock.send_to(&frame::encode_vec(&h, &[], None), server.local_addr()).unwrap();
    let mut buf = [0u8; 2048];
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let n = sock.recv(&mut buf).unwrap();
    let (ack, _) = frame::decode(&buf[..n], None).unwrap();
    assert_eq!(ack.kind, Kind::HelloAck);
    h = Header { kind: Kind::Request, chunk: 1000, epoch: ack.epoch, index: 0, total: 20_000, low: 1, ..h };
    sock.send_to(&frame::encode_vec(&h, &[0; 1000], None), server.local_addr()).unwrap();
    let n = sock.recv(&mut buf).unwrap();
    let (err, p) = frame::decode(&buf[..n], None).unwrap();
    assert_eq!(err.kind, Kind::Error);
    assert!(frame::decode_error(p).unwrap().3.contains("20000"));
    assert_eq!(server.stats().dropped_too_large, 1);
}

fn good_client_works(server: &Server, transport: Transport, key: Option<Key>) {
    let client = Client::connect(transport, server.local_addr(), ClientConfig { key, ..fast_client() }).unwrap();
    for i in 0..20u64 {
        let r = request(i, 10 + i as usize * 500);
        assert_eq!(client.call(r.clone()).unwrap(), expected(&r));
    }
}

/// Hostile datagrams of every sort: each is dropped and counted; the server goes on.
#[test]
fn udp_bad_datagrams_are_counted_and_dropped() {
    let key = Key::from_bytes(*b"0123456789abcdef0123").unwrap();
    let server = serve(Transport::Udp, ServerConfig { key: Some(key.clone()), ..fast_server() }, Echo::new(0)).unwrap();
    let to = server.local_addr();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let mut buf = [0u8; 2048];
    // A real session, to replay its frames.
    let hello = frame::encode_vec(&Header::control(Kind::Hello, 5, 0, 1), &[], Some(&key));
    sock.send_to(&hello, to).unwrap();
    let n = sock.recv(&mut buf).unwrap();
    let (ack, _) = frame::decode(&buf[..n], Some(&key)).unwrap();
    let req = Header { kind: Kind::Request, chunk: 1400, epoch: ack.epoch, seq: 1, low: 1, index: 0, total: 10, ..ack };
    let good = frame::encode_vec(&Header { session: 5, ..req }, b"0123456789", Some(&key));
    sock.send_to(&good, to).unwrap();
    let n = sock.recv(&mut buf).unwrap();
    assert_eq!(frame::decode(&buf[..n], Some(&key)).unwrap().0.kind, Kind::Response);
    let before = server.stats();
    let mut rng = 12345u64;
    let mut rnd = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut sent = 0;
    // Random bytes, of random lengths.
    for _ in 0..300 {
        let len = (rnd() % 1500) as usize;
        let b: Vec<u8> = (0..len).map(|_| rnd() as u8).collect();
        sock.send_to(&b, to).unwrap();
        sent += 1;
    }
    // Truncations of a good frame.
    for cut in [0, 1, 10, 55, 56, 60, good.len() - 1] {
        sock.send_to(&good[..cut], to).unwrap();
        sent += 1;
    }
    // Bit flips: caught by the CRC.
    for i in 0..good.len() - 16 {
        if (4..6).contains(&i) || (48..52).contains(&i) {
            continue; // flags and length fields: counted as malformed instead
        }
        let mut b = good.clone();
        b[i] ^= 0x10;
        sock.send_to(&b, to).unwrap();
        sent += 1;
    }
    // No MAC, and a wrong MAC (right CRC).
    sock.send_to(&frame::encode_vec(&Header { session: 5, ..req }, b"0123456789", None), to).unwrap();
    let other = Key::from_bytes(*b"another key, 16 bytes+").unwrap();
    sock.send_to(&frame::encode_vec(&Header { session: 5, ..req }, b"0123456789", Some(&other)), to).unwrap();
    sent += 2;
    // Replays: the same good request ten times: answered from the cache, never run again.
    for _ in 0..10 {
        sock.send_to(&good, to).unwrap();
        sent += 1;
    }
    // Oversized: a datagram of 9000 bytes.
    sock.send_to(&vec![0x48; 9000], to).unwrap();
    sent += 1;
    std::thread::sleep(Duration::from_millis(300));
    let s = server.stats();
    let dropped = |s: &heapwire_device::link::LinkStats| {
        s.dropped_bad_crc + s.dropped_bad_mac + s.dropped_malformed + s.dropped_duplicate + s.dropped_too_large
    };
    eprintln!("{s:?}");
    assert_eq!(s.frames_in - before.frames_in, sent);
    assert_eq!(dropped(&s) - dropped(&before), sent, "every bad datagram dropped and counted");
    assert_eq!(s.dropped_bad_mac - before.dropped_bad_mac, 2);
    assert_eq!(s.dropped_duplicate - before.dropped_duplicate, 10);
    assert!(s.dropped_bad_crc - before.dropped_bad_crc >= 40);
    assert_eq!(s.requests, 1, "the replayed request ran once");
    good_client_works(&server, Transport::Udp, Some(key.clone()));
    // A client without the key gets nowhere, and its hellos are counted.
    let e = Client::connect(Transport::Udp, to, ClientConfig { connect_timeout: Duration::from_millis(300), ..fast_client() })
        .err()
        .unwrap();
    assert!(matches!(e, LinkError::Timeout { seq: 0, .. }));
    assert!(server.stats().dropped_bad_mac > s.dropped_bad_mac);
}

#[test]
fn tcp_bad_frames_are_counted_and_dropped() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    let server = serve(Transport::Tcp, fast_server(), Echo::new(0)).unwrap();
    let to = server.local_addr();
    let good = frame::encode_vec(&Header::control(Kind::Hello, 5, 0, 1), &[], None);
    let framed = |b: &[u8]| {
        let mut v = (b.len() as u32).to_le_bytes().to_vec();
        v.extend_from_slice(b);
        v
    };
    // Wrong CRC, malformed, then a good hello on the same connection: answered.
    let mut s = TcpStream::connect(to).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut bad = good.clone();
    bad[20] ^= 1;
    s.write_all(&framed(&bad)).unwrap();
    let mut junk = good.clone();
    junk[0] = b'X';
    s.write_all(&framed(&junk)).unwrap();
    s.write_all(&framed(&good)).unwrap();
    let mut len = [0u8; 4];
    s.read_exact(&mut len).unwrap();
    let mut b = vec![0; u32::from_le_bytes(len) as usize];
    s.read_exact(&mut b).unwrap();
    assert_eq!(frame::decode(&b, None).unwrap().0.kind, Kind::HelloAck);
    // An oversized length prefix closes the connection; so do random bytes and a
    // truncated frame followed by a hang-up.
    s.write_all(&u32::MAX.to_le_bytes()).unwrap();
    assert_eq!(s.read(&mut b).unwrap_or(0), 0);
    for seed in 1..20u8 {
        let mut s = TcpStream::connect(to).unwrap();
        let junk: Vec<u8> = (0..500u32).map(|i| (i as u8).wrapping_mul(seed).wrapping_add(seed)).collect();
        let _ = s.write_all(&junk);
    }
    {
        let mut s = TcpStream::connect(to).unwrap();
        s.write_all(&framed(&good)[..30]).unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let st = server.stats();
    eprintln!("{st:?}");
    assert_eq!(st.dropped_bad_crc, 1);
    assert!(st.dropped_malformed >= 1);
    assert!(st.dropped_too_large >= 1);
    good_client_works(&server, Transport::Tcp, None);
}

/// Many sessions each send the first fragment of a large request and never the rest:
/// reassembly bytes stay under the cap, sessions under theirs, and a good client is
/// still served.
#[test]
fn udp_flood_of_half_sent_requests_stays_within_caps() {
    let cap = 4 << 20;
    let limits = Limits {
        max_reassembly_bytes: cap,
        max_sessions: 50,
        session_min_idle: Duration::from_millis(200),
        reassembly_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let server = serve(Transport::Udp, ServerConfig { limits, ..fast_server() }, Echo::new(0)).unwrap();
    let to = server.local_addr();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(2))).unwrap();
    let mut buf = [0u8; 2048];
    let mut epoch = 0;
    let mut peak = 0;
    for round in 0..4u64 {
        for sess in 0..200u64 {
            let id = 1000 + round * 1000 + sess;
            sock.send_to(&frame::encode_vec(&Header::control(Kind::Hello, id, 0, 1), &[], None), to).unwrap();
            while let Ok(n) = sock.recv(&mut buf) {
                if let Ok((h, _)) = frame::decode(&buf[..n], None) {
                    epoch = h.epoch;
                }
            }
            for seq in 1..5u64 {
                let h = Header {
                    kind: Kind::Request,
                    flags: 0,
                    chunk: 1400,
                    session: id,
                    epoch,
                    seq,
                    low: 1,
                    index: 0,
                    total: 1 << 20,
                };
                sock.send_to(&frame::encode_vec(&h, &[7; 1400], None), to).unwrap();
            }
            let s = server.stats();
            assert!(s.reassembly_bytes <= cap as u64 && s.sessions <= 50, "{s:?}");
            peak = peak.max(s.reassembly_bytes);
        }
    }
    std::thread::sleep(Duration::from_millis(100));
    let s = server.stats();
    eprintln!("flood: {s:?}");
    assert!(s.reassembly_bytes_peak <= cap as u64, "{s:?}");
    assert!(s.reassembly_bytes_peak >= (cap as u64 / 2), "the flood reached the cap");
    assert!(s.dropped_over_cap > 0 && s.sessions <= 50);
    assert!(peak <= cap as u64);
    // Half-sent requests time out and free the cap; the least recently active session
    // makes room for a new one.
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(server.stats().reassembly_bytes, 0);
    good_client_works(&server, Transport::Udp, None);
    let big = request(1, 900_000);
    let c = Client::connect(Transport::Udp, to, fast_client()).unwrap();
    assert_eq!(c.call(big.clone()).unwrap(), expected(&big));
}

#[test]
fn keyed_link_over_both_transports() {
    let dir = std::env::temp_dir().join(format!("heapwire-link-key-{}", std::process::id()));
    std::fs::write(&dir, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n").unwrap();
    let key = Key::from_file(&dir).unwrap();
    std::fs::write(&dir, "short").unwrap();
    let e = Key::from_file(&dir).unwrap_err();
    assert!(e.to_string().contains("at least 16"), "{e}");
    let _ = std::fs::remove_file(&dir);
    for t in [Transport::Udp, Transport::Tcp] {
        let server = serve(t, ServerConfig { key: Some(key.clone()), ..fast_server() }, Echo::new(0)).unwrap();
        good_client_works(&server, t, Some(key.clone()));
        assert_eq!(server.stats().dropped_bad_mac, 0);
        // The wrong key, or none: every frame dropped and counted, the handshake times out.
        for k in [Some(Key::from_bytes(*b"not the right key at all").unwrap()), None] {
            let cfg = ClientConfig { key: k, connect_timeout: Duration::from_millis(300), ..fast_client() };
            let e = Client::connect(t, server.local_addr(), cfg).err().unwrap();
            assert!(matches!(e, LinkError::Timeout { seq: 0, .. }), "{e}");
        }
        assert!(server.stats().dropped_bad_mac >= 2, "{:?}", server.stats());
        good_client_works(&server, t, Some(key.clone()));
    }
}

#[test]
fn endpoints_parse() {
    use heapwire_device::link::parse_endpoint;
    assert_eq!(parse_endpoint("udp://127.0.0.1:7000").unwrap(), (Transport::Udp, "127.0.0.1:7000".parse().unwrap()));
    assert_eq!(parse_endpoint("tcp://[::1]:80").unwrap(), (Transport::Tcp, "[::1]:80".parse().unwrap()));
    assert_eq!(parse_endpoint("tcp://localhost:9").unwrap().0, Transport::Tcp);
    for bad in ["127.0.0.1:7000", "sctp://127.0.0.1:1", "udp://127.0.0.1"] {
        assert!(parse_endpoint(bad).is_err(), "{bad}");
    }
}

#[test]
fn faults_parse_with_clear_errors() {
    let f: Faults = "drop=0.1,dup=0.05,reorder=0.05,corrupt=0.01".parse().unwrap();
    assert_eq!((f.drop, f.dup, f.reorder, f.corrupt), (0.1, 0.05, 0.05, 0.01));
    assert_eq!("seed=9, drop=1".parse::<Faults>().unwrap(), Faults { drop: 1.0, seed: 9, ..Faults::none() });
    assert!("".parse::<Faults>().unwrap().is_none());
    for (bad, says) in [("drop=2", "probability"), ("loss=0.1", "unknown fault"), ("drop", "NAME=VALUE"), ("dup=x", "not a number")] {
        let e = bad.parse::<Faults>().unwrap_err().to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn concurrent_callers_share_a_client() {
    let server = serve(Transport::Udp, ServerConfig { faults: faults(3), ..fast_server() }, Echo::new(0)).unwrap();
    let client = Arc::new(Client::connect(Transport::Udp, server.local_addr(), ClientConfig { faults: faults(4), ..fast_client() }).unwrap());
    let hs: Vec<_> = (0..4u64)
        .map(|t| {
            let c = client.clone();
            std::thread::spawn(move || {
                for i in 0..300u64 {
                    let r = request(t * 1000 + i, 30 + (i as usize * 37) % 4000);
                    assert_eq!(c.call(r.clone()).unwrap(), expected(&r));
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert!(matches!(client.next(), Err(LinkError::NothingPending)));
    let _: SocketAddr = server.local_addr();
}
