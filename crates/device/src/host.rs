//! The host runtime: open a device by URI, read its header block, install schemas into
//! slots, stream requests, close. docs/device.md maps each call to the PCIe paper's API.
//!
//! Requests are queued per schema and dispatched round-robin, a turn at a time, onto the
//! slot holding their schema; a schema no slot holds waits until the least recently used
//! slot with nothing in flight is reloaded with it. Results come back in submission order.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use heapwire_engine::{Rejection, RejectKind, Wire};
use heapwire_schema::{table_file, CompiledSchema};

use crate::link::ClientConfig;
use crate::model::{device_error_meaning, factory, Config, Device, DeviceError, Go, Outcome};
use crate::proto::{Op, Reply};
use crate::regs::{self, Header};
use crate::serve::DeviceService;

/// What went wrong talking to a device (never a verdict on an input: those are
/// [`JobError`]s).
#[derive(Debug)]
pub enum HostError {
    /// The URI is not one this runtime opens.
    Uri(String),
    /// The link failed (timeout, restart, closed) or the device answered nonsense.
    Link(String),
    /// The device refused an operation: its error code and text.
    Device { code: u32, text: String },
    /// The device's header block is not one this host speaks.
    Header(String),
    /// A call that cannot be served (nothing submitted, a schema too large, ...).
    Usage(String),
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostError::Uri(m) => write!(f, "device URI: {m}"),
            HostError::Link(m) => write!(f, "link: {m}"),
            HostError::Device { code, text } => write!(f, "device error {code}: {text}"),
            HostError::Header(m) => write!(f, "device header: {m}"),
            HostError::Usage(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for HostError {}

/// Why a request produced no image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobError {
    /// The engine rejected the input (the same rejection as `heapwire decode`).
    Rejected(Rejection),
    /// The device refused the request (input larger than its memory, ...) or its engine
    /// failed: the error code and text.
    Device { code: u32, text: String },
}

impl std::fmt::Display for JobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobError::Rejected(r) => r.fmt(f),
            JobError::Device { text, .. } => f.write_str(text),
        }
    }
}

/// A compiled schema as it travels to a slot: its table file, the table's checksum
/// (its identity on the device) and a name.
pub struct Schema {
    pub name: String,
    pub table: Vec<u8>,
    pub checksum: u32,
    pub compiled: Arc<CompiledSchema>,
}

impl Schema {
    pub fn new(name: &str, compiled: Arc<CompiledSchema>) -> Schema {
        let table = table_file::write(&compiled);
        Schema { name: name.into(), checksum: crate::checksum(&table), table, compiled }
    }
}

/// One request: message `msg` of `schema` from `input` on `wire`, at `base`.
pub struct Job {
    pub schema: Arc<Schema>,
    pub msg: u32,
    pub wire: Wire,
    pub base: u64,
    pub max_depth: u32,
    pub input: Vec<u8>,
}

/// A finished request: its image, and the engine's cycles (sim) or nanoseconds (cpu).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub bytes: Vec<u8>,
    pub time: u64,
}

/// How a link is opened.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// Requests in flight on the link at most.
    pub inflight: usize,
    /// Shared key for authenticated links.
    pub key: Option<crate::link::Key>,
    /// Total time a request may take before the link gives up on it.
    pub timeout: Duration,
    /// Bytes of table file per install message.
    pub chunk: usize,
    /// The link's first retransmission timeout (UDP; it backs off from there).
    pub rto: Duration,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions { inflight: 16, key: None, timeout: Duration::from_secs(30), chunk: 32 << 10, rto: ClientConfig::default().rto }
    }
}


/// A parsed device URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Uri {
    /// `inproc:[ENGINE][?slots=N&in=BYTES&out=BYTES]`: a device inside this process
    /// (ENGINE: cpu, sim or sim-rom).
    InProc { engine: String, config: Config },
    Udp(String),
    Tcp(String),
}

impl std::str::FromStr for Uri {
    type Err = HostError;
    fn from_str(s: &str) -> Result<Uri, HostError> {
        if let Some(rest) = s.strip_prefix("inproc:") {
            let (engine, query) = rest.split_once('?').unwrap_or((rest, ""));
            let engine = if engine.is_empty() { "cpu" } else { engine };
            let mut config = Config::default();
            for kv in query.split('&').filter(|q| !q.is_empty()) {
                let (k, v) = kv.split_once('=').ok_or_else(|| HostError::Uri(format!("'{kv}' in '{s}' (KEY=VALUE)")))?;
                let n: u32 = crate::parse_size(v).ok_or_else(|| HostError::Uri(format!("'{v}' for {k} in '{s}' is not a size")))?;
                match k {
                    "slots" => config.slots = n,
                    "in" => config.in_bytes = n,
                    "out" => config.out_bytes = n,
                    _ => return Err(HostError::Uri(format!("unknown option '{k}' in '{s}' (slots, in, out)"))),
                }
            }
            if config.slots == 0 {
                return Err(HostError::Uri(format!("'{s}': a device needs at least one slot")));
            }
            return Ok(Uri::InProc { engine: engine.into(), config });
        }
        for (scheme, make) in [("udp://", Uri::Udp as fn(String) -> Uri), ("tcp://", Uri::Tcp)] {
            if let Some(addr) = s.strip_prefix(scheme) {
                if addr.is_empty() {
                    return Err(HostError::Uri(format!("'{s}' has no HOST:PORT")));
                }
                return Ok(make(addr.into()));
            }
        }
        Err(HostError::Uri(format!("'{s}' (inproc:[cpu|sim], udp://HOST:PORT or tcp://HOST:PORT)")))
    }
}

/// Messages to a device and its replies, in order.
trait Conn: Send {
    fn submit(&mut self, msg: Vec<u8>) -> Result<(), HostError>;
    fn next(&mut self) -> Result<Vec<u8>, HostError>;
}

/// A device in this process: the same messages, no socket.
struct InProc {
    svc: Arc<DeviceService>,
    replies: VecDeque<Vec<u8>>,
}

impl Conn for InProc {
    fn submit(&mut self, msg: Vec<u8>) -> Result<(), HostError> {
        self.replies.push_back(self.svc.handle(&msg));
        Ok(())
    }
    fn next(&mut self) -> Result<Vec<u8>, HostError> {
        self.replies.pop_front().ok_or_else(|| HostError::Usage("no message in flight".into()))
    }
}

struct LinkConn(crate::link::Client);

impl Conn for LinkConn {
    fn submit(&mut self, msg: Vec<u8>) -> Result<(), HostError> {
        self.0.submit(msg).map(|_| ()).map_err(|e| HostError::Link(e.to_string()))
    }
    fn next(&mut self) -> Result<Vec<u8>, HostError> {
        self.0.next().map(|(_, r)| r).map_err(|e| HostError::Link(e.to_string()))
    }
}

/// What a reply in flight answers.
enum Pending {
    /// `generation`: the slot's installs when the request was sent.
    Job { ticket: u64, slot: usize, generation: u64, job: Job, tries: u32 },
    Call,
}

/// Times a request is sent again after its slot lost its schema (a device restart,
/// another host's install) before it fails.
const MAX_TRIES: u32 = 3;

#[derive(Clone, Default)]
struct SlotView {
    checksum: Option<u32>,
    /// Installs made into the slot (a reply about an earlier one is stale).
    generation: u64,
    last_used: u64,
    inflight: usize,
}

/// Time and size of one slot reload.
#[derive(Clone, Copy, Debug)]
pub struct Reload {
    pub slot: u32,
    pub bytes: usize,
    pub time: Duration,
}

/// A request waiting to be sent: ticket, request, times sent already.
type Queued = (u64, Job, u32);

/// An open device.
pub struct DeviceHandle {
    conn: Box<dyn Conn>,
    header: Header,
    inflight_max: usize,
    chunk: usize,
    pending: VecDeque<Pending>,
    slots: Vec<SlotView>,
    /// Requests not yet sent, per schema (by checksum), served round-robin.
    queues: Vec<(u32, VecDeque<Queued>)>,
    turn: usize,
    /// Requests sent from the current queue's turn.
    turn_sent: usize,
    done: BTreeMap<u64, Result<Image, JobError>>,
    next_ticket: u64,
    next_out: u64,
    clock: u64,
    /// Per-type header words to re-apply when a schema is reloaded.
    type_words: HashMap<u32, Vec<u64>>,
    reloads: Vec<Reload>,
    /// Keeps an in-process device alive (and lets tests look at it).
    inproc: Option<Arc<DeviceService>>,
}

impl DeviceHandle {
    /// CreateDevice: opens `uri` and reads the header block.
    pub fn open(uri: &str, opts: &OpenOptions) -> Result<DeviceHandle, HostError> {
        let (conn, inproc): (Box<dyn Conn>, _) = match uri.parse::<Uri>()? {
            Uri::InProc { engine, config } => {
                let f = factory(&engine, &config).map_err(HostError::Uri)?;
                let svc = Arc::new(DeviceService::new(Device::new(config, f)));
                (Box::new(InProc { svc: svc.clone(), replies: VecDeque::new() }), Some(svc))
            }
            Uri::Udp(addr) | Uri::Tcp(addr) => {
                use crate::link::{Client, Transport};
                let transport = if uri.starts_with("udp") { Transport::Udp } else { Transport::Tcp };
                let sa = crate::resolve(&addr).map_err(HostError::Uri)?;
                let cfg = ClientConfig {
                    key: opts.key.clone(),
                    // the window of requests, and one register or table message beside them
                    max_inflight: opts.inflight.max(1) + 1,
                    timeout: opts.timeout,
                    rto: opts.rto,
                    ..ClientConfig::default()
                };
                let c = Client::connect(transport, sa, cfg).map_err(|e| HostError::Link(format!("{uri}: {e}")))?;
                (Box::new(LinkConn(c)), None)
            }
        };
        let mut h = DeviceHandle {
            conn,
            header: Header::default(),
            inflight_max: opts.inflight.max(1),
            chunk: opts.chunk.max(1024),
            pending: VecDeque::new(),
            slots: Vec::new(),
            queues: Vec::new(),
            turn: 0,
            turn_sent: 0,
            done: BTreeMap::new(),
            next_ticket: 0,
            next_out: 0,
            clock: 0,
            type_words: HashMap::new(),
            reloads: Vec::new(),
            inproc,
        };
        let words = h.read_regs(regs::H_MAGIC, regs::HEADER_WORDS as u16)?;
        h.header = Header::parse(&words).map_err(HostError::Header)?;
        h.slots = vec![SlotView::default(); h.header.slots as usize];
        // slots that already hold a schema (another host's, or this one's before a reconnect)
        for s in 0..h.header.slots {
            let w = h.read_regs(regs::slot_reg(s, regs::S_STATE), 2)?;
            if w[0] == regs::SLOT_READY {
                h.slots[s as usize].checksum = Some(w[1]);
            }
        }
        Ok(h)
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The in-process device behind an `inproc:` handle.
    pub fn inproc(&self) -> Option<&Arc<DeviceService>> {
        self.inproc.as_ref()
    }

    /// Slot reloads this handle made (time and bytes each).
    pub fn reloads(&self) -> &[Reload] {
        &self.reloads
    }

    /// One operation and its reply, with requests in flight: replies before it are kept.
    fn call(&mut self, op: Op) -> Result<Reply, HostError> {
        self.conn.submit(op.encode())?;
        self.pending.push_back(Pending::Call);
        loop {
            let p = self.receive()?;
            if let Some(r) = p {
                return match r {
                    Reply::Error { code, text } => Err(HostError::Device { code, text }),
                    r => Ok(r),
                };
            }
        }
    }

    /// The next reply in flight: a job's goes to `done` (None), a call's is returned.
    fn receive(&mut self) -> Result<Option<Reply>, HostError> {
        let p = self.pending.pop_front().ok_or_else(|| HostError::Usage("nothing in flight".into()))?;
        let bytes = self.conn.next()?;
        let reply = Reply::decode(&bytes).map_err(|e| HostError::Link(format!("device reply: {e}")))?;
        match p {
            Pending::Call => Ok(Some(reply)),
            Pending::Job { ticket, slot, generation, job, tries } => {
                self.slots[slot].inflight -= 1;
                let lost = match &reply {
                    Reply::Result { outcome, .. } => outcome.err,
                    Reply::Error { code, .. } => *code,
                    _ => 0,
                };
                if tries < MAX_TRIES
                    && (lost == DeviceError::SlotEmpty(0).code()
                        || lost == (DeviceError::SlotHoldsOther { slot: 0, holds: 0, wanted: 0 }).code())
                {
                    // the slot lost the schema (unless reloaded since): reload it and send
                    // the request again
                    let current = generation == self.slots[slot].generation;
                    if current {
                        self.slots[slot].checksum = None;
                    }
                    self.enqueue(ticket, job, tries + u32::from(current), true);
                    return Ok(None);
                }
                let r = match reply {
                    Reply::Result { outcome, image } => job_result(outcome, image),
                    Reply::Error { code, text } => Err(JobError::Device { code, text }),
                    other => return Err(HostError::Link(format!("device answered a request with {other:?}"))),
                };
                self.done.insert(ticket, r);
                Ok(None)
            }
        }
    }

    /// ReadDevReg: `count` registers from `addr`.
    pub fn read_regs(&mut self, addr: u32, count: u16) -> Result<Vec<u32>, HostError> {
        match self.call(Op::ReadRegs { addr, count })? {
            Reply::Words(w) if w.len() == count as usize => Ok(w),
            r => Err(HostError::Link(format!("register read answered with {r:?}"))),
        }
    }

    /// WriteDevReg.
    pub fn write_regs(&mut self, addr: u32, values: &[u32]) -> Result<(), HostError> {
        match self.call(Op::WriteRegs { addr, values: values.to_vec() })? {
            Reply::Done => Ok(()),
            r => Err(HostError::Link(format!("register write answered with {r:?}"))),
        }
    }

    /// The MSR paper's step-by-step protocol instead of write&go: the input memory
    /// written, the request's registers and the go bit, the status read, the image read
    /// back. Slot `slot` must hold the schema already (see [`DeviceHandle::install`]).
    pub fn run_by_registers(
        &mut self,
        slot: u32,
        msg: u32,
        wire: Wire,
        base: u64,
        input: &[u8],
    ) -> Result<Result<Image, JobError>, HostError> {
        match self.call(Op::WriteInput { offset: 0, bytes: input.to_vec() })? {
            Reply::Done => {}
            r => return Err(HostError::Link(format!("input write answered with {r:?}"))),
        }
        let wire = (wire == Wire::Objgraph) as u32;
        self.write_regs(regs::C_SLOT, &[slot, msg, wire, base as u32, (base >> 32) as u32, input.len() as u32, 100, 0])?;
        self.write_regs(regs::C_CTRL, &[1])?;
        let w = self.read_regs(regs::C_STATUS, (regs::CONTROL_END - regs::C_STATUS) as u16)?;
        let at = |r: u32| w[(r - regs::C_STATUS) as usize];
        let wide = |r: u32| at(r) as u64 | (at(r + 1) as u64) << 32;
        if at(regs::C_STATUS) & regs::Status::DONE == 0 {
            return Err(HostError::Link(format!("status {:#x} after the go bit", at(regs::C_STATUS))));
        }
        let o = Outcome {
            err: at(regs::C_ERR_KIND),
            offset: wide(regs::C_ERR_OFFSET),
            needed: wide(regs::C_NEEDED),
            image_len: at(regs::C_IMAGE_LEN),
            time: wide(regs::C_TIME),
            // a rejection's text is made from its kind and offset; a device error has only its code here
            text: device_error_meaning(at(regs::C_ERR_KIND)).to_string(),
        };
        if o.err != 0 {
            return Ok(job_result(o, Vec::new()));
        }
        match self.call(Op::ReadOutput { offset: 0, len: o.image_len })? {
            Reply::Bytes(image) => Ok(job_result(o, image)),
            r => Err(HostError::Link(format!("output read answered with {r:?}"))),
        }
    }

    /// The counters, named.
    pub fn counters(&mut self) -> Result<Vec<(&'static str, u64)>, HostError> {
        let w = self.read_regs(regs::N_REQUESTS, (regs::COUNTERS_END - regs::N_REQUESTS) as u16)?;
        Ok(regs::COUNTER_NAMES.iter().enumerate().map(|(i, n)| (*n, w[2 * i] as u64 | (w[2 * i + 1] as u64) << 32)).collect())
    }

    /// Each slot's state, checksum, table length, type count and schema name.
    pub fn slot_info(&mut self) -> Result<Vec<SlotInfo>, HostError> {
        let mut out = Vec::new();
        for s in 0..self.header.slots {
            let w = self.read_regs(regs::slot_reg(s, regs::S_STATE), 4)?;
            let name = self.read_regs(regs::slot_reg(s, regs::S_NAME), (regs::NAME_BYTES / 4) as u16)?;
            let name: Vec<u8> = name.iter().flat_map(|w| w.to_le_bytes()).take_while(|b| *b != 0).collect();
            out.push(SlotInfo {
                state: w[0],
                checksum: w[1],
                table_len: w[2],
                types: w[3],
                name: String::from_utf8_lossy(&name).into_owned(),
            });
        }
        Ok(out)
    }

    /// SetBitstreams: installs `schema` into `slot`, in chunks. Requests in flight on
    /// that slot are finished first.
    pub fn install(&mut self, slot: u32, schema: &Schema) -> Result<Reload, HostError> {
        if slot >= self.header.slots {
            return Err(HostError::Usage(format!("slot {slot} does not exist (the device has {})", self.header.slots)));
        }
        if schema.table.len() > self.header.table_bytes as usize {
            return Err(HostError::Usage(format!(
                "schema '{}': table file of {} bytes, the device's slots take {}",
                schema.name,
                schema.table.len(),
                self.header.table_bytes
            )));
        }
        while self.slots[slot as usize].inflight > 0 {
            self.receive()?;
        }
        self.slots[slot as usize].checksum = None;
        self.slots[slot as usize].generation += 1;
        let t0 = Instant::now();
        let total = schema.table.len() as u32;
        let mut offset = 0usize;
        loop {
            let end = (offset + self.chunk).min(schema.table.len());
            let op = Op::Install {
                slot,
                name: schema.name.clone(),
                total,
                checksum: schema.checksum,
                offset: offset as u32,
                bytes: schema.table[offset..end].to_vec(),
            };
            let last = end == schema.table.len();
            match self.call(op)? {
                Reply::Installed(done) if done == last => {}
                r => return Err(HostError::Link(format!("table chunk at {offset} answered with {r:?}"))),
            }
            offset = end;
            if last {
                break;
            }
        }
        let r = Reload { slot, bytes: schema.table.len(), time: t0.elapsed() };
        self.reloads.push(r);
        self.slots[slot as usize].checksum = Some(schema.checksum);
        if let Some(words) = self.type_words.get(&schema.checksum).cloned() {
            self.write_type_words_now(slot, &words)?;
        }
        Ok(r)
    }

    /// Per-type header words for `schema` (type `t` gets `words[t]`), applied to every slot
    /// holding it now or later.
    pub fn set_type_words(&mut self, schema: &Schema, words: &[u64]) -> Result<(), HostError> {
        if words.len() > schema.compiled.messages.len() {
            return Err(HostError::Usage(format!(
                "{} type words for a schema of {} types",
                words.len(),
                schema.compiled.messages.len()
            )));
        }
        self.type_words.insert(schema.checksum, words.to_vec());
        for s in 0..self.slots.len() {
            if self.slots[s].checksum == Some(schema.checksum) {
                while self.slots[s].inflight > 0 {
                    self.receive()?;
                }
                self.write_type_words_now(s as u32, words)?;
            }
        }
        Ok(())
    }

    fn write_type_words_now(&mut self, slot: u32, words: &[u64]) -> Result<(), HostError> {
        let v: Vec<u32> = words.iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]).collect();
        for (i, c) in v.chunks(crate::proto::MAX_REGS).enumerate() {
            self.write_regs(regs::slot_reg(slot, regs::S_TYPE) + (i * crate::proto::MAX_REGS) as u32, c)?;
        }
        Ok(())
    }

    /// Transmit: queues a request; returns its ticket. Requests go out as the in-flight
    /// window allows; results come back from [`DeviceHandle::next`] in ticket order.
    pub fn submit(&mut self, job: Job) -> Result<u64, HostError> {
        if job.input.len() > self.header.in_bytes as usize {
            // refused here as the device would refuse it, without sending it
            let t = self.next_ticket;
            self.next_ticket += 1;
            let e = DeviceError::InputTooLarge { len: job.input.len() as u64, max: self.header.in_bytes };
            self.done.insert(t, Err(JobError::Device { code: e.code(), text: e.to_string() }));
            return Ok(t);
        }
        let t = self.next_ticket;
        self.next_ticket += 1;
        self.enqueue(t, job, 0, false);
        while self.pending.len() < self.inflight_max && self.dispatch()? {}
        Ok(t)
    }

    fn enqueue(&mut self, ticket: u64, job: Job, tries: u32, front: bool) {
        let key = job.schema.checksum;
        let q = match self.queues.iter().position(|(k, _)| *k == key) {
            Some(i) => &mut self.queues[i].1,
            None => {
                self.queues.push((key, VecDeque::new()));
                &mut self.queues.last_mut().expect("pushed").1
            }
        };
        if front {
            q.push_front((ticket, job, tries));
        } else {
            q.push_back((ticket, job, tries));
        }
    }

    /// Receive: the next result in submission order (blocks until it is back).
    #[allow(clippy::should_implement_trait)] // fallible and blocking: not an Iterator
    pub fn next(&mut self) -> Result<(u64, Result<Image, JobError>), HostError> {
        if self.next_out >= self.next_ticket {
            return Err(HostError::Usage("next() with no request outstanding".into()));
        }
        loop {
            if let Some(r) = self.done.remove(&self.next_out) {
                self.next_out += 1;
                return Ok((self.next_out - 1, r));
            }
            while self.pending.len() < self.inflight_max && self.dispatch()? {}
            if self.pending.is_empty() {
                return Err(HostError::Usage("a request was lost in the scheduler (a bug)".into()));
            }
            self.receive()?;
        }
    }

    /// Requests submitted and not yet returned by `next`.
    pub fn outstanding(&self) -> u64 {
        self.next_ticket - self.next_out
    }

    /// Sends one queued request (reloading a slot for it if needed). False when nothing
    /// can be sent now.
    fn dispatch(&mut self) -> Result<bool, HostError> {
        self.queues.retain(|(_, q)| !q.is_empty());
        if self.queues.is_empty() {
            return Ok(false);
        }
        // a turn is up to a window of requests of one schema, then the next schema's
        if self.turn_sent >= self.inflight_max {
            self.turn += 1;
            self.turn_sent = 0;
        }
        if self.turn >= self.queues.len() {
            self.turn = 0;
        }
        let key = self.queues[self.turn].0;
        let slot = match self.slots.iter().position(|s| s.checksum == Some(key)) {
            Some(s) => s,
            None => {
                // the least recently used slot with nothing in flight; none free: wait
                let Some(victim) = (0..self.slots.len())
                    .filter(|&s| self.slots[s].inflight == 0)
                    .min_by_key(|&s| (self.slots[s].checksum.is_some(), self.slots[s].last_used))
                else {
                    return Ok(false);
                };
                let schema = self.queues[self.turn].1.front().expect("non-empty").1.schema.clone();
                self.install(victim as u32, &schema)?;
                victim
            }
        };
        let (ticket, job, tries) = self.queues[self.turn].1.pop_front().expect("non-empty");
        // an emptied queue leaves at the next dispatch and the next schema takes its place
        self.turn_sent = if self.queues[self.turn].1.is_empty() { 0 } else { self.turn_sent + 1 };
        self.clock += 1;
        self.slots[slot].last_used = self.clock;
        self.slots[slot].inflight += 1;
        let go = Go {
            slot: slot as u32,
            msg: job.msg,
            wire: (job.wire == Wire::Objgraph) as u32,
            base: job.base,
            max_depth: job.max_depth,
            max_image: 0,
            checksum: key,
        };
        self.conn.submit(Op::encode_write_go(&go, &job.input))?;
        let generation = self.slots[slot].generation;
        self.pending.push_back(Pending::Job { ticket, slot, generation, job, tries });
        Ok(true)
    }

    /// DestroyDevice: waits for every reply in flight.
    pub fn close(mut self) -> Result<(), HostError> {
        while !self.pending.is_empty() {
            self.receive()?;
        }
        Ok(())
    }
}

/// A slot as `device info` shows it.
#[derive(Clone, Debug)]
pub struct SlotInfo {
    pub state: u32,
    pub checksum: u32,
    pub table_len: u32,
    pub types: u32,
    pub name: String,
}

fn job_result(o: Outcome, image: Vec<u8>) -> Result<Image, JobError> {
    if o.err == 0 {
        return Ok(Image { bytes: image, time: o.time });
    }
    match RejectKind::from_code(o.err).filter(|_| o.err < 64) {
        Some(kind) => Err(JobError::Rejected(Rejection { kind, offset: o.offset, message: None, needed: o.needed })),
        None => Err(JobError::Device { code: o.err, text: o.text }),
    }
}
