//! The device's side of the attachment: any message bytes are run or answered with an
//! error, never panic, and every reply parses. One device lives across runs (slots,
//! memories and registers carry state from one input to the next, as on a real device).
#![cfg_attr(fuzzing, no_main)]
use std::sync::OnceLock;

use heapwire_device::model::{Config, CpuFactory, Device};
use heapwire_device::proto::{Op, Reply};
use heapwire_device::serve::DeviceService;

fn device() -> &'static DeviceService {
    static DEV: OnceLock<DeviceService> = OnceLock::new();
    DEV.get_or_init(|| {
        let cfg = Config { slots: 2, in_bytes: 64 << 10, out_bytes: 256 << 10, table_bytes: 64 << 10 };
        DeviceService::new(Device::new(cfg, Box::new(CpuFactory)))
    })
}

/// The target's check of one input (also replayed by `cargo test`, see
/// crates/cli/tests/fuzz_regressions.rs).
pub fn check(data: &[u8]) {
    let reply = device().handle(data);
    Reply::decode(&reply).expect("the device's reply parses");
    if let Ok(op) = Op::decode(data) {
        assert_eq!(Op::decode(&op.encode()).as_ref(), Ok(&op));
    }
}

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
