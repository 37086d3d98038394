//! The device's side of the attachment: each message the link delivers is parsed
//! ([`crate::proto::Op`]), run on the device, and answered ([`crate::proto::Reply`]).

use std::sync::Mutex;

use crate::model::{Device, DeviceError};
use crate::proto::{Op, Reply, MAX_REGS};

/// A device shared by the link's server threads: requests run one at a time.
pub struct DeviceService {
    dev: Mutex<Device>,
}

impl DeviceService {
    pub fn new(dev: Device) -> DeviceService {
        DeviceService { dev: Mutex::new(dev) }
    }

    /// Runs `f` on the device (tests and `device info` of an in-process device).
    pub fn with<T>(&self, f: impl FnOnce(&mut Device) -> T) -> T {
        f(&mut self.dev.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// One message in, its reply out. A message that does not parse is counted as a
    /// protocol error and answered with the parser's error.
    pub fn handle(&self, msg: &[u8]) -> Vec<u8> {
        let mut dev = self.dev.lock().unwrap_or_else(|p| p.into_inner());
        let reply = match Op::decode(msg) {
            Ok(op) => run(&mut dev, op).unwrap_or_else(|e| Reply::Error { code: e.code(), text: e.to_string() }),
            Err(e) => {
                dev.count_protocol_error();
                let e = DeviceError::Protocol(e);
                Reply::Error { code: e.code(), text: e.to_string() }
            }
        };
        reply.encode()
    }
}

fn run(dev: &mut Device, op: Op) -> Result<Reply, DeviceError> {
    Ok(match op {
        Op::ReadRegs { addr, count } => {
            let n = (count as usize).min(MAX_REGS) as u32;
            Reply::Words((0..n).map(|i| dev.read_reg(reg_at(addr, i)?)).collect::<Result<_, _>>()?)
        }
        Op::WriteRegs { addr, values } => {
            for (i, v) in values.into_iter().enumerate() {
                dev.write_reg(reg_at(addr, i as u32)?, v)?;
            }
            Reply::Done
        }
        Op::WriteInput { offset, bytes } => {
            dev.write_input(offset, &bytes)?;
            Reply::Done
        }
        Op::ReadOutput { offset, len } => Reply::Bytes(dev.read_output(offset, len)?.to_vec()),
        Op::WriteGo { go, input } => {
            let (outcome, image) = dev.write_go(&go, &input);
            Reply::Result { outcome: outcome.clone(), image: image.to_vec() }
        }
        Op::Install { slot, name, total, checksum, offset, bytes } => {
            Reply::Installed(dev.install_chunk(slot, &name, total, checksum, offset, &bytes)?)
        }
    })
}

/// Register `i` of a run from `addr`: a run past the last address has no register there.
fn reg_at(addr: u32, i: u32) -> Result<u32, DeviceError> {
    addr.checked_add(i).ok_or(DeviceError::NoRegister(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Config, CpuFactory};

    #[test]
    fn register_runs_past_the_last_address_are_refused() {
        // (fuzz/regressions/device_ops: WriteRegs at 0xffffffff overflowed the address)
        let svc = DeviceService::new(Device::new(Config::default(), Box::new(CpuFactory)));
        for op in [Op::WriteRegs { addr: u32::MAX, values: vec![1, 0] }, Op::ReadRegs { addr: u32::MAX - 1, count: 4 }] {
            match Reply::decode(&svc.handle(&op.encode())).unwrap() {
                Reply::Error { code: 64, text } => assert!(text.contains("no register"), "{text}"),
                r => panic!("{op:?}: {r:?}"),
            }
        }
    }

    #[test]
    fn fuzz_regressions_replay() {
        let svc = DeviceService::new(Device::new(Config::default(), Box::new(CpuFactory)));
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/device_ops");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).expect("fuzz/regressions/device_ops") {
            let bytes = std::fs::read(e.unwrap().path()).unwrap();
            Reply::decode(&svc.handle(&bytes)).expect("the reply parses");
            n += 1;
        }
        assert!(n > 0);
    }
}
