//! The one support module generated Rust views depend on: lenient little-endian reads
//! over an image. Out-of-range reads yield zero or empty (views never panic, whatever
//! the image holds); use `ImageView` for reads that must report what was wrong.

#[derive(Clone, Copy, Debug)]
pub struct Image<'a> {
    bytes: &'a [u8],
    base: u64,
    ptr_width: usize,
}

impl<'a> Image<'a> {
    /// `bytes` is the image as placed at address `base`; `ptr_width` is 4 or 8.
    pub fn new(bytes: &'a [u8], base: u64, ptr_width: usize) -> Self {
        Image { bytes, base, ptr_width }
    }
    fn get<const N: usize>(&self, off: usize) -> [u8; N] {
        off.checked_add(N)
            .and_then(|e| self.bytes.get(off..e))
            .map(|s| s.try_into().unwrap())
            .unwrap_or([0; N])
    }
    pub fn u8(&self, off: usize) -> u8 {
        self.get::<1>(off)[0]
    }
    pub fn u32(&self, off: usize) -> u32 {
        u32::from_le_bytes(self.get(off))
    }
    pub fn u64(&self, off: usize) -> u64 {
        u64::from_le_bytes(self.get(off))
    }
    pub fn i32(&self, off: usize) -> i32 {
        self.u32(off) as i32
    }
    pub fn i64(&self, off: usize) -> i64 {
        self.u64(off) as i64
    }
    pub fn f32(&self, off: usize) -> f32 {
        f32::from_bits(self.u32(off))
    }
    pub fn f64(&self, off: usize) -> f64 {
        f64::from_bits(self.u64(off))
    }
    pub fn bool(&self, off: usize) -> bool {
        self.u8(off) != 0
    }
    /// A pointer- (or size-) width word.
    pub fn word(&self, off: usize) -> u64 {
        if self.ptr_width == 8 {
            self.u64(off)
        } else {
            self.u32(off) as u64
        }
    }
    pub fn ptr_width(&self) -> usize {
        self.ptr_width
    }
    /// The image offset a pointer word at `off` refers to; `None` for null or outside.
    pub fn target(&self, off: usize) -> Option<usize> {
        let p = self.word(off);
        if p == 0 {
            return None;
        }
        let t = p.checked_sub(self.base)?;
        (t < self.bytes.len() as u64).then_some(t as usize)
    }
    /// `{ptr, len}` at `off` as a slice of the image (empty when null or out of range).
    pub fn slice(&self, off: usize, elem: usize) -> &'a [u8] {
        let n = self.word(off + self.ptr_width) as usize;
        match self.target(off) {
            Some(t) => n
                .checked_mul(elem)
                .and_then(|len| t.checked_add(len))
                .and_then(|e| self.bytes.get(t..e))
                .unwrap_or(&[]),
            None => &[],
        }
    }
    /// Element count of the `{ptr, count}` at `off`, if its array lies in the image.
    pub fn count(&self, off: usize, elem: usize) -> usize {
        if elem == 0 {
            return 0;
        }
        self.slice(off, elem).len() / elem
    }
    pub fn has_bit(&self, off: usize, bit: u32) -> bool {
        self.u32(off + 4 * (bit as usize / 32)) & (1 << (bit % 32)) != 0
    }
}
