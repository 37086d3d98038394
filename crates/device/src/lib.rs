//! heapwire's device: what lets a host hand bytes to an engine the way the papers' hosts
//! hand them to their accelerators. [`link`] is the attachment's link layer: a reliable,
//! at-most-once request/response channel over UDP (fragmentation, acknowledgements,
//! retransmission with backoff, a result cache per session, server epochs) and over TCP
//! (length-prefixed frames carrying the same messages), with CRC-32C on every datagram or
//! frame, an optional shared-key MAC, fault injection for tests, and documented caps on
//! sessions and reassembly memory (`docs/device.md`, "Link layer").

pub mod link;
