//! heapwire's device: what lets a host hand bytes to an engine the way the papers' hosts
//! hand them to their accelerators (docs/device.md).
//!
//! - [`regs`]: the register map (header block, control and status, counters, slots).
//! - [`model`]: the device: memories, slots holding an installed schema and its engine
//!   (`cpu` or `sim`), the go bit and write&go.
//! - [`proto`]: the device's messages (register reads and writes, memory writes and
//!   reads, write&go, table chunks) and their replies.
//! - [`serve`]: the device's side: messages in, replies out.
//! - [`host`]: the host runtime: open by URI, install schemas, stream requests.
//! - [`link`]: the attachment's link layer: a reliable, at-most-once request/response
//!   channel over UDP (fragmentation, acknowledgements, retransmission with backoff, a
//!   result cache per session, server epochs) and over TCP (length-prefixed frames
//!   carrying the same messages), with CRC-32C on every datagram or frame, an optional
//!   shared-key MAC, fault injection for tests, and documented caps on sessions and
//!   reassembly memory.

pub mod host;
pub mod link;
pub mod model;
pub mod proto;
pub mod regs;
pub mod serve;

pub use host::{DeviceHandle, Image, Job, JobError, OpenOptions, Schema};
pub use model::{Config, Device, DeviceError, EngineFactory};

/// CRC-32C: a table file's identity on a device (the link checksums with it too).
pub fn checksum(b: &[u8]) -> u32 {
    crc32c::crc32c(b)
}

/// A size: a number with an optional `k`, `M` or `G` (powers of 1024) that fits 32 bits.
pub fn parse_size(s: &str) -> Option<u32> {
    let (n, mul) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&s[..i], 1 << 20),
        (i, 'g' | 'G') => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    n.parse::<u64>().ok()?.checked_mul(mul).and_then(|v| u32::try_from(v).ok())
}

/// `HOST:PORT` to a socket address (the first the name resolves to).
pub fn resolve(addr: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    addr.to_socket_addrs()
        .map_err(|e| format!("'{addr}': {e}"))?
        .next()
        .ok_or_else(|| format!("'{addr}' resolves to no address"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes() {
        assert_eq!(super::parse_size("4096"), Some(4096));
        assert_eq!(super::parse_size("64k"), Some(65536));
        assert_eq!(super::parse_size("4M"), Some(4 << 20));
        assert_eq!(super::parse_size("4G"), None);
        assert_eq!(super::parse_size("x"), None);
        assert_eq!(super::parse_size(""), None);
    }
}
