//! The device part of the C ABI (`hw_device_*`, docs/c-api.md "Devices"): the host
//! runtime of `heapwire-device` ([`DeviceHandle`]) behind a handle, with the PCIe paper's
//! API (CreateDevice, SetBitstreams, Transmit, Receive, ReadDevReg, WriteDevReg,
//! DestroyDevice) as C functions.
//!
//! Schemas are the C API's own `hw_schema` handles: their compiled schema is installed
//! (its table file), their per-type registers become the device's type registers and their
//! depth limit the request's. Results come back in submission order, as the C API's own
//! decode gives them: the image, or the same reject kind and byte offset.
//!
//! The same conventions as `lib.rs`: pointer arguments checked, panics caught, a code
//! returned, the text in `hw_device_last_error`.

use std::collections::VecDeque;
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use heapwire_device::host::{DeviceHandle, HostError, Image, Job, JobError, OpenOptions, Schema};
use heapwire_device::link::Key;
use heapwire_device::regs::{Header, NAME_BYTES};
use heapwire_engine::{RejectKind, Rejection};
use heapwire_schema::CompiledSchema;

use crate::{cstring, output, path_of, string, write_text, Fail, HwError, HwSchema, HW_BAD_ARGUMENT, HW_DEVICE, HW_INTERNAL, HW_LINK};

/// `hw_device_open`'s options; a NULL pointer or a zero field takes the default.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HwDeviceOptions {
    /// Requests in flight on the link at most (default 16).
    pub inflight: u32,
    /// Milliseconds a request or operation may take before the link gives up (default
    /// 30000).
    pub timeout_ms: u32,
    /// A shared-key file (as `heapwire device serve --key-file`), or NULL: no key.
    pub key_file: *const c_char,
}

/// The device's header block (`hw_device_header`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HwDeviceInfo {
    pub version: u32,
    pub caps: u32,
    pub slots: u32,
    pub in_bytes: u32,
    pub out_bytes: u32,
    pub ptr_widths: u32,
    pub engine: u32,
    pub type_regs: u32,
    pub table_bytes: u32,
    pub time_unit: u32,
}

impl From<&Header> for HwDeviceInfo {
    fn from(h: &Header) -> HwDeviceInfo {
        HwDeviceInfo {
            version: h.version,
            caps: h.caps,
            slots: h.slots,
            in_bytes: h.in_bytes,
            out_bytes: h.out_bytes,
            ptr_widths: h.ptr_widths,
            engine: h.engine,
            type_regs: h.type_regs,
            table_bytes: h.table_bytes,
            time_unit: h.time_unit,
        }
    }
}

/// The device's counters (`hw_device_counters`), in the register order of
/// [`COUNTER_NAMES`] (a test checks the field names against it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HwDeviceStats {
    pub requests: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub rejections: u64,
    pub protocol_errors: u64,
    pub reloads: u64,
    pub reload_bytes: u64,
}

/// The field names of [`HwDeviceStats`], in order.
pub const STATS_FIELDS: [&str; 7] = ["requests", "bytes_in", "bytes_out", "rejections", "protocol_errors", "reloads", "reload_bytes"];

/// One slot (`hw_device_slot`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HwDeviceSlot {
    /// 0 empty, 1 loading, 2 ready.
    pub state: u32,
    /// CRC-32C of the installed table file.
    pub checksum: u32,
    pub table_len: u32,
    pub types: u32,
    /// The schema's name, NUL-terminated.
    pub name: [c_char; NAME_BYTES + 1],
}

/// A compiled schema as this handle sends it: the `hw_schema`'s compiled schema (kept
/// alive, so its address identifies it), the table file with its checksum, and the type
/// registers the device holds for it.
struct Known {
    compiled: Arc<CompiledSchema>,
    schema: Arc<Schema>,
    words: Vec<u64>,
}

/// An open device.
pub struct HwDevice {
    dev: DeviceHandle,
    known: Vec<Known>,
    /// Results taken from the runtime and not yet returned by `hw_device_next` (a result
    /// whose image did not fit the caller's buffer; results collected before type
    /// registers changed).
    ready: VecDeque<(u64, Result<Image, JobError>)>,
    last_error: CString,
    /// The link failed or heapwire panicked: every later call gets this code.
    broken: Option<i32>,
}

impl From<HostError> for Fail {
    fn from(e: HostError) -> Fail {
        let text = e.to_string();
        match e {
            HostError::Uri(_) | HostError::Usage(_) => Fail::arg(text),
            HostError::Device { code, .. } => Fail::new(HW_DEVICE, text).at(code as u64),
            HostError::Link(_) | HostError::Header(_) => Fail::new(HW_LINK, text),
        }
    }
}

/// The default name of a schema on a device: its first message's package, or "schema".
fn default_name(s: &CompiledSchema) -> String {
    s.messages
        .first()
        .and_then(|m| m.full_name.rsplit_once('.').map(|(p, _)| p.to_string()))
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "schema".into())
}

impl HwDevice {
    /// The schema `h` as this device knows it (named `name` if given), with the device's
    /// type registers for it brought to `h`'s. A change of registers waits for every
    /// request outstanding (their results are kept), so each request runs with the
    /// registers it was submitted with.
    fn schema(&mut self, h: &HwSchema, name: Option<String>) -> Result<Arc<Schema>, Fail> {
        let i = match self.known.iter().position(|k| Arc::ptr_eq(&k.compiled, &h.schema)) {
            Some(i) => i,
            None => {
                let name = name.clone().unwrap_or_else(|| default_name(&h.schema));
                let n = h.schema.messages.len() as u64;
                self.known.push(Known { compiled: h.schema.clone(), schema: Arc::new(Schema::new(&name, h.schema.clone())), words: (0..n).collect() });
                self.known.len() - 1
            }
        };
        if let Some(name) = name {
            if self.known[i].schema.name != name {
                self.known[i].schema = Arc::new(Schema::new(&name, h.schema.clone()));
            }
        }
        if self.known[i].words != h.options.type_words {
            while self.dev.outstanding() > 0 {
                let r = self.dev.next()?;
                self.ready.push_back(r);
            }
            let s = self.known[i].schema.clone();
            self.dev.set_type_words(&s, &h.options.type_words)?;
            self.known[i].words = h.options.type_words.clone();
        }
        Ok(self.known[i].schema.clone())
    }
}

/// Runs one call on a device handle: checks it, catches a panic, marks the handle broken
/// after a link failure or a panic, fills `*err` and the handle's last-error text.
unsafe fn dev_call(d: *mut HwDevice, err: *mut HwError, f: impl FnOnce(&mut HwDevice) -> Result<(), Fail>) -> i32 {
    if !err.is_aligned() {
        return HW_BAD_ARGUMENT;
    }
    let r = match d.as_mut() {
        None => Err(Fail::arg("device handle is NULL")),
        Some(hd) => match hd.broken {
            Some(code) => Err(Fail::new(code, "this device handle failed earlier (see the text of that call); close it and open the device again")),
            None => match catch_unwind(AssertUnwindSafe(|| f(hd))) {
                Ok(r) => r,
                Err(_) => {
                    hd.broken = Some(HW_INTERNAL);
                    Err(Fail::internal())
                }
            },
        },
    };
    let e = r.err().unwrap_or_else(|| Fail::new(0, ""));
    if !err.is_null() {
        *err = HwError { code: e.code, offset: e.offset, needed: e.needed };
    }
    if let Some(hd) = d.as_mut() {
        if e.code == HW_LINK && hd.broken.is_none() {
            hd.broken = Some(HW_LINK);
        }
        if !(e.text.is_empty() && hd.last_error.is_empty()) {
            hd.last_error = cstring(&e.text);
        }
    }
    e.code
}

/// A live `hw_schema` for a device call.
unsafe fn schema_arg<'a>(s: *const HwSchema) -> Result<&'a HwSchema, Fail> {
    match s.as_ref() {
        None => Err(Fail::arg("schema handle is NULL")),
        Some(h) if h.poisoned => Err(Fail::internal()),
        Some(h) => Ok(h),
    }
}

unsafe fn out_param<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Fail> {
    if !p.is_aligned() {
        return Err(Fail::arg(format!("{what} is misaligned")));
    }
    p.as_mut().ok_or_else(|| Fail::arg(format!("{what} is NULL")))
}

/// CreateDevice: opens the device at `uri` and reads its header block.
///
/// # Safety
/// `uri` is NUL-terminated; `opts` is NULL or valid (its `key_file` NULL or
/// NUL-terminated); `out` is valid; `errbuf` is NULL or has `errbuf_cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn hw_device_open(
    uri: *const c_char,
    opts: *const HwDeviceOptions,
    out: *mut *mut HwDevice,
    errbuf: *mut c_char,
    errbuf_cap: usize,
) -> i32 {
    let r = catch_unwind(AssertUnwindSafe(|| -> Result<Box<HwDevice>, Fail> {
        let out = out_param(out, "out")?;
        *out = std::ptr::null_mut();
        let uri = string(uri, "uri")?.to_str().map_err(|_| Fail::arg("uri is not UTF-8"))?;
        if !opts.is_aligned() {
            return Err(Fail::arg("opts is misaligned"));
        }
        let mut o = OpenOptions::default();
        if let Some(c) = opts.as_ref() {
            if c.inflight > 0 {
                o.inflight = c.inflight as usize;
            }
            if c.timeout_ms > 0 {
                o.timeout = Duration::from_millis(c.timeout_ms as u64);
            }
            if !c.key_file.is_null() {
                let p = path_of(string(c.key_file, "key_file")?);
                o.key = Some(Key::from_file(&p).map_err(|e| Fail::arg(format!("key_file: {e}")))?);
            }
        }
        let dev = DeviceHandle::open(uri, &o)?;
        Ok(Box::new(HwDevice { dev, known: Vec::new(), ready: VecDeque::new(), last_error: CString::default(), broken: None }))
    }));
    let r = r.unwrap_or_else(|_| Err(Fail::new(HW_INTERNAL, "internal error (a panic in heapwire)")));
    match r {
        Ok(d) => {
            write_text(errbuf, errbuf_cap, "");
            *out = Box::into_raw(d);
            0
        }
        Err(f) => {
            write_text(errbuf, errbuf_cap, &f.text);
            f.code
        }
    }
}

/// DestroyDevice: waits for the replies in flight, then frees the handle (also when that
/// fails: `HW_LINK`). Results not yet taken with `hw_device_next` are dropped. NULL is
/// ignored.
///
/// # Safety
/// `dev` is NULL or a handle from `hw_device_open`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn hw_device_close(dev: *mut HwDevice) -> i32 {
    if dev.is_null() {
        return 0;
    }
    catch_unwind(AssertUnwindSafe(|| {
        let d = Box::from_raw(dev);
        if d.broken.is_some() {
            return 0;
        }
        match d.dev.close() {
            Ok(()) => 0,
            Err(e) => Fail::from(e).code,
        }
    }))
    .unwrap_or(HW_INTERNAL)
}

/// The text of the last failed call on `dev` ("" after a success), valid until the next
/// call on `dev`.
///
/// # Safety
/// `dev` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_device_last_error(dev: *const HwDevice) -> *const c_char {
    match dev.as_ref() {
        Some(d) => d.last_error.as_ptr(),
        None => c"device handle is NULL".as_ptr(),
    }
}

/// The device's header block, as read when it was opened.
///
/// # Safety
/// `dev` is NULL or a live handle; `out` is NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_device_header(dev: *mut HwDevice, out: *mut HwDeviceInfo) -> i32 {
    dev_call(dev, std::ptr::null_mut(), |d| {
        *out_param(out, "out")? = HwDeviceInfo::from(d.dev.header());
        Ok(())
    })
}

/// The device's counters (read from its registers).
///
/// # Safety
/// `dev` is NULL or a live handle; `out` is NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_device_counters(dev: *mut HwDevice, out: *mut HwDeviceStats) -> i32 {
    dev_call(dev, std::ptr::null_mut(), |d| {
        let out = out_param(out, "out")?;
        let c = d.dev.counters()?;
        let get = |n: &str| c.iter().find(|(k, _)| *k == n).map_or(0, |(_, v)| *v);
        *out = HwDeviceStats {
            requests: get("requests"),
            bytes_in: get("bytes_in"),
            bytes_out: get("bytes_out"),
            rejections: get("rejections"),
            protocol_errors: get("protocol_errors"),
            reloads: get("reloads"),
            reload_bytes: get("reload_bytes"),
        };
        Ok(())
    })
}

/// Slot `slot`'s state, checksum, table length, type count and schema name.
///
/// # Safety
/// `dev` is NULL or a live handle; `out` is NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_device_slot_info(dev: *mut HwDevice, slot: u32, out: *mut HwDeviceSlot) -> i32 {
    dev_call(dev, std::ptr::null_mut(), |d| {
        let out = out_param(out, "out")?;
        let slots = d.dev.header().slots;
        if slot >= slots {
            return Err(Fail::arg(format!("slot {slot} does not exist (the device has {slots})")));
        }
        let info = d.dev.slot_info()?.swap_remove(slot as usize);
        let mut name = [0 as c_char; NAME_BYTES + 1];
        for (n, b) in name.iter_mut().zip(info.name.bytes().take(NAME_BYTES)) {
            *n = b as c_char;
        }
        *out = HwDeviceSlot { state: info.state, checksum: info.checksum, table_len: info.table_len, types: info.types, name };
        Ok(())
    })
}

/// The register window of a read or write: `count` words from `addr` in pieces of at
/// most one message's worth, each with its address; an empty range if `count` is 0.
fn reg_pieces(addr: u32, count: usize, values: *const u32) -> Result<Vec<(u32, std::ops::Range<usize>)>, Fail> {
    if !values.is_aligned() {
        return Err(Fail::arg("values is misaligned"));
    }
    let max = heapwire_device::proto::MAX_REGS;
    (0..count)
        .step_by(max)
        .map(|at| {
            let a = u32::try_from(at).ok().and_then(|o| addr.checked_add(o)).ok_or_else(|| Fail::arg("register range wraps around"))?;
            Ok((a, at..(at + max).min(count)))
        })
        .collect()
}

/// ReadDevReg: `count` 32-bit registers from word address `addr` into `values`.
///
/// # Safety
/// `dev` is NULL or a live handle; `values` has room for `count` words.
#[no_mangle]
pub unsafe extern "C" fn hw_device_read_regs(dev: *mut HwDevice, addr: u32, values: *mut u32, count: usize) -> i32 {
    dev_call(dev, std::ptr::null_mut(), |d| {
        let pieces = reg_pieces(addr, count, values)?;
        let bytes = output(values as *mut u8, count.saturating_mul(4), "values", &[])?;
        for (a, r) in pieces {
            let w = d.dev.read_regs(a, r.len() as u16)?;
            // `bytes` is `values`, aligned and `count` words long (checked above)
            std::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut u32, count)[r].copy_from_slice(&w);
        }
        Ok(())
    })
}

/// WriteDevReg: `count` 32-bit registers from word address `addr`.
///
/// # Safety
/// `dev` is NULL or a live handle; `values` has `count` readable words.
#[no_mangle]
pub unsafe extern "C" fn hw_device_write_regs(dev: *mut HwDevice, addr: u32, values: *const u32, count: usize) -> i32 {
    dev_call(dev, std::ptr::null_mut(), |d| {
        let pieces = reg_pieces(addr, count, values)?;
        let bytes = crate::input(values as *const u8, count.saturating_mul(4), "values")?;
        for (a, r) in pieces {
            d.dev.write_regs(a, &std::slice::from_raw_parts(bytes.as_ptr() as *const u32, count)[r])?;
        }
        Ok(())
    })
}

/// SetBitstreams: installs the compiled schema of `s` into `slot` under `name` (NULL: its
/// first message's package), with `s`'s per-type registers. Requests in flight on the
/// slot finish first.
///
/// # Safety
/// `dev` and `s` are NULL or live handles; `name` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn hw_device_install(dev: *mut HwDevice, slot: u32, s: *const HwSchema, name: *const c_char) -> i32 {
    dev_call(dev, std::ptr::null_mut(), |d| {
        let h = schema_arg(s)?;
        let name = if name.is_null() { None } else { Some(string(name, "name")?.to_string_lossy().into_owned()) };
        let schema = d.schema(h, name)?;
        d.dev.install(slot, &schema)?;
        Ok(())
    })
}

/// Transmit: queues a request (message type `msg_type` of `s` from `len` bytes at
/// `input` on `wire`, its image laid out for address `base`) and sets `*ticket`. Sent at
/// once while fewer than the window are in flight; a schema that no slot holds is
/// installed first (into the least recently used free slot). The wire, the type and, for
/// object graphs, that it is a class are checked here, as `hw_decode` checks them
/// (`HW_BAD_ARGUMENT`, `HW_BAD_TYPE`, `HW_NOT_A_CLASS`; nothing is queued).
///
/// # Safety
/// `dev` and `s` are NULL or live handles; `input` has `len` readable bytes; `ticket`
/// and `err` are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_device_submit(
    dev: *mut HwDevice,
    s: *const HwSchema,
    wire: u32,
    msg_type: i32,
    input: *const u8,
    len: usize,
    base: u64,
    ticket: *mut u64,
    err: *mut HwError,
) -> i32 {
    if !ticket.is_aligned() {
        return dev_call(dev, err, |_| Err(Fail::arg("ticket is misaligned")));
    }
    dev_call(dev, err, |d| {
        let h = schema_arg(s)?;
        // as hw_decode: the wire, the type and (object graphs) its class checked here
        let (wire, msg) = h.request(wire, msg_type)?;
        let input = crate::input(input, len, "input")?.to_vec();
        let schema = d.schema(h, None)?;
        let job = Job { schema, msg: msg as u32, wire, base, max_depth: h.options.max_depth, input };
        let t = d.dev.submit(job)?;
        if let Some(p) = ticket.as_mut() {
            *p = t;
        }
        Ok(())
    })
}

/// Receive: the result of the oldest request not yet received (blocks until it is back).
/// `*ticket` is its ticket. An image is copied into `out` (`*written` its size);
/// `HW_BUFFER_TOO_SMALL` (with `err->needed`) keeps the result for the next call. A
/// rejection gives the kind with `err->offset`, as `hw_decode`; a request the device
/// refused gives `HW_DEVICE` with the device's code in `err->offset`.
///
/// # Safety
/// `dev` is NULL or a live handle; `out` has `cap` writable bytes; `ticket`, `written`
/// and `err` are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_device_next(
    dev: *mut HwDevice,
    ticket: *mut u64,
    out: *mut c_void,
    cap: usize,
    written: *mut usize,
    err: *mut HwError,
) -> i32 {
    if !written.is_aligned() || !ticket.is_aligned() {
        return dev_call(dev, err, |_| Err(Fail::arg("ticket or written is misaligned")));
    }
    if let Some(w) = written.as_mut() {
        *w = 0;
    }
    dev_call(dev, err, |d| {
        let out = output(out as *mut u8, cap, "out", &[])?;
        let (t, r) = match d.ready.pop_front() {
            Some(r) => r,
            None if d.dev.outstanding() == 0 => return Err(Fail::arg("no request outstanding (every result was received)")),
            None => d.dev.next()?,
        };
        if let Some(p) = ticket.as_mut() {
            *p = t;
        }
        match r {
            Ok(image) => {
                if image.bytes.len() > out.len() {
                    let f = Fail::reject(Rejection { needed: image.bytes.len() as u64, ..Rejection::new(RejectKind::BufferTooSmall, 0) });
                    d.ready.push_front((t, Ok(image)));
                    return Err(f);
                }
                out[..image.bytes.len()].copy_from_slice(&image.bytes);
                if let Some(w) = written.as_mut() {
                    *w = image.bytes.len();
                }
                Ok(())
            }
            // the device's own output memory was too small: not the caller's buffer
            Err(JobError::Rejected(r)) if r.kind == RejectKind::BufferTooSmall => {
                Err(Fail::reject(Rejection { kind: RejectKind::ImageTooLarge, ..r }))
            }
            Err(JobError::Rejected(r)) => Err(Fail::reject(r)),
            Err(JobError::Device { code, text }) => Err(Fail::new(HW_DEVICE, format!("device error {code}: {text}")).at(code as u64)),
        }
    })
}

/// Requests submitted and not yet received with `hw_device_next` (0 for NULL).
///
/// # Safety
/// `dev` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_device_outstanding(dev: *const HwDevice) -> u64 {
    dev.as_ref().map_or(0, |d| d.dev.outstanding() + d.ready.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use heapwire_device::regs::COUNTER_NAMES;

    #[test]
    fn struct_layouts() {
        assert_eq!((std::mem::size_of::<HwDeviceOptions>(), std::mem::align_of::<HwDeviceOptions>()), (8 + std::mem::size_of::<usize>(), std::mem::align_of::<usize>()));
        assert_eq!(std::mem::size_of::<HwDeviceInfo>(), 40);
        assert_eq!(std::mem::size_of::<HwDeviceStats>(), 56);
        assert_eq!(std::mem::size_of::<HwDeviceSlot>(), 16 + NAME_BYTES + 1 + 3);
        assert_eq!(STATS_FIELDS, COUNTER_NAMES, "hw_device_stats follows the device's counter registers");
    }
}
