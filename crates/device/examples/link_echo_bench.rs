//! Quick look at the link layer's cost on loopback: round trips of a small and a large
//! message, and throughput of large messages, over UDP and TCP, with an echo service.
//!   cargo run --release -p heapwire-device --example link_echo_bench [-- N]
use std::sync::Arc;
use std::time::Instant;

use heapwire_device::link::{serve, Client, ClientConfig, ServerConfig, Transport};

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * p) as usize]
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5000);
    for t in [Transport::Udp, Transport::Tcp] {
        let server = serve(t, ServerConfig::default(), Arc::new(|r: &[u8]| r.to_vec())).unwrap();
        let c = Client::connect(t, server.local_addr(), ClientConfig::default()).unwrap();
        for size in [16usize, 64 << 10] {
            let msg = vec![7u8; size];
            let reps = if size > 4096 { n / 10 } else { n };
            let mut us: Vec<f64> = (0..reps)
                .map(|_| {
                    let t0 = Instant::now();
                    c.call(msg.clone()).unwrap();
                    t0.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            println!("{t} round trip {size:>6} B: median {:7.1} us, p90 {:7.1} us ({reps} calls)", pct(&mut us, 0.5), pct(&mut us, 0.9));
        }
        for inflight in [1usize, 8] {
            let msg = vec![9u8; 1 << 20];
            let reps = 64;
            let t0 = Instant::now();
            let (mut sent, mut got) = (0, 0);
            while got < reps {
                while sent < reps && c.outstanding() < inflight {
                    c.submit(msg.clone()).unwrap();
                    sent += 1;
                }
                c.next().unwrap();
                got += 1;
            }
            let secs = t0.elapsed().as_secs_f64();
            println!("{t} 1 MiB echo, {inflight} in flight: {:.0} MB/s each way", reps as f64 * 1.048576 / secs);
        }
        println!("{t} client {:?}", c.stats());
    }
}
