//! heapwire's C ABI (`include/heapwire.h`, `docs/c-api.md`).
//!
//! One handle (`hw_schema`) owns a compiled schema (`Arc<CompiledSchema>`), the CPU
//! engine behind the engine door, the per-request [`Options`] (per-type registers, depth
//! and image limits) and scratch buffers. Through it: protobuf and object-graph decode
//! into a caller's buffer at a base, protobuf and object-graph encode from an image,
//! object-graph encode of live objects, and the JSON front end.
//!
//! Through a second handle (`hw_device`, `src/device.rs`): a device of `heapwire-device`
//! (in process, over UDP or TCP) opened by URI, schemas installed into its slots, requests
//! streamed to it and their images or rejections received in order.
//!
//! Every entry point checks its pointer arguments (NULL with a non-zero length,
//! misaligned out-parameters, overlapping input and output) and catches panics, so
//! nothing unwinds across the boundary; wire, JSON and image inputs are untrusted.
//! Results are a code: 0, a [`RejectKind::code`], or one of the `HW_*` codes ≥ 100
//! below. The header's code list is generated from [`RejectKind::ALL`] ([`codes_block`])
//! and a test checks it and every prototype against this file.

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use heapwire_cpu::objgraph::{self, ImageMemory, RawMemory, Tables};
use heapwire_cpu::protobuf::encode::{encode_with, EncodeError, EncodeOptions};
use heapwire_cpu::CpuEngine;
use heapwire_engine::{Engine, Error as EngineError, Options, RejectKind, Rejection, Request, Wire};
use heapwire_image::ImageView;
use heapwire_schema::{CompiledSchema, LayoutOptions, PointerWidth, NONE};

mod device;
pub use device::{HwDevice, HwDeviceInfo, HwDeviceOptions, HwDeviceSlot, HwDeviceStats, STATS_FIELDS};
pub use device::{
    hw_device_close, hw_device_counters, hw_device_header, hw_device_install, hw_device_last_error, hw_device_next, hw_device_open,
    hw_device_outstanding, hw_device_read_regs, hw_device_slot_info, hw_device_submit, hw_device_write_regs,
};

/// A NULL pointer with a non-zero length, a NULL handle or string, a misaligned
/// out-parameter, overlapping input and output, an unknown wire value, a bad option.
pub const HW_BAD_ARGUMENT: i32 = 100;
/// A message type index that the schema does not have.
pub const HW_BAD_TYPE: i32 = 101;
/// Encoding from an image: a struct or pointer outside the image, or more data than it
/// holds (shared or cyclic pointers); `offset` is the image offset.
pub const HW_BAD_IMAGE: i32 = 102;
/// JSON text that does not parse or does not fit the schema; `offset` is the byte.
pub const HW_JSON: i32 = 103;
/// A bug in heapwire (a panic, caught): the handle refuses every later call.
pub const HW_INTERNAL: i32 = 104;
/// A device refused a request or an operation; `offset` is the device's error code (its
/// `C_ERR_KIND` register: 64 and above, `heapwire_device::DeviceError::code`).
pub const HW_DEVICE: i32 = 105;
/// The link to a device failed (timeout, closed, a reply that does not parse) or the
/// device is not one this host speaks: the device handle refuses every later call.
pub const HW_LINK: i32 = 106;

/// The codes of this ABI that are not reject kinds: (value, C suffix, name).
pub const OWN_CODES: [(i32, &str, &str); 7] = [
    (HW_BAD_ARGUMENT, "BAD_ARGUMENT", "bad_argument"),
    (HW_BAD_TYPE, "BAD_TYPE", "bad_type"),
    (HW_BAD_IMAGE, "BAD_IMAGE", "bad_image"),
    (HW_JSON, "JSON", "json"),
    (HW_INTERNAL, "INTERNAL", "internal"),
    (HW_DEVICE, "DEVICE", "device"),
    (HW_LINK, "LINK", "link"),
];

/// `wire` argument values.
pub const HW_WIRE_PROTOBUF: u32 = 0;
pub const HW_WIRE_OBJGRAPH: u32 = 1;

/// The code list of `include/heapwire.h`, between its `BEGIN CODES` and `END CODES`
/// lines: `HW_OK`, every [`RejectKind`] as `HW_<NAME>` with its stable code, then
/// [`OWN_CODES`].
pub fn codes_block() -> String {
    let mut s = String::from("enum hw_code {\n  HW_OK = 0,\n");
    for k in RejectKind::ALL {
        s += &format!("  HW_{} = {},\n", k.name().to_ascii_uppercase(), k.code());
    }
    for (i, (v, c, _)) in OWN_CODES.iter().enumerate() {
        s += &format!("  HW_{c} = {v}{}\n", if i + 1 < OWN_CODES.len() { "," } else { "" });
    }
    s + "};\n"
}

/// `header` (the text of `include/heapwire.h`) with its code list replaced by
/// [`codes_block`]: the lines after `BEGIN CODES` up to `/* END CODES */`, from the line
/// that starts `enum hw_code`. `None` if the markers are missing.
pub fn with_codes(header: &str) -> Option<String> {
    let begin = header.find("BEGIN CODES")?;
    let start = begin + header[begin..].find("\nenum hw_code")? + 1;
    let end = start + header[start..].find("/* END CODES */")?;
    Some(format!("{}{}{}", &header[..start], codes_block(), &header[end..]))
}

/// What a call reports back: `hw_error` and the handle's last-error text.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HwError {
    /// The call's return value.
    pub code: i32,
    /// Decode: byte offset in the input; object-graph encode: address; protobuf encode:
    /// image offset; JSON: byte offset in the text (parse) or image (print).
    pub offset: u64,
    /// `HW_BUFFER_TOO_SMALL`: the bytes the output needs.
    pub needed: u64,
}

/// The handle: one compiled schema and everything a call needs besides its arguments.
/// Not thread-safe; `hw_clone` makes another for another thread.
pub struct HwSchema {
    schema: Arc<CompiledSchema>,
    engine: CpuEngine,
    options: Options,
    /// Object-graph class tables for encoding and JSON parsing, made on first use.
    tables: Option<Tables>,
    printer: Option<heapwire_json::Printer>,
    /// Encoded wire bytes or JSON text before they are copied out.
    buf: Vec<u8>,
    /// The image JSON is printed from.
    image: Vec<u8>,
    last_error: CString,
    poisoned: bool,
}

impl HwSchema {
    fn new(schema: Arc<CompiledSchema>, options: Options) -> Box<HwSchema> {
        Box::new(HwSchema {
            engine: CpuEngine::new(schema.clone()),
            schema,
            options,
            tables: None,
            printer: None,
            buf: Vec::new(),
            image: Vec::new(),
            last_error: CString::default(),
            poisoned: false,
        })
    }

    fn open(schema: CompiledSchema) -> Box<HwSchema> {
        // Unset registers hold the message index (the engine's default, made explicit).
        let options = Options { type_words: (0..schema.messages.len() as u64).collect(), ..Options::default() };
        HwSchema::new(Arc::new(schema), options)
    }

    fn msg(&self, msg_type: i32) -> Result<usize, Fail> {
        match usize::try_from(msg_type) {
            Ok(m) if m < self.schema.messages.len() => Ok(m),
            _ => Err(Fail::new(HW_BAD_TYPE, format!("type {msg_type} out of range (the schema has {} message types)", self.schema.messages.len()))),
        }
    }

    /// `msg` must be a class for object graphs.
    fn class(&self, msg: usize) -> Result<(), Fail> {
        match self.schema.class_of(msg) {
            Some(_) => Ok(()),
            None => Err(Fail::reject(Rejection::new(RejectKind::NotAClass, 0))
                .text(format!("{} is not a class (option (heapwire.class))", self.schema.messages[msg].full_name))),
        }
    }

    fn request(&self, wire: u32, msg_type: i32) -> Result<(Wire, usize), Fail> {
        let wire = wire_of(wire)?;
        let msg = self.msg(msg_type)?;
        if wire == Wire::Objgraph {
            self.class(msg)?;
        }
        Ok((wire, msg))
    }
}

fn wire_of(w: u32) -> Result<Wire, Fail> {
    match w {
        HW_WIRE_PROTOBUF => Ok(Wire::Protobuf),
        HW_WIRE_OBJGRAPH => Ok(Wire::Objgraph),
        _ => Err(Fail::arg(format!("wire {w} is neither HW_WIRE_PROTOBUF (0) nor HW_WIRE_OBJGRAPH (1)"))),
    }
}

/// A failed call.
struct Fail {
    code: i32,
    offset: u64,
    needed: u64,
    text: String,
}

impl Fail {
    fn new(code: i32, text: impl Into<String>) -> Fail {
        Fail { code, offset: 0, needed: 0, text: text.into() }
    }
    fn arg(text: impl Into<String>) -> Fail {
        Fail::new(HW_BAD_ARGUMENT, text)
    }
    fn at(mut self, offset: u64) -> Fail {
        self.offset = offset;
        self
    }
    fn text(mut self, text: String) -> Fail {
        self.text = text;
        self
    }
    fn reject(r: Rejection) -> Fail {
        let mut text = r.to_string();
        if r.kind == RejectKind::BufferTooSmall {
            text += &format!(" ({} bytes needed)", r.needed);
        }
        Fail { code: r.kind.code() as i32, offset: r.offset, needed: r.needed, text }
    }
    fn internal() -> Fail {
        Fail::new(HW_INTERNAL, "internal error (a panic in heapwire); this handle refuses further calls")
    }
}

impl From<EngineError> for Fail {
    fn from(e: EngineError) -> Fail {
        match e {
            EngineError::Rejected(r) => Fail::reject(r),
            EngineError::Engine(m) => Fail::arg(m),
        }
    }
}

fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

/// Copies `msg` into the caller's `cap` bytes at `buf`, cut at a character boundary and
/// NUL-terminated.
unsafe fn write_text(buf: *mut c_char, cap: usize, msg: &str) {
    if buf.is_null() || cap == 0 {
        return;
    }
    let mut n = msg.len().min(cap - 1);
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    std::ptr::copy_nonoverlapping(msg.as_ptr(), buf as *mut u8, n);
    *buf.add(n) = 0;
}

fn too_long(len: usize, what: &str) -> Result<(), Fail> {
    if len > isize::MAX as usize {
        return Err(Fail::arg(format!("{what}: length {len} is larger than any object")));
    }
    Ok(())
}

/// The caller's `len` readable bytes at `p` (NULL only with length 0).
unsafe fn input<'a>(p: *const u8, len: usize, what: &str) -> Result<&'a [u8], Fail> {
    too_long(len, what)?;
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Fail::arg(format!("{what} is NULL with length {len}")));
    }
    if (p as usize).checked_add(len).is_none() {
        return Err(Fail::arg(format!("{what}: address range wraps around")));
    }
    Ok(std::slice::from_raw_parts(p, len))
}

/// The caller's `cap` writable bytes at `p`, which must not overlap `inputs`.
unsafe fn output<'a>(p: *mut u8, cap: usize, what: &str, inputs: &[&[u8]]) -> Result<&'a mut [u8], Fail> {
    too_long(cap, what)?;
    if cap == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Fail::arg(format!("{what} is NULL with capacity {cap}")));
    }
    let (s, e) = (p as usize, (p as usize).checked_add(cap).ok_or_else(|| Fail::arg(format!("{what}: address range wraps around")))?);
    for i in inputs {
        let (is, ie) = (i.as_ptr() as usize, i.as_ptr() as usize + i.len());
        if !i.is_empty() && is < e && s < ie {
            return Err(Fail::arg(format!("{what} overlaps an input")));
        }
    }
    Ok(std::slice::from_raw_parts_mut(p, cap))
}

/// Copies finished output bytes into the caller's buffer, or says how large it must be.
unsafe fn deliver(bytes: &[u8], out: *mut u8, cap: usize, inputs: &[&[u8]]) -> Result<usize, Fail> {
    let out = output(out, cap, "out", inputs)?;
    heapwire_engine::copy_into(bytes, out).map_err(Fail::reject)?;
    Ok(bytes.len())
}

unsafe fn string<'a>(p: *const c_char, what: &str) -> Result<&'a CStr, Fail> {
    if p.is_null() {
        return Err(Fail::arg(format!("{what} is NULL")));
    }
    Ok(CStr::from_ptr(p))
}

#[cfg(unix)]
fn path_of(s: &CStr) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(s.to_bytes()))
}

#[cfg(not(unix))]
fn path_of(s: &CStr) -> PathBuf {
    PathBuf::from(s.to_string_lossy().into_owned())
}

/// Runs one call on a handle: checks the handle and the out-parameters, catches a panic,
/// fills `*written` (0 on failure), `*err` and the handle's last-error text.
unsafe fn call(h: *mut HwSchema, written: *mut usize, err: *mut HwError, f: impl FnOnce(&mut HwSchema) -> Result<usize, Fail>) -> i32 {
    if !written.is_aligned() || !err.is_aligned() {
        return HW_BAD_ARGUMENT;
    }
    let r = match h.as_mut() {
        None => Err(Fail::arg("handle is NULL")),
        Some(hs) if hs.poisoned => Err(Fail::internal()),
        Some(hs) => match catch_unwind(AssertUnwindSafe(|| f(hs))) {
            Ok(r) => r,
            Err(_) => {
                hs.poisoned = true;
                Err(Fail::internal())
            }
        },
    };
    let (n, e) = match r {
        Ok(n) => (n, Fail::new(0, "")),
        Err(f) => (0, f),
    };
    if !written.is_null() {
        *written = n;
    }
    if !err.is_null() {
        *err = HwError { code: e.code, offset: e.offset, needed: e.needed };
    }
    if let Some(hs) = h.as_mut() {
        // No allocation on the success path while the text is already empty.
        if !(e.text.is_empty() && hs.last_error.is_empty()) {
            hs.last_error = cstring(&e.text);
        }
    }
    e.code
}

/// Runs a call that returns a handle: NULL and the text in `errbuf` on failure.
unsafe fn opening(errbuf: *mut c_char, errbuf_cap: usize, f: impl FnOnce() -> Result<Box<HwSchema>, String>) -> *mut HwSchema {
    let r = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err("internal error (a panic in heapwire)".into()));
    match r {
        Ok(h) => {
            write_text(errbuf, errbuf_cap, "");
            Box::into_raw(h)
        }
        Err(m) => {
            write_text(errbuf, errbuf_cap, &m);
            std::ptr::null_mut()
        }
    }
}

/// Compiles a `.proto` file (or loads a table file given by path) into a handle.
///
/// # Safety
/// `path` is NUL-terminated; `include_dirs` is NULL (with `include_count` 0) or holds
/// `include_count` NUL-terminated strings; `errbuf` is NULL or has `errbuf_cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn hw_open(
    path: *const c_char,
    include_dirs: *const *const c_char,
    include_count: usize,
    pointer_width: u32,
    header_words: i32,
    errbuf: *mut c_char,
    errbuf_cap: usize,
) -> *mut HwSchema {
    opening(errbuf, errbuf_cap, || {
        let path = path_of(string(path, "path").map_err(|f| f.text)?);
        if include_count > 0 && (include_dirs.is_null() || !include_dirs.is_aligned()) {
            return Err(format!("include_dirs is NULL or misaligned with include_count {include_count}"));
        }
        too_long(include_count.saturating_mul(std::mem::size_of::<usize>()), "include_dirs").map_err(|f| f.text)?;
        let mut includes = Vec::with_capacity(include_count);
        for i in 0..include_count {
            includes.push(path_of(string(*include_dirs.add(i), "include directory").map_err(|f| f.text)?));
        }
        let pointer_width = match pointer_width {
            32 => PointerWidth::P32,
            64 => PointerWidth::P64,
            w => return Err(format!("pointer width {w}: must be 32 or 64")),
        };
        let header_words = match header_words {
            0 => false,
            1 => true,
            v => return Err(format!("header_words {v}: must be 0 or 1")),
        };
        let s = heapwire_schema::load(&path, &includes, LayoutOptions { pointer_width, header_words }).map_err(|e| e.to_string())?;
        Ok(HwSchema::open(s))
    })
}

/// Loads a table file (`heapwire compile`'s `.hwsc`) from memory.
///
/// # Safety
/// `bytes` has `len` readable bytes; `errbuf` is NULL or has `errbuf_cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn hw_open_table(bytes: *const u8, len: usize, errbuf: *mut c_char, errbuf_cap: usize) -> *mut HwSchema {
    opening(errbuf, errbuf_cap, || {
        let bytes = input(bytes, len, "table").map_err(|f| f.text)?;
        let s = heapwire_schema::table_file::read(bytes).map_err(|e| e.to_string())?;
        Ok(HwSchema::open(s))
    })
}

/// A new handle on the same compiled schema (shared, not copied) with the same
/// registers and limits, for another thread. NULL if `h` is NULL or unusable.
///
/// # Safety
/// `h` is NULL or a live handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn hw_clone(h: *const HwSchema) -> *mut HwSchema {
    match h.as_ref() {
        Some(h) if !h.poisoned => catch_unwind(AssertUnwindSafe(|| Box::into_raw(HwSchema::new(h.schema.clone(), h.options.clone()))))
            .unwrap_or(std::ptr::null_mut()),
        _ => std::ptr::null_mut(),
    }
}

/// # Safety
/// `h` is NULL or a handle from `hw_open*`/`hw_clone`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn hw_close(h: *mut HwSchema) {
    if !h.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(h))));
    }
}

/// The text of the last failed call on `h` ("" after a success), valid until the next
/// call on `h`.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_last_error(h: *const HwSchema) -> *const c_char {
    match h.as_ref() {
        Some(h) => h.last_error.as_ptr(),
        None => c"handle is NULL".as_ptr(),
    }
}

/// Names of every code, NUL-terminated, made once from [`RejectKind::name`].
fn code_names() -> &'static [(i32, CString)] {
    static NAMES: OnceLock<Vec<(i32, CString)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut v = vec![(0, cstring("ok"))];
        v.extend(RejectKind::ALL.iter().map(|k| (k.code() as i32, cstring(k.name()))));
        v.extend(OWN_CODES.iter().map(|&(c, _, n)| (c, cstring(n))));
        v
    })
}

/// `"ok"`, `"truncated"`, `"bad_argument"`, ...; `"unknown"` for other values.
#[no_mangle]
pub extern "C" fn hw_code_name(code: i32) -> *const c_char {
    catch_unwind(|| code_names().iter().find(|(c, _)| *c == code).map(|(_, n)| n.as_ptr()))
        .ok()
        .flatten()
        .unwrap_or(c"unknown".as_ptr())
}

/// Number of message types (valid type indices are 0 .. count-1); 0 for NULL.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_type_count(h: *const HwSchema) -> i32 {
    h.as_ref().map(|h| i32::try_from(h.schema.messages.len()).unwrap_or(i32::MAX)).unwrap_or(0)
}

/// Index of a message type by full name (`"pkg.Msg"`, `"pkg.Outer.Inner"`), or -1.
///
/// # Safety
/// `h` is NULL or a live handle; `full_name` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn hw_type(h: *const HwSchema, full_name: *const c_char) -> i32 {
    let (Some(h), false) = (h.as_ref(), full_name.is_null()) else { return -1 };
    let Ok(name) = CStr::from_ptr(full_name).to_str() else { return -1 };
    h.schema.message_index(name).and_then(|i| i32::try_from(i).ok()).unwrap_or(-1)
}

fn message(h: Option<&HwSchema>, msg_type: i32) -> Option<&heapwire_schema::Message> {
    h?.schema.messages.get(usize::try_from(msg_type).ok()?)
}

/// Size in bytes of a message type's struct in a protobuf image, or 0.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_type_size(h: *const HwSchema, msg_type: i32) -> u32 {
    message(h.as_ref(), msg_type).map(|m| m.size).unwrap_or(0)
}

/// Alignment of a message type's struct in a protobuf image, or 0.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_type_align(h: *const HwSchema, msg_type: i32) -> u32 {
    message(h.as_ref(), msg_type).map(|m| m.align).unwrap_or(0)
}

fn class(h: Option<&HwSchema>, msg_type: i32) -> Option<&heapwire_schema::Class> {
    let h = h?;
    let c = h.schema.class_of(usize::try_from(msg_type).ok()?)?;
    Some(&h.schema.classes[c])
}

/// Object size of a class in an object-graph image, or 0 (not a class).
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_class_size(h: *const HwSchema, msg_type: i32) -> u32 {
    class(h.as_ref(), msg_type).map(|c| c.size).unwrap_or(0)
}

/// Object-graph wire type id of a class, or -1 (abstract, or not a class).
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_class_type_id(h: *const HwSchema, msg_type: i32) -> i64 {
    match class(h.as_ref(), msg_type) {
        Some(c) if c.type_id != NONE => c.type_id as i64,
        _ => -1,
    }
}

/// The layout's pointer width in bits (32 or 64); 0 for NULL.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_pointer_width(h: *const HwSchema) -> u32 {
    h.as_ref().map(|h| h.schema.ptr() * 8).unwrap_or(0)
}

/// 1 if every protobuf struct starts with a header word, else 0.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_header_words(h: *const HwSchema) -> i32 {
    h.as_ref().map(|h| h.schema.layout.header_words as i32).unwrap_or(0)
}

/// Sets the per-type register of message type `msg_type`: the header word its structs (with
/// header words) or objects (classes) get, by which object-graph encoding also
/// recognizes a class. Unset registers hold the type index.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_set_register(h: *mut HwSchema, msg_type: i32, word: u64) -> i32 {
    call(h, std::ptr::null_mut(), std::ptr::null_mut(), |h| {
        let m = h.msg(msg_type)?;
        if h.schema.ptr() == 4 && word > u32::MAX as u64 {
            return Err(Fail::arg(format!("register {word:#x} does not fit a 32-bit header word")));
        }
        h.options.type_words[m] = word;
        Ok(0)
    })
}

/// Deepest nesting below the root that decoding accepts (default 100), also the limit
/// for protobuf encoding from an image.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_set_max_depth(h: *mut HwSchema, max_depth: u32) -> i32 {
    call(h, std::ptr::null_mut(), std::ptr::null_mut(), |h| {
        h.options.max_depth = max_depth;
        Ok(0)
    })
}

/// Largest image decoding produces (default 1 GiB); larger ones are rejected with
/// `HW_IMAGE_TOO_LARGE`.
///
/// # Safety
/// `h` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn hw_set_max_image_bytes(h: *mut HwSchema, max_image_bytes: u64) -> i32 {
    call(h, std::ptr::null_mut(), std::ptr::null_mut(), |h| {
        h.options.max_image_bytes = max_image_bytes;
        Ok(0)
    })
}

/// Decodes `input` (`wire`: protobuf or object graph) as message type `msg_type` into the
/// caller's `cap` bytes at `out`, laid out for address `base`; `*written` is the image
/// size. A too-small buffer gives `HW_BUFFER_TOO_SMALL` with `err->needed`.
///
/// # Safety
/// `h` is NULL or a live handle; `input` has `len` readable bytes; `out` has `cap`
/// writable bytes; `written` and `err` are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_decode(
    h: *mut HwSchema,
    wire: u32,
    msg_type: i32,
    input: *const u8,
    len: usize,
    base: u64,
    out: *mut c_void,
    cap: usize,
    written: *mut usize,
    err: *mut HwError,
) -> i32 {
    call(h, written, err, |h| {
        // An object graph's class is checked once, by the decoder; a refusal is explained
        // as `request` would have.
        let (wire, msg) = (wire_of(wire)?, h.msg(msg_type)?);
        let input = self::input(input, len, "input")?;
        let out = output(out as *mut u8, cap, "out", &[input])?;
        h.options.base = base;
        let req = Request { msg, wire, input, options: &h.options };
        match h.engine.decode_into(&req, out) {
            Ok(d) => Ok(d.len),
            Err(e) => {
                if wire == Wire::Objgraph {
                    h.class(msg)?;
                }
                Err(e.into())
            }
        }
    })
}

/// Encodes the message at address `root` of an image (`len` bytes at `image`, laid out
/// for address `base`) to `wire` bytes. Protobuf: `root` is normally `base`; object
/// graphs: the root object's address (0: an empty graph).
///
/// # Safety
/// `h` is NULL or a live handle; `image` has `len` readable bytes; `out` has `cap`
/// writable bytes; `written` and `err` are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_encode_image(
    h: *mut HwSchema,
    wire: u32,
    msg_type: i32,
    image: *const c_void,
    len: usize,
    base: u64,
    root: u64,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
    err: *mut HwError,
) -> i32 {
    call(h, written, err, |h| {
        let (wire, msg) = h.request(wire, msg_type)?;
        let bytes = input(image as *const u8, len, "image")?;
        let mut buf = std::mem::take(&mut h.buf);
        buf.clear();
        let r = match wire {
            Wire::Protobuf => {
                let off = root.checked_sub(base).filter(|&o| o < len as u64).ok_or_else(|| {
                    Fail::new(HW_BAD_IMAGE, format!("root {root:#x} is outside the image ({len} bytes at {base:#x})")).at(root.wrapping_sub(base))
                })?;
                let view = ImageView::for_schema(&h.schema, bytes, base);
                let opts = EncodeOptions { max_depth: h.options.max_depth as usize + 1, budget: true };
                encode_with(&h.schema, msg, &view, off as usize, &mut buf, &opts).map_err(|e| match e {
                    EncodeError::TooDeep { offset, .. } => Fail::new(RejectKind::DepthExceeded.code() as i32, e.to_string()).at(offset),
                    EncodeError::Image(ref v) => Fail::new(HW_BAD_IMAGE, e.to_string()).at(v.offset),
                    EncodeError::TooLarge { offset, .. } => Fail::new(HW_BAD_IMAGE, e.to_string()).at(offset),
                    EncodeError::BadType(_) => Fail::new(HW_BAD_TYPE, e.to_string()),
                })
            }
            Wire::Objgraph => {
                let schema = &h.schema;
                let t = h.tables.get_or_insert_with(|| Tables::new(schema));
                objgraph::encode(schema, t, &ImageMemory { bytes, base }, root, msg, &h.options.type_words, &mut buf)
                    .map_err(|e| Fail::reject(e.into()))
            }
        };
        let r = r.and_then(|()| deliver(&buf, out, cap, &[bytes]));
        h.buf = buf;
        r
    })
}

/// Serializes the live objects of this process reachable from `root` (an object of
/// class `msg_type` or a subclass; NULL: an empty graph) as an object graph. Every reachable
/// object's header word must be a register value of a concrete class and its layout
/// heapwire's (the generated header's static_asserts check it); the schema's pointer
/// width must be this process's.
///
/// # Safety
/// As above, and every reachable object is readable and unchanged during the call;
/// `out` has `cap` writable bytes; `written` and `err` are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_encode_objects(
    h: *mut HwSchema,
    msg_type: i32,
    root: *const c_void,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
    err: *mut HwError,
) -> i32 {
    call(h, written, err, |h| {
        let msg = h.msg(msg_type)?;
        h.class(msg)?;
        if h.schema.ptr() as usize != std::mem::size_of::<usize>() {
            return Err(Fail::arg(format!("the schema's pointers are {} bits, this process's {}", h.schema.ptr() * 8, usize::BITS)));
        }
        let mem = RawMemory::new();
        let mut buf = std::mem::take(&mut h.buf);
        let schema = &h.schema;
        let t = h.tables.get_or_insert_with(|| Tables::new(schema));
        let r = objgraph::encode(schema, t, &mem, root as usize as u64, msg, &h.options.type_words, &mut buf)
            .map_err(|e| Fail::reject(e.into()))
            .and_then(|()| deliver(&buf, out, cap, &[]));
        h.buf = buf;
        r
    })
}

fn json_fail(e: heapwire_json::Error) -> Fail {
    let offset = match &e {
        heapwire_json::Error::Protobuf(p) => p.offset(),
        heapwire_json::Error::Objgraph(o) => o.offset as u64,
    };
    Fail::new(HW_JSON, e.to_string()).at(offset)
}

/// Decodes `input` as message type `msg_type` and prints its JSON (protobuf: the proto3 JSON
/// mapping; object graphs: heapwire's object list) into `out`: one line, no newline, no
/// NUL; `*written` is its length.
///
/// # Safety
/// `h` is NULL or a live handle; `input` has `len` readable bytes; `out` has `cap`
/// writable bytes; `written` and `err` are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_to_json(
    h: *mut HwSchema,
    wire: u32,
    msg_type: i32,
    input: *const u8,
    len: usize,
    out: *mut c_char,
    cap: usize,
    written: *mut usize,
    err: *mut HwError,
) -> i32 {
    call(h, written, err, |h| {
        let (wire, msg) = h.request(wire, msg_type)?;
        let input = self::input(input, len, "input")?;
        h.options.base = 0;
        let req = Request { msg, wire, input, options: &h.options };
        h.engine.decode(&req, &mut h.image)?;
        let printer = h.printer.get_or_insert_with(|| heapwire_json::Printer::new(h.schema.clone()));
        h.buf.clear();
        printer.print(&req, &h.image, true, &mut h.buf).map_err(json_fail)?;
        while h.buf.last() == Some(&b'\n') {
            h.buf.pop();
        }
        deliver(&h.buf, out as *mut u8, cap, &[input])
    })
}

/// Parses one JSON document (`len` bytes of UTF-8 at `json`) as message type `msg_type` into
/// `wire` bytes.
///
/// # Safety
/// `h` is NULL or a live handle; `json` has `len` readable bytes; `out` has `cap`
/// writable bytes; `written` and `err` are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_from_json(
    h: *mut HwSchema,
    wire: u32,
    msg_type: i32,
    json: *const c_char,
    len: usize,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
    err: *mut HwError,
) -> i32 {
    call(h, written, err, |h| {
        let (wire, msg) = h.request(wire, msg_type)?;
        let bytes = input(json as *const u8, len, "json")?;
        let text = std::str::from_utf8(bytes)
            .map_err(|e| Fail::new(HW_JSON, format!("invalid_utf8 at byte {} (JSON input)", e.valid_up_to())).at(e.valid_up_to() as u64))?;
        heapwire_json::parse(&h.schema, &mut h.tables, wire, msg, text, &mut h.buf).map_err(json_fail)?;
        deliver(&h.buf, out, cap, &[bytes])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_engine() {
        for k in RejectKind::ALL {
            let n = unsafe { CStr::from_ptr(hw_code_name(k.code() as i32)) };
            assert_eq!(n.to_str().unwrap(), k.name());
            assert!(k.code() < HW_BAD_ARGUMENT as u32, "reject codes stay below this ABI's own");
        }
        for (c, _, name) in OWN_CODES {
            assert_eq!(unsafe { CStr::from_ptr(hw_code_name(c)) }.to_str().unwrap(), name);
            assert!(RejectKind::from_code(c as u32).is_none());
        }
        assert_eq!(unsafe { CStr::from_ptr(hw_code_name(0)) }.to_str().unwrap(), "ok");
        assert_eq!(unsafe { CStr::from_ptr(hw_code_name(-5)) }.to_str().unwrap(), "unknown");
    }

    #[test]
    fn error_struct_layout() {
        assert_eq!((std::mem::size_of::<HwError>(), std::mem::align_of::<HwError>()), (24, 8));
        assert_eq!(std::mem::offset_of!(HwError, offset), 8);
        assert_eq!(std::mem::offset_of!(HwError, needed), 16);
    }

    #[test]
    fn objgraph_decode_and_encode_through_the_abi() {
        let p = std::ffi::CString::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/expression_tree/expr.proto")).unwrap();
        let mut msg = [0 as c_char; 256];
        unsafe {
            let g = hw_open(p.as_ptr(), std::ptr::null(), 0, 64, 0, msg.as_mut_ptr(), msg.len());
            assert!(!g.is_null(), "{:?}", CStr::from_ptr(msg.as_ptr()));
            let node = hw_type(g, c"expr.Node".as_ptr());
            let lit = hw_type(g, c"expr.Literal".as_ptr());
            assert_eq!(hw_class_type_id(g, lit), 0);
            assert_eq!(hw_class_type_id(g, node), -1);
            assert_eq!(hw_class_size(g, lit), 32);
            let mut wire = vec![];
            for w in [1u32, 0] {
                wire.extend_from_slice(&w.to_le_bytes());
            }
            wire.extend_from_slice(&42i32.to_le_bytes());
            let mut buf = vec![0u64; 8];
            let base = buf.as_mut_ptr() as u64;
            let mut n = 0usize;
            let mut e = HwError::default();
            assert_eq!(hw_set_register(g, lit, 0xabc), 0);
            let og = HW_WIRE_OBJGRAPH;
            assert_eq!(hw_decode(g, og, node, wire.as_ptr(), wire.len(), base, buf.as_mut_ptr() as *mut c_void, 64, &mut n, &mut e), 0);
            assert_eq!((n, buf[0], buf[3] as u32), (32, 0xabc, 42));
            let mut out = [0u8; 64];
            assert_eq!(hw_encode_objects(g, node, buf.as_ptr() as *const _, out.as_mut_ptr(), out.len(), &mut n, &mut e), 0);
            assert_eq!(&out[..n], &wire[..]);
            assert_eq!(hw_decode(g, og, node, wire.as_ptr(), 10, base, buf.as_mut_ptr() as *mut c_void, 64, &mut n, &mut e), 1);
            assert_eq!((e.code, e.offset, n), (1, 8, 0));
            assert_eq!(CStr::from_ptr(hw_last_error(g)).to_str().unwrap(), "truncated at byte 8");
            assert_eq!(hw_decode(g, og, node, wire.as_ptr(), wire.len(), base, buf.as_mut_ptr() as *mut c_void, 16, &mut n, &mut e), 15);
            assert_eq!(e.needed, 32);
            // Output overlapping the input is refused.
            let w = buf.as_mut_ptr() as *mut u8;
            assert_eq!(hw_decode(g, og, node, w, 12, base, w.add(4) as *mut c_void, 32, &mut n, &mut e), HW_BAD_ARGUMENT);
            hw_close(g);
        }
    }
}
