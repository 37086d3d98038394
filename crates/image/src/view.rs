//! Bounds-checked reading of a heap image (layout in `docs/image-layout.md`).
//!
//! An image may come from an untrusted device, so every read here is checked: no
//! method panics or reads outside the image, whatever the bytes. Errors name what was
//! being read and the image offset (of the pointer or slot that was bad).
//!
//! Offsets are image offsets (`usize`); pointers in the image are `base + offset`,
//! or 0 for "nothing".

use heapwire_schema::{CompiledSchema, Field, Kind, Message, PointerWidth, Presence};
use std::fmt;

/// What went wrong reading an image, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewError {
    pub kind: ViewErrorKind,
    /// Image offset of the slot, pointer word or struct concerned.
    pub offset: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewErrorKind {
    /// A slot or struct of `len` bytes does not fit in the image.
    OutOfBounds { what: &'static str, len: u64 },
    /// A pointer (the word at `offset`) points outside the image, or its target of
    /// `len` bytes does not fit.
    BadPointer { what: &'static str, ptr: u64, len: u64 },
    /// An array whose byte size overflows.
    TooLarge { what: &'static str, count: u64 },
    /// The traversal budget was exhausted: the image references more data than it holds
    /// (shared or cyclic pointers).
    Budget,
}

impl fmt::Display for ViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ViewErrorKind::OutOfBounds { what, len } => {
                write!(f, "{what} of {len} bytes at image offset {} is out of bounds", self.offset)
            }
            ViewErrorKind::BadPointer { what, ptr, len } => write!(
                f,
                "{what} pointer {ptr:#x} (length {len}) at image offset {} points outside the image",
                self.offset
            ),
            ViewErrorKind::TooLarge { what, count } => {
                write!(f, "{what} with {count} elements at image offset {} is too large", self.offset)
            }
            ViewErrorKind::Budget => write!(
                f,
                "image references more data than it holds (shared or cyclic pointers) at image offset {}",
                self.offset
            ),
        }
    }
}

impl std::error::Error for ViewError {}

pub type ViewResult<T> = Result<T, ViewError>;

/// A repeated field's elements: `count` elements of `stride` bytes from `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayRef {
    pub offset: usize,
    pub count: usize,
    pub stride: usize,
}

impl ArrayRef {
    pub const EMPTY: ArrayRef = ArrayRef { offset: 0, count: 0, stride: 0 };
    /// Image offset of element `i` (`i < count`).
    pub fn element(&self, i: usize) -> usize {
        self.offset + i * self.stride
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Bytes the array occupies.
    pub fn byte_len(&self) -> usize {
        self.count * self.stride
    }
}

/// A read-only, bounds-checked view of a heap image.
#[derive(Clone, Copy, Debug)]
pub struct ImageView<'a> {
    bytes: &'a [u8],
    base: u64,
    ptr: usize,
}

impl<'a> ImageView<'a> {
    pub fn new(bytes: &'a [u8], base: u64, pointer_width: PointerWidth) -> Self {
        ImageView { bytes, base, ptr: pointer_width.bytes() as usize }
    }

    /// A view with the pointer width `schema` was compiled with.
    pub fn for_schema(schema: &CompiledSchema, bytes: &'a [u8], base: u64) -> Self {
        Self::new(bytes, base, schema.layout.pointer_width)
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    pub fn base(&self) -> u64 {
        self.base
    }
    /// Pointer width in bytes (4 or 8).
    pub fn ptr_width(&self) -> usize {
        self.ptr
    }

    // ---- raw little-endian reads ----

    /// `len` bytes at `off`.
    pub fn range(&self, off: usize, len: usize, what: &'static str) -> ViewResult<&'a [u8]> {
        match off.checked_add(len) {
            Some(end) if end <= self.bytes.len() => Ok(&self.bytes[off..end]),
            _ => Err(ViewError { kind: ViewErrorKind::OutOfBounds { what, len: len as u64 }, offset: off as u64 }),
        }
    }

    fn arr<const N: usize>(&self, off: usize, what: &'static str) -> ViewResult<[u8; N]> {
        let s = self.range(off, N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn u8_at(&self, off: usize) -> ViewResult<u8> {
        Ok(self.arr::<1>(off, "byte")?[0])
    }
    pub fn u32_at(&self, off: usize) -> ViewResult<u32> {
        Ok(u32::from_le_bytes(self.arr(off, "32-bit word")?))
    }
    pub fn u64_at(&self, off: usize) -> ViewResult<u64> {
        Ok(u64::from_le_bytes(self.arr(off, "64-bit word")?))
    }
    pub fn i32_at(&self, off: usize) -> ViewResult<i32> {
        Ok(self.u32_at(off)? as i32)
    }
    pub fn i64_at(&self, off: usize) -> ViewResult<i64> {
        Ok(self.u64_at(off)? as i64)
    }
    pub fn f32_at(&self, off: usize) -> ViewResult<f32> {
        Ok(f32::from_bits(self.u32_at(off)?))
    }
    pub fn f64_at(&self, off: usize) -> ViewResult<f64> {
        Ok(f64::from_bits(self.u64_at(off)?))
    }
    /// A pointer-width word (pointer, length or count).
    pub fn word_at(&self, off: usize) -> ViewResult<u64> {
        if self.ptr == 4 {
            Ok(u32::from_le_bytes(self.arr(off, "pointer word")?) as u64)
        } else {
            Ok(u64::from_le_bytes(self.arr(off, "pointer word")?))
        }
    }

    /// Resolves pointer `ptr` (read from the word at `at`) to an image offset whose
    /// `len` bytes lie inside the image. `ptr` 0 is `None`.
    pub fn resolve(&self, ptr: u64, len: u64, at: usize, what: &'static str) -> ViewResult<Option<usize>> {
        if ptr == 0 {
            return Ok(None);
        }
        let bad = || ViewError { kind: ViewErrorKind::BadPointer { what, ptr, len }, offset: at as u64 };
        let off = ptr.checked_sub(self.base).ok_or_else(bad)?;
        let end = off.checked_add(len).ok_or_else(bad)?;
        if end > self.bytes.len() as u64 {
            return Err(bad());
        }
        Ok(Some(off as usize))
    }

    /// The `{ptr data; size len}` pair at `off` as a byte slice of the image
    /// (pointer 0 → empty).
    pub fn slice_at(&self, off: usize, what: &'static str) -> ViewResult<&'a [u8]> {
        let p = self.word_at(off)?;
        let len = self.word_at(off + self.ptr)?;
        match self.resolve(p, len, off, what)? {
            None => Ok(&[]),
            Some(o) => Ok(&self.bytes[o..o + len as usize]),
        }
    }

    /// The `{ptr elements; size count}` pair at `off`, elements `stride` bytes each
    /// (pointer 0 → empty).
    pub fn array_at(&self, off: usize, stride: usize, what: &'static str) -> ViewResult<ArrayRef> {
        let p = self.word_at(off)?;
        let count = self.word_at(off + self.ptr)?;
        if p == 0 || count == 0 {
            return Ok(ArrayRef::EMPTY);
        }
        let len = count
            .checked_mul(stride as u64)
            .ok_or(ViewError { kind: ViewErrorKind::TooLarge { what, count }, offset: off as u64 })?;
        match self.resolve(p, len, off, what)? {
            None => Ok(ArrayRef::EMPTY),
            Some(o) => Ok(ArrayRef { offset: o, count: count as usize, stride }),
        }
    }

    // ---- schema-driven reads ----

    /// Checks that a struct of type `msg` fits at `off`.
    pub fn check_struct(&self, msg: &Message, off: usize) -> ViewResult<()> {
        self.range(off, msg.size as usize, "struct").map(|_| ())
    }

    /// Image offset of `field`'s slot in the struct at `struct_off`, checked to fit
    /// the slot's size.
    pub fn slot(&self, field: &Field, struct_off: usize) -> ViewResult<usize> {
        let (size, _) = heapwire_schema::slot_size_align(field.kind, field.is_repeated(), self.ptr as u32);
        let off = struct_off
            .checked_add(field.offset as usize)
            .ok_or(ViewError { kind: ViewErrorKind::OutOfBounds { what: "field slot", len: size as u64 }, offset: struct_off as u64 })?;
        self.range(off, size as usize, "field slot")?;
        Ok(off)
    }

    /// The header word of the struct at `struct_off` (schemas compiled with header words).
    pub fn header_word(&self, schema: &CompiledSchema, struct_off: usize) -> ViewResult<Option<u64>> {
        if schema.layout.header_words {
            self.word_at(struct_off).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Presence bit `bit` of the struct at `struct_off` of type `msg`.
    pub fn hasbit(&self, msg: &Message, struct_off: usize, bit: u32) -> ViewResult<bool> {
        let off = struct_off.saturating_add(msg.hasbits_offset as usize).saturating_add(4 * (bit as usize / 32));
        Ok(self.u32_at(off)? & (1u32 << (bit % 32)) != 0)
    }

    /// The case word of oneof `oneof` (0 or the number of the member that is set).
    pub fn oneof_case(&self, msg: &Message, struct_off: usize, oneof: u32) -> ViewResult<u32> {
        let o = msg.oneofs.get(oneof as usize).ok_or(ViewError {
            kind: ViewErrorKind::OutOfBounds { what: "oneof", len: 0 },
            offset: struct_off as u64,
        })?;
        self.u32_at(struct_off.saturating_add(o.case_offset as usize))
    }

    /// Whether `field` is set in the struct at `struct_off`: its presence bit, its
    /// oneof case, its pointer, or (implicit presence) a non-default value — non-zero
    /// bits for scalars (so -0.0 is present, as in protobuf), non-empty for strings,
    /// bytes and repeated fields.
    pub fn has(&self, msg: &Message, field: &Field, struct_off: usize) -> ViewResult<bool> {
        match field.presence {
            Presence::HasBit(b) => self.hasbit(msg, struct_off, b),
            Presence::Oneof(o) => Ok(self.oneof_case(msg, struct_off, o)? == field.number),
            Presence::Pointer => {
                let off = self.slot(field, struct_off)?;
                Ok(self.word_at(off)? != 0)
            }
            Presence::Implicit => {
                let off = self.slot(field, struct_off)?;
                if field.is_repeated() || field.kind.is_string_like() {
                    Ok(self.word_at(off)? != 0 && self.word_at(off + self.ptr)? != 0)
                } else if field.kind.is_message() {
                    Ok(self.word_at(off)? != 0)
                } else {
                    let size = field.kind.scalar_size().unwrap_or(1) as usize;
                    Ok(self.range(off, size, "field slot")?.iter().any(|&b| b != 0))
                }
            }
        }
    }

    /// The struct a singular message field points to (`None` when null), checked to fit.
    pub fn sub_message(&self, schema: &CompiledSchema, field: &Field, struct_off: usize) -> ViewResult<Option<usize>> {
        let off = self.slot(field, struct_off)?;
        let size = sub_size(schema, field, off)?;
        let p = self.word_at(off)?;
        self.resolve(p, size as u64, off, "sub-message")
    }

    /// A string or bytes field's bytes (singular).
    pub fn string(&self, field: &Field, struct_off: usize) -> ViewResult<&'a [u8]> {
        let off = self.slot(field, struct_off)?;
        self.slice_at(off, "string")
    }

    /// A repeated field's elements, stride from `CompiledSchema::element_size`.
    pub fn repeated(&self, schema: &CompiledSchema, field: &Field, struct_off: usize) -> ViewResult<ArrayRef> {
        let off = self.slot(field, struct_off)?;
        let stride = match field.kind {
            Kind::Message | Kind::Group => sub_size(schema, field, off)? as usize,
            _ => schema.element_size(field) as usize,
        };
        self.array_at(off, stride, "repeated field")
    }

    /// The unknown-field bytes of the struct at `struct_off`.
    pub fn unknown(&self, msg: &Message, struct_off: usize) -> ViewResult<&'a [u8]> {
        self.slice_at(struct_off.saturating_add(msg.unknown_offset as usize), "unknown fields")
    }

    /// A scalar value's raw bits at `off` (zero-extended), for `kind`'s image size.
    pub fn scalar_bits(&self, kind: Kind, off: usize) -> ViewResult<u64> {
        match kind.scalar_size() {
            Some(8) => self.u64_at(off),
            Some(4) => self.u32_at(off).map(|v| v as u64),
            Some(1) => self.u8_at(off).map(|v| v as u64),
            _ => Err(ViewError { kind: ViewErrorKind::OutOfBounds { what: "scalar", len: 0 }, offset: off as u64 }),
        }
    }
}

fn sub_size(schema: &CompiledSchema, field: &Field, at: usize) -> ViewResult<u32> {
    schema.messages.get(field.sub as usize).map(|m| m.size).ok_or(ViewError {
        kind: ViewErrorKind::OutOfBounds { what: "sub-message type", len: 0 },
        offset: at as u64,
    })
}

/// Bounds the total work of a traversal over an untrusted image: a well-formed image
/// never references the same bytes twice, so charging every struct reached through a
/// pointer, every array and every string by its size can never exceed the image length.
/// Shared or cyclic pointers (only in malformed images) exhaust it instead of blowing
/// up time or output.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    left: u64,
}

impl Budget {
    pub fn new(bytes: u64) -> Self {
        Budget { left: bytes }
    }
    /// Budget for a traversal of `view`: its length.
    pub fn for_view(view: &ImageView<'_>) -> Self {
        Budget::new(view.len() as u64)
    }
    pub fn unlimited() -> Self {
        Budget { left: u64::MAX }
    }
    pub fn remaining(&self) -> u64 {
        self.left
    }
    /// Spends `n` bytes for the item at image offset `at`.
    pub fn charge(&mut self, n: u64, at: usize) -> ViewResult<()> {
        match self.left.checked_sub(n) {
            Some(l) => {
                self.left = l;
                Ok(())
            }
            None => Err(ViewError { kind: ViewErrorKind::Budget, offset: at as u64 }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heapwire_schema::{compile_files, LayoutOptions};

    fn schema(layout: LayoutOptions) -> CompiledSchema {
        let dir = std::env::temp_dir().join(format!("heapwire-view-test-{}-{}", std::process::id(), layout.pointer_width.bytes()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("v.proto");
        std::fs::write(
            &p,
            r#"syntax = "proto3"; package v;
               message M { int32 a = 1; optional int64 b = 2; string s = 3; M sub = 4;
                           repeated fixed32 r = 5; repeated M rm = 6; oneof o { float f = 7; M om = 8; }
                           double d = 9; bool t = 10; }"#,
        )
        .unwrap();
        compile_files(&[p], &[dir], layout).unwrap()
    }

    fn put(img: &mut [u8], off: usize, v: u64, w: usize) {
        img[off..off + w].copy_from_slice(&v.to_le_bytes()[..w]);
    }

    #[test]
    fn reads_a_hand_built_image() {
        for layout in [LayoutOptions::default(), LayoutOptions { pointer_width: PointerWidth::P32, header_words: true }] {
            let s = schema(layout);
            let m = &s.messages[s.message_index("v.M").unwrap()];
            let f = |n: u32| &m.fields[m.field_index(n).unwrap()];
            let pw = s.ptr() as usize;
            let size = m.size as usize;
            let base = 0x4000u64;
            // root struct | string "hey" (at 8-aligned) | array of 2 fixed32 | sub struct
            let str_off = size.div_ceil(8) * 8;
            let arr_off = str_off + 8;
            let sub_off = arr_off + 8;
            let mut img = vec![0u8; sub_off + size];
            put(&mut img, f(1).offset as usize, (-5i32) as u32 as u64, 4);
            put(&mut img, m.hasbits_offset as usize, 1, 4); // b present (bit 0)
            put(&mut img, f(3).offset as usize, base + str_off as u64, pw);
            put(&mut img, f(3).offset as usize + pw, 3, pw);
            img[str_off..str_off + 3].copy_from_slice(b"hey");
            put(&mut img, f(5).offset as usize, base + arr_off as u64, pw);
            put(&mut img, f(5).offset as usize + pw, 2, pw);
            put(&mut img, arr_off, 7, 4);
            put(&mut img, arr_off + 4, 9, 4);
            put(&mut img, f(4).offset as usize, base + sub_off as u64, pw);
            put(&mut img, sub_off + f(1).offset as usize, 42, 4);
            put(&mut img, m.oneofs[0].case_offset as usize, 7, 4);
            put(&mut img, f(9).offset as usize, (-0.0f64).to_bits(), 8);
            if layout.header_words {
                put(&mut img, 0, 0xabcd, pw);
            }

            let v = ImageView::for_schema(&s, &img, base);
            assert_eq!(v.header_word(&s, 0).unwrap(), layout.header_words.then_some(0xabcd));
            assert!(v.has(m, f(1), 0).unwrap());
            assert_eq!(v.i32_at(v.slot(f(1), 0).unwrap()).unwrap(), -5);
            assert!(v.has(m, f(2), 0).unwrap());
            assert_eq!(v.string(f(3), 0).unwrap(), b"hey");
            let sub = v.sub_message(&s, f(4), 0).unwrap().unwrap();
            assert_eq!(sub, sub_off);
            assert_eq!(v.i32_at(sub + f(1).offset as usize).unwrap(), 42);
            assert!(!v.has(m, f(4), sub).unwrap());
            assert_eq!(v.sub_message(&s, f(4), sub).unwrap(), None);
            let arr = v.repeated(&s, f(5), 0).unwrap();
            assert_eq!((arr.count, arr.stride), (2, 4));
            assert_eq!(v.u32_at(arr.element(1)).unwrap(), 9);
            assert!(v.repeated(&s, f(6), 0).unwrap().is_empty());
            assert!(v.has(m, f(7), 0).unwrap());
            assert!(!v.has(m, f(8), 0).unwrap());
            assert!(v.has(m, f(9), 0).unwrap(), "-0.0 is not the default");
            assert!(!v.has(m, f(10), 0).unwrap());
            assert_eq!(v.unknown(m, 0).unwrap(), b"");

            // Bad pointers: below base, past the end, length overflowing.
            let mut bad = img.clone();
            put(&mut bad, f(3).offset as usize, base - 8, pw);
            let e = ImageView::for_schema(&s, &bad, base).string(f(3), 0).unwrap_err();
            assert_eq!(e.offset, f(3).offset as u64);
            assert!(e.to_string().contains(&format!("image offset {}", f(3).offset)), "{e}");
            put(&mut bad, f(3).offset as usize, base + str_off as u64, pw);
            put(&mut bad, f(3).offset as usize + pw, (img.len() - str_off + 1) as u64, pw);
            assert!(ImageView::for_schema(&s, &bad, base).string(f(3), 0).is_err());
            put(&mut bad, f(5).offset as usize + pw, u64::MAX, pw);
            assert!(ImageView::for_schema(&s, &bad, base).repeated(&s, f(5), 0).is_err());
            put(&mut bad, f(4).offset as usize, base + (img.len() - 1) as u64, pw);
            assert!(ImageView::for_schema(&s, &bad, base).sub_message(&s, f(4), 0).is_err());
            // Structs past the end.
            let v = ImageView::for_schema(&s, &img, base);
            assert!(v.check_struct(m, img.len() - size + 1).is_err());
            assert!(v.has(m, f(9), usize::MAX - 2).is_err());
            assert!(v.slot(f(9), usize::MAX).is_err());
        }
    }

    #[test]
    fn budget_runs_out() {
        let mut b = Budget::new(10);
        b.charge(6, 0).unwrap();
        let e = b.charge(6, 40).unwrap_err();
        assert_eq!((e.kind, e.offset), (ViewErrorKind::Budget, 40));
    }
}
