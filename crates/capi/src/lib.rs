//! heapwire's C ABI for object graphs (`include/heapwire_objgraph.h`).
//!
//! A handle owns a compiled schema, its object-graph decoder and the per-type
//! registers. Wire input is untrusted: every error comes back as a kind and an offset.

use std::ffi::{c_char, CStr};
use std::path::PathBuf;

use std::sync::Arc;

use heapwire_cpu::objgraph::{self, ImageMemory, ObjDecoder, ObjError, RawMemory};
use heapwire_engine::RejectKind;

/// The kinds this header numbers, in the order of its HW_OG_* codes (code = index + 1).
const OG_KINDS: [RejectKind; 15] = {
    use RejectKind::*;
    [
        Truncated, CountTooLarge, UnknownType, BadReference, ReferenceType, RootType, TrailingBytes, ImageTooLarge,
        BadBase, BufferTooSmall, NotAClass, UnknownHeader, BadPointer, ValueOutOfRange, TooManyObjects,
    ]
};

fn og_code(k: RejectKind) -> i32 {
    OG_KINDS.iter().position(|&x| x == k).map(|i| i as i32 + 1).unwrap_or(HW_OG_BAD_ARGUMENT)
}
use heapwire_cpu::DecodeOptions;
use heapwire_schema::{CompiledSchema, LayoutOptions, PointerWidth, NONE};

pub const HW_OG_BAD_ARGUMENT: i32 = 100;

#[repr(C)]
pub struct HwOgError {
    pub kind: i32,
    pub offset: u64,
    pub needed: u64,
}

pub struct HwOg {
    dec: ObjDecoder<Arc<CompiledSchema>>,
    schema: Arc<CompiledSchema>,
    opts: DecodeOptions,
    wire: Vec<u8>,
}

impl HwOg {
    fn new(schema: CompiledSchema) -> Box<HwOg> {
        let schema = Arc::new(schema);
        let opts = DecodeOptions { type_words: (0..schema.messages.len() as u64).collect(), max_image_bytes: u64::MAX, ..Default::default() };
        Box::new(HwOg { dec: ObjDecoder::new(schema.clone()), schema, opts, wire: Vec::new() })
    }
}

fn write_err(err: *mut c_char, cap: usize, msg: &str) {
    if err.is_null() || cap == 0 {
        return;
    }
    let n = msg.len().min(cap - 1);
    // SAFETY: the caller gives `cap` writable bytes at `err`.
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr(), err as *mut u8, n);
        *err.add(n) = 0;
    }
}

fn report(e: &ObjError, err: *mut HwOgError) -> i32 {
    if !err.is_null() {
        // SAFETY: non-null `err` points to a caller's hw_og_error.
        unsafe { *err = HwOgError { kind: og_code(e.kind), offset: e.offset, needed: e.needed } };
    }
    og_code(e.kind)
}

fn bad_arg(err: *mut HwOgError) -> i32 {
    if !err.is_null() {
        // SAFETY: as above.
        unsafe { *err = HwOgError { kind: HW_OG_BAD_ARGUMENT, offset: 0, needed: 0 } };
    }
    HW_OG_BAD_ARGUMENT
}

/// # Safety
/// `proto_path` is a NUL-terminated path; `include_dir` is NULL or one; `err` has `err_cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn hw_og_open(proto_path: *const c_char, include_dir: *const c_char, pointer_width: u32, err: *mut c_char, err_cap: usize) -> *mut HwOg {
    if proto_path.is_null() {
        write_err(err, err_cap, "null path");
        return std::ptr::null_mut();
    }
    let path = PathBuf::from(CStr::from_ptr(proto_path).to_string_lossy().into_owned());
    let includes: Vec<PathBuf> = if include_dir.is_null() { Vec::new() } else { vec![PathBuf::from(CStr::from_ptr(include_dir).to_string_lossy().into_owned())] };
    let pw = match pointer_width {
        32 => PointerWidth::P32,
        64 => PointerWidth::P64,
        _ => {
            write_err(err, err_cap, "pointer width must be 32 or 64");
            return std::ptr::null_mut();
        }
    };
    match heapwire_schema::compile_files(&[path], &includes, LayoutOptions { pointer_width: pw, header_words: false }) {
        Ok(s) => Box::into_raw(HwOg::new(s)),
        Err(e) => {
            write_err(err, err_cap, &e.to_string());
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// `bytes` has `len` readable bytes; `err` has `err_cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn hw_og_open_table(bytes: *const u8, len: usize, err: *mut c_char, err_cap: usize) -> *mut HwOg {
    if bytes.is_null() {
        write_err(err, err_cap, "null table");
        return std::ptr::null_mut();
    }
    match heapwire_schema::table_file::read(std::slice::from_raw_parts(bytes, len)) {
        Ok(s) => Box::into_raw(HwOg::new(s)),
        Err(e) => {
            write_err(err, err_cap, &e.to_string());
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// `g` is NULL or a handle from `hw_og_open*`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn hw_og_close(g: *mut HwOg) {
    if !g.is_null() {
        drop(Box::from_raw(g));
    }
}

/// # Safety
/// `g` is a valid handle; `name` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn hw_og_type(g: *const HwOg, name: *const c_char) -> i32 {
    if g.is_null() || name.is_null() {
        return -1;
    }
    let name = CStr::from_ptr(name).to_string_lossy();
    (*g).schema.message_index(&name).map(|i| i as i32).unwrap_or(-1)
}

fn class_of(g: &HwOg, ty: i32) -> Option<&heapwire_schema::Class> {
    let ty = usize::try_from(ty).ok()?;
    g.schema.class_of(ty).map(|c| &g.schema.classes[c])
}

/// # Safety
/// `g` is a valid handle.
#[no_mangle]
pub unsafe extern "C" fn hw_og_type_id(g: *const HwOg, ty: i32) -> i64 {
    match g.as_ref().and_then(|g| class_of(g, ty)) {
        Some(c) if c.type_id != NONE => c.type_id as i64,
        _ => -1,
    }
}

/// # Safety
/// `g` is a valid handle.
#[no_mangle]
pub unsafe extern "C" fn hw_og_object_size(g: *const HwOg, ty: i32) -> u32 {
    g.as_ref().and_then(|g| class_of(g, ty)).map(|c| c.size).unwrap_or(0)
}

/// # Safety
/// `g` is a valid handle.
#[no_mangle]
pub unsafe extern "C" fn hw_og_set_register(g: *mut HwOg, ty: i32, word: u64) -> i32 {
    let Some(g) = g.as_mut() else { return HW_OG_BAD_ARGUMENT };
    match usize::try_from(ty) {
        Ok(t) if t < g.opts.type_words.len() => {
            g.opts.type_words[t] = word;
            0
        }
        _ => HW_OG_BAD_ARGUMENT,
    }
}

/// # Safety
/// `g` is a valid handle; `wire` has `len` readable bytes; `out` has `cap` writable
/// bytes; `written` and `err` are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn hw_og_decode(
    g: *mut HwOg,
    root_type: i32,
    wire: *const u8,
    len: usize,
    base: u64,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
    err: *mut HwOgError,
) -> i32 {
    let Some(g) = g.as_mut() else { return bad_arg(err) };
    let Ok(root) = usize::try_from(root_type) else { return bad_arg(err) };
    if root >= g.schema.messages.len() || (wire.is_null() && len > 0) || (out.is_null() && cap > 0) {
        return bad_arg(err);
    }
    let input = if len == 0 { &[][..] } else { std::slice::from_raw_parts(wire, len) };
    let outs = if cap == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(out, cap) };
    g.opts.base = base;
    match g.dec.decode_into(root, input, &g.opts, outs) {
        Ok(n) => {
            if !written.is_null() {
                *written = n;
            }
            0
        }
        Err(e) => report(&e, err),
    }
}

unsafe fn finish_encode(g: &mut HwOg, r: Result<(), ObjError>, out: *mut u8, cap: usize, written: *mut usize, err: *mut HwOgError) -> i32 {
    if let Err(e) = r {
        return report(&e, err);
    }
    if g.wire.len() > cap || (out.is_null() && !g.wire.is_empty()) {
        return report(&ObjError { kind: RejectKind::BufferTooSmall, offset: 0, needed: g.wire.len() as u64 }, err);
    }
    if !g.wire.is_empty() {
        std::ptr::copy_nonoverlapping(g.wire.as_ptr(), out, g.wire.len());
    }
    if !written.is_null() {
        *written = g.wire.len();
    }
    0
}

/// # Safety
/// `g` is a valid handle; every object reachable from `root` is a live object of a
/// registered class laid out as heapwire's layout says; `out` has `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hw_og_encode(
    g: *mut HwOg,
    root_type: i32,
    root: *const core::ffi::c_void,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
    err: *mut HwOgError,
) -> i32 {
    let Some(g) = g.as_mut() else { return bad_arg(err) };
    let Ok(rt) = usize::try_from(root_type) else { return bad_arg(err) };
    if rt >= g.schema.messages.len() || g.schema.ptr() as usize != std::mem::size_of::<usize>() {
        return bad_arg(err);
    }
    let mem = RawMemory::new();
    let mut wire = std::mem::take(&mut g.wire);
    let r = objgraph::encode(&g.schema, g.dec.tables(), &mem, root as usize as u64, rt, &g.opts.type_words, &mut wire);
    g.wire = wire;
    finish_encode(g, r, out, cap, written, err)
}

/// # Safety
/// `g` is a valid handle; `image` has `len` readable bytes; `out` has `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hw_og_encode_image(
    g: *mut HwOg,
    root_type: i32,
    image: *const core::ffi::c_void,
    len: usize,
    base: u64,
    root: u64,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
    err: *mut HwOgError,
) -> i32 {
    let Some(g) = g.as_mut() else { return bad_arg(err) };
    let Ok(rt) = usize::try_from(root_type) else { return bad_arg(err) };
    if rt >= g.schema.messages.len() || (image.is_null() && len > 0) {
        return bad_arg(err);
    }
    let bytes = if len == 0 { &[][..] } else { std::slice::from_raw_parts(image as *const u8, len) };
    let mem = ImageMemory { bytes, base };
    let mut wire = std::mem::take(&mut g.wire);
    let r = objgraph::encode(&g.schema, g.dec.tables(), &mem, root, rt, &g.opts.type_words, &mut wire);
    g.wire = wire;
    finish_encode(g, r, out, cap, written, err)
}

#[no_mangle]
pub extern "C" fn hw_og_error_name(kind: i32) -> *const c_char {
    if kind == 0 {
        return c"ok".as_ptr();
    }
    if kind == HW_OG_BAD_ARGUMENT {
        return c"bad_argument".as_ptr();
    }
    static NAMES: [&CStr; 15] = [
        c"truncated", c"count_too_large", c"unknown_type", c"bad_reference", c"reference_type", c"root_type",
        c"trailing_bytes", c"image_too_large", c"bad_base", c"buffer_too_small", c"not_a_class", c"unknown_header",
        c"bad_pointer", c"value_out_of_range", c"too_many_objects",
    ];
    match usize::try_from(kind - 1).ok().and_then(|i| NAMES.get(i)) {
        Some(n) => n.as_ptr(),
        None => c"unknown".as_ptr(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_engine() {
        for k in OG_KINDS {
            let n = unsafe { CStr::from_ptr(hw_og_error_name(og_code(k))) };
            assert_eq!(n.to_str().unwrap(), k.name());
        }
    }

    #[test]
    fn decode_and_encode_through_the_c_abi() {
        let p = std::ffi::CString::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/expression_tree/expr.proto")).unwrap();
        let mut msg = [0 as c_char; 256];
        unsafe {
            let g = hw_og_open(p.as_ptr(), std::ptr::null(), 64, msg.as_mut_ptr(), msg.len());
            assert!(!g.is_null());
            let node = hw_og_type(g, c"expr.Node".as_ptr());
            let lit = hw_og_type(g, c"expr.Literal".as_ptr());
            assert_eq!(hw_og_type_id(g, lit), 0);
            assert_eq!(hw_og_type_id(g, node), -1);
            assert_eq!(hw_og_object_size(g, lit), 32);
            let mut wire = vec![];
            for w in [1u32, 0] {
                wire.extend_from_slice(&w.to_le_bytes());
            }
            wire.extend_from_slice(&42i32.to_le_bytes());
            let mut buf = vec![0u64; 8];
            let base = buf.as_mut_ptr() as u64;
            let mut n = 0usize;
            let mut e = HwOgError { kind: 0, offset: 0, needed: 0 };
            assert_eq!(hw_og_set_register(g, lit, 0xabc), 0);
            assert_eq!(hw_og_decode(g, node, wire.as_ptr(), wire.len(), base, buf.as_mut_ptr() as *mut u8, 64, &mut n, &mut e), 0);
            assert_eq!((n, buf[0], buf[3] as u32), (32, 0xabc, 42));
            // Serialize the decoded (now live) object back.
            let mut out = [0u8; 64];
            assert_eq!(hw_og_encode(g, node, buf.as_ptr() as *const _, out.as_mut_ptr(), out.len(), &mut n, &mut e), 0);
            assert_eq!(&out[..n], &wire[..]);
            // Errors: truncated input, too-small buffer.
            assert_eq!(hw_og_decode(g, node, wire.as_ptr(), 10, base, buf.as_mut_ptr() as *mut u8, 64, &mut n, &mut e), 1);
            assert_eq!((e.kind, e.offset), (1, 8));
            assert_eq!(hw_og_decode(g, node, wire.as_ptr(), wire.len(), base, buf.as_mut_ptr() as *mut u8, 16, &mut n, &mut e), 10);
            assert_eq!(e.needed, 32);
            hw_og_close(g);
        }
    }
}
