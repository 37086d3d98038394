//! The device's messages (docs/device.md "Operations"): what a host asks and what the
//! device answers, carried whole by the link (which splits, checksums and retransmits).
//! Little-endian; every length is checked against what is left, so any byte string
//! parses to a message or to an error naming the field and the byte.

use crate::model::{Go, Outcome};

/// A host's request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `count` registers from `addr` (ReadDevReg).
    ReadRegs { addr: u32, count: u16 },
    /// Registers from `addr` (WriteDevReg); writing 1 to `C_CTRL` is the go bit.
    WriteRegs { addr: u32, values: Vec<u32> },
    WriteInput { offset: u32, bytes: Vec<u8> },
    ReadOutput { offset: u32, len: u32 },
    /// Write&go: the input, the go bit, and the outcome with the image pushed back.
    WriteGo { go: Go, input: Vec<u8> },
    /// One chunk of a table file for a slot (SetBitstreams).
    Install { slot: u32, name: String, total: u32, checksum: u32, offset: u32, bytes: Vec<u8> },
}

/// The device's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Done,
    Words(Vec<u32>),
    Bytes(Vec<u8>),
    /// Write&go: the outcome and the image (empty unless `outcome.err == 0`).
    Result { outcome: Outcome, image: Vec<u8> },
    /// Install: whether the last chunk arrived and the schema is in the slot.
    Installed(bool),
    /// The operation failed: a `DeviceError` code and its text.
    Error { code: u32, text: String },
}

const OP_READ_REGS: u8 = 1;
const OP_WRITE_REGS: u8 = 2;
const OP_WRITE_INPUT: u8 = 3;
const OP_READ_OUTPUT: u8 = 4;
const OP_WRITE_GO: u8 = 5;
const OP_INSTALL: u8 = 6;

const R_DONE: u8 = 0x80;
const R_WORDS: u8 = 0x81;
const R_BYTES: u8 = 0x82;
const R_RESULT: u8 = 0x83;
const R_INSTALLED: u8 = 0x84;
const R_ERROR: u8 = 0x85;

/// Most registers one `ReadRegs`/`WriteRegs` moves.
pub const MAX_REGS: usize = 4096;

struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        let b = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
        self.u16(b.len() as u16);
        self.0.extend_from_slice(b);
        self
    }
}

struct R<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> R<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.b.len() - self.at < n {
            return Err(format!("{what} at byte {}: needs {n} bytes, {} left", self.at, self.b.len() - self.at));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2, what)?.try_into().unwrap()))
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().unwrap()))
    }
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().unwrap()))
    }
    fn bytes(&mut self, what: &str) -> Result<Vec<u8>, String> {
        let n = self.u32(what)? as usize;
        Ok(self.take(n, what)?.to_vec())
    }
    fn str(&mut self, what: &str) -> Result<String, String> {
        let n = self.u16(what)? as usize;
        let at = self.at;
        String::from_utf8(self.take(n, what)?.to_vec()).map_err(|_| format!("{what} at byte {at}: not UTF-8"))
    }
    fn words(&mut self, n: usize, what: &str) -> Result<Vec<u32>, String> {
        if n > MAX_REGS {
            return Err(format!("{what} at byte {}: {n} registers (at most {MAX_REGS})", self.at));
        }
        (0..n).map(|_| self.u32(what)).collect()
    }
    fn end(&self) -> Result<(), String> {
        if self.at != self.b.len() {
            return Err(format!("{} bytes after the message at byte {}", self.b.len() - self.at, self.at));
        }
        Ok(())
    }
}

impl Op {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = W(Vec::new());
        match self {
            Op::ReadRegs { addr, count } => w.u8(OP_READ_REGS).u32(*addr).u16(*count),
            Op::WriteRegs { addr, values } => {
                w.u8(OP_WRITE_REGS).u32(*addr).u16(values.len() as u16);
                values.iter().for_each(|v| {
                    w.u32(*v);
                });
                &mut w
            }
            Op::WriteInput { offset, bytes } => w.u8(OP_WRITE_INPUT).u32(*offset).bytes(bytes),
            Op::ReadOutput { offset, len } => w.u8(OP_READ_OUTPUT).u32(*offset).u32(*len),
            Op::WriteGo { go, input } => return Op::encode_write_go(go, input),
            Op::Install { slot, name, total, checksum, offset, bytes } => {
                w.u8(OP_INSTALL).u32(*slot).str(name).u32(*total).u32(*checksum).u32(*offset).bytes(bytes)
            }
        };
        w.0
    }

    /// `Op::WriteGo { go, input }.encode()` from a borrowed input: the host keeps each
    /// request's bytes for a resend, so sending must not copy them twice.
    pub fn encode_write_go(go: &Go, input: &[u8]) -> Vec<u8> {
        let mut w = W(Vec::with_capacity(1 + 4 * 3 + 8 + 4 * 3 + 4 + input.len()));
        w.u8(OP_WRITE_GO)
            .u32(go.slot)
            .u32(go.msg)
            .u32(go.wire)
            .u64(go.base)
            .u32(go.max_depth)
            .u32(go.max_image)
            .u32(go.checksum)
            .bytes(input);
        w.0
    }

    pub fn decode(b: &[u8]) -> Result<Op, String> {
        let mut r = R { b, at: 0 };
        let op = match r.u8("operation")? {
            OP_READ_REGS => Op::ReadRegs { addr: r.u32("register address")?, count: r.u16("register count")? },
            OP_WRITE_REGS => {
                let addr = r.u32("register address")?;
                let n = r.u16("register count")? as usize;
                Op::WriteRegs { addr, values: r.words(n, "register values")? }
            }
            OP_WRITE_INPUT => Op::WriteInput { offset: r.u32("input offset")?, bytes: r.bytes("input bytes")? },
            OP_READ_OUTPUT => Op::ReadOutput { offset: r.u32("output offset")?, len: r.u32("output length")? },
            OP_WRITE_GO => {
                let go = Go {
                    slot: r.u32("slot")?,
                    msg: r.u32("message index")?,
                    wire: r.u32("wire format")?,
                    base: r.u64("base")?,
                    max_depth: r.u32("depth limit")?,
                    max_image: r.u32("image limit")?,
                    checksum: r.u32("table checksum")?,
                };
                Op::WriteGo { go, input: r.bytes("input")? }
            }
            OP_INSTALL => Op::Install {
                slot: r.u32("slot")?,
                name: r.str("schema name")?,
                total: r.u32("table length")?,
                checksum: r.u32("table checksum")?,
                offset: r.u32("chunk offset")?,
                bytes: r.bytes("chunk")?,
            },
            k => return Err(format!("unknown operation {k} at byte 0")),
        };
        r.end()?;
        Ok(op)
    }
}

impl Reply {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = W(Vec::new());
        match self {
            Reply::Done => w.u8(R_DONE),
            Reply::Words(v) => {
                w.u8(R_WORDS).u16(v.len() as u16);
                v.iter().for_each(|x| {
                    w.u32(*x);
                });
                &mut w
            }
            Reply::Bytes(b) => w.u8(R_BYTES).bytes(b),
            Reply::Result { outcome: o, image } => w
                .u8(R_RESULT)
                .u32(o.err)
                .u64(o.offset)
                .u64(o.needed)
                .u32(o.image_len)
                .u64(o.time)
                .str(&o.text)
                .bytes(image),
            Reply::Installed(done) => w.u8(R_INSTALLED).u8(*done as u8),
            Reply::Error { code, text } => w.u8(R_ERROR).u32(*code).str(text),
        };
        w.0
    }

    pub fn decode(b: &[u8]) -> Result<Reply, String> {
        let mut r = R { b, at: 0 };
        let reply = match r.u8("reply")? {
            R_DONE => Reply::Done,
            R_WORDS => {
                let n = r.u16("register count")? as usize;
                Reply::Words(r.words(n, "register values")?)
            }
            R_BYTES => Reply::Bytes(r.bytes("output bytes")?),
            R_RESULT => {
                let outcome = Outcome {
                    err: r.u32("error kind")?,
                    offset: r.u64("error offset")?,
                    needed: r.u64("needed")?,
                    image_len: r.u32("image length")?,
                    time: r.u64("time")?,
                    text: r.str("error text")?,
                };
                let at = r.at;
                let image = r.bytes("image")?;
                if outcome.err == 0 && image.len() != outcome.image_len as usize {
                    return Err(format!("image at byte {at}: {} bytes, the outcome says {}", image.len(), outcome.image_len));
                }
                Reply::Result { outcome, image }
            }
            R_INSTALLED => Reply::Installed(r.u8("installed")? != 0),
            R_ERROR => Reply::Error { code: r.u32("error code")?, text: r.str("error text")? },
            k => return Err(format!("unknown reply {k} at byte 0")),
        };
        r.end()?;
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ops() -> Vec<Op> {
        vec![
            Op::ReadRegs { addr: 0, count: 11 },
            Op::WriteRegs { addr: 0x1040, values: vec![1, 2, 3] },
            Op::WriteInput { offset: 8, bytes: b"abc".to_vec() },
            Op::ReadOutput { offset: 0, len: 64 },
            Op::WriteGo {
                go: Go { slot: 1, msg: 2, wire: 1, base: 1 << 40, max_depth: 100, max_image: 0, checksum: 5 },
                input: vec![0x08, 0x01],
            },
            Op::Install { slot: 3, name: "social".into(), total: 100, checksum: 7, offset: 0, bytes: vec![9; 100] },
        ]
    }

    #[test]
    fn every_op_and_reply_round_trips() {
        for op in ops() {
            assert_eq!(Op::decode(&op.encode()).unwrap(), op);
        }
        let replies = vec![
            Reply::Done,
            Reply::Words(vec![1, 2]),
            Reply::Bytes(vec![3; 5]),
            Reply::Result { outcome: Outcome { image_len: 3, time: 9, ..Outcome::default() }, image: vec![1, 2, 3] },
            Reply::Result { outcome: Outcome { err: 5, offset: 17, text: String::new(), ..Outcome::default() }, image: vec![] },
            Reply::Installed(true),
            Reply::Error { code: 70, text: "input too large".into() },
        ];
        for r in replies {
            assert_eq!(Reply::decode(&r.encode()).unwrap(), r);
        }
    }

    #[test]
    fn truncations_and_trailing_bytes_are_named() {
        for op in ops() {
            let b = op.encode();
            for n in 0..b.len() {
                let e = Op::decode(&b[..n]).unwrap_err();
                assert!(e.contains("at byte"), "{e}");
            }
            let mut long = b.clone();
            long.push(0);
            assert!(Op::decode(&long).unwrap_err().contains("after the message"));
        }
        assert!(Op::decode(&[99]).unwrap_err().contains("unknown operation 99"));
        // a result whose image disagrees with its length
        let b = Reply::Result { outcome: Outcome { image_len: 4, ..Outcome::default() }, image: vec![1, 2, 3] }.encode();
        assert!(Reply::decode(&b).unwrap_err().contains("the outcome says 4"));
    }

    proptest! {
        #[test]
        fn any_bytes_parse_or_fail_cleanly(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Op::decode(&b);
            let _ = Reply::decode(&b);
        }
    }
}
