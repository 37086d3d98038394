//! `device serve`, `device info` and `submit`: the device runtime from the command line.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use heapwire_device::host::{DeviceHandle, JobError, OpenOptions, Schema, SlotInfo};
use heapwire_device::link::{self, Faults, Key, ServerConfig, Transport};
use heapwire_device::model::{factory, Config, Device};
use heapwire_device::regs::{self, Caps};
use heapwire_device::serve::DeviceService;
use heapwire_engine::{Options, Request};

use crate::commands::{for_each_message, write_out, Job};
use crate::Failure;

pub fn key(path: Option<&Path>) -> Result<Option<Key>, Failure> {
    path.map(|p| Key::from_file(p).map_err(|e| Failure::Usage(format!("--key-file {}: {e}", p.display())))).transpose()
}

/// What `device serve` is told.
pub struct Serve<'a> {
    pub listen: &'a str,
    pub transport: Transport,
    pub engine: &'a str,
    pub config: Config,
    pub key: Option<Key>,
    pub faults: Option<Faults>,
}

/// Serves a device until the process is stopped.
pub fn serve(a: Serve) -> Result<(), Failure> {
    let f = factory(a.engine, &a.config).map_err(Failure::Usage)?;
    let svc = Arc::new(DeviceService::new(Device::new(a.config.clone(), f)));
    let listen = heapwire_device::resolve(a.listen).map_err(|e| Failure::Usage(format!("--listen {e}")))?;
    let cfg = ServerConfig { listen, key: a.key, faults: a.faults.unwrap_or_default(), ..ServerConfig::default() };
    let s = svc.clone();
    let server = link::serve(a.transport, cfg, Arc::new(move |m: &[u8]| s.handle(m)))
        .map_err(|e| Failure::Usage(format!("--listen {}: {e}", a.listen)))?;
    eprintln!(
        "heapwire device: {} engine, {} slots, {} B input and {} B output memory, serving {}://{} (epoch {:#x}); stop with Ctrl-C",
        a.engine,
        a.config.slots,
        a.config.in_bytes,
        a.config.out_bytes,
        a.transport,
        server.local_addr(),
        server.epoch()
    );
    loop {
        std::thread::park();
    }
}

/// `device info`: the header block, the slots and the counters.
pub fn info(uri: &str, opts: &OpenOptions, out: &mut dyn Write) -> Result<(), Failure> {
    let mut dev = open(uri, opts)?;
    let h = dev.header().clone();
    let caps: Vec<&str> = [
        (Caps::PROTOBUF, "protobuf"),
        (Caps::OBJGRAPH, "objgraph"),
        (Caps::WRITE_GO, "write&go"),
        (Caps::RELOAD, "reload"),
        (Caps::TYPE_REGS, "type-registers"),
    ]
    .iter()
    .filter(|(b, _)| h.caps & b != 0)
    .map(|(_, n)| *n)
    .collect();
    let widths: Vec<String> = [4, 8].iter().filter(|w| h.ptr_widths & (1 << *w) != 0).map(|w| (8 * w).to_string()).collect();
    let mut text = format!(
        "device {uri}\n  version {}\n  engine {}\n  capabilities {}\n  slots {}\n  input memory {} B\n  output memory {} B\n  pointer widths {} bit\n  type registers per slot {}\n  table file per slot {} B\n  time unit {}\n",
        h.version,
        h.engine_name(),
        caps.join(" "),
        h.slots,
        h.in_bytes,
        h.out_bytes,
        widths.join(", "),
        h.type_regs,
        h.table_bytes,
        if h.time_unit == 1 { "ns" } else { "cycles" },
    );
    for (i, s) in dev.slot_info().map_err(usage)?.into_iter().enumerate() {
        let SlotInfo { state, checksum, table_len, types, name } = s;
        text += &match state {
            regs::SLOT_READY => format!("slot {i}: {name} (table {table_len} B, checksum {checksum:#010x}, {types} types)\n"),
            regs::SLOT_LOADING => format!("slot {i}: loading\n"),
            _ => format!("slot {i}: empty\n"),
        };
    }
    for (n, v) in dev.counters().map_err(usage)? {
        text += &format!("{n} {v}\n");
    }
    write_out(out, text.as_bytes())
}

fn usage(e: heapwire_device::host::HostError) -> Failure {
    Failure::Usage(e.to_string())
}

fn open(uri: &str, opts: &OpenOptions) -> Result<DeviceHandle, Failure> {
    DeviceHandle::open(uri, opts).map_err(usage)
}

/// `submit`: each message to the device, up to `opts.inflight` in flight; the images (or
/// JSON documents) on `out` in input order, as `decode` writes them.
pub fn submit(uri: &str, opts: &OpenOptions, name: &str, job: &Job, input: &mut dyn BufRead, out: &mut dyn Write) -> Result<(), Failure> {
    let mut dev = open(uri, opts)?;
    let schema = Arc::new(Schema::new(name, job.schema.clone()));
    // a delimited stream's images follow each other: an image's base is known when the
    // previous one is back, so those go one at a time; JSON documents do not depend on it
    let window = if job.delimited && !job.json { 1 } else { opts.inflight.max(1) };
    let mut printer = job.json.then(|| heapwire_json::Printer::new(job.schema.clone()));
    let mut base = job.options.base;
    // (start, index, input) of each message in flight
    let mut sent: VecDeque<(u64, u64, Vec<u8>)> = VecDeque::new();
    let mut text = Vec::new();
    let mut emit = |dev: &mut DeviceHandle, sent: &mut VecDeque<(u64, u64, Vec<u8>)>, base: &mut u64| -> Result<(), Failure> {
        let (start, index, msg) = sent.pop_front().expect("a message in flight");
        let (_, r) = dev.next().map_err(usage)?;
        let image = match r {
            Ok(i) => i.bytes,
            Err(JobError::Rejected(r)) => {
                let r = if job.delimited { r.within(start, index) } else { r };
                return Err(Failure::Input(r.to_string()));
            }
            Err(JobError::Device { text, .. }) => return Err(Failure::Usage(format!("device: {text}"))),
        };
        if let Some(p) = &mut printer {
            let options = Options { base: job.options.base, ..Options::default() };
            let req = Request { msg: job.msg, wire: job.wire, input: &msg, options: &options };
            text.clear();
            p.print(&req, &image, job.delimited, &mut text).map_err(|e| Failure::Input(format!("json: {e}")))?;
            write_out(out, &text)
        } else {
            *base += image.len() as u64;
            write_out(out, &image)
        }
    };
    for_each_message(job.delimited, input, |msg, start, index| {
        dev.submit(heapwire_device::Job {
            schema: schema.clone(),
            msg: job.msg as u32,
            wire: job.wire,
            base: if job.json { job.options.base } else { base },
            max_depth: job.options.max_depth,
            input: msg.to_vec(),
        })
        .map_err(usage)?;
        sent.push_back((start, index, msg.to_vec()));
        while sent.len() >= window {
            emit(&mut dev, &mut sent, &mut base)?;
        }
        Ok(())
    })?;
    while !sent.is_empty() {
        emit(&mut dev, &mut sent, &mut base)?;
    }
    dev.close().map_err(usage)
}

/// `--timeout` in seconds.
pub fn timeout(secs: f64) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(secs).map_err(|_| Failure::Usage(format!("--timeout {secs}: not a duration in seconds")))
}
