//! A worker's host region and its allocator, and the handle to one image in it.
//!
//! The region is one zeroed, 8-aligned allocation made when the pool starts. Only its
//! worker allocates from it; any thread frees (by dropping an [`ImageRef`]).
//!
//! The allocator is a **free list of extents** (offset → length, ordered by offset),
//! coalesced with both neighbours on every release, so images released out of order
//! give their space back at once and a region whose images are all released is one
//! extent again. The image's size is not known before it is decoded, so the worker
//! hands the engine the *largest* free extent (worst fit) and, once the image is
//! written, keeps its first `len` bytes (rounded up to 8) and leaves the rest free.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use heapwire_engine::Wire;

/// One worker's region: `capacity` bytes at a fixed address.
pub(crate) struct Region {
    pub(crate) id: usize,
    ptr: *mut u64,
    words: usize,
    free: Mutex<Extents>,
    /// Signalled on every release (a worker waiting for space under `Block`).
    released: Condvar,
}

// SAFETY: the memory is only reached through disjoint parts: a free extent is written
// only by the region's one worker (during a decode); an allocated part is only read,
// through the `ImageRef` that owns it, until that handle returns it to the free list.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

#[derive(Default)]
struct Extents {
    /// Free extents: offset → length, never adjacent (always coalesced), 8-aligned.
    map: BTreeMap<usize, usize>,
    free_bytes: usize,
    live: usize,
}

impl Extents {
    fn largest(&self) -> (usize, usize) {
        self.map.iter().fold(
            (0, 0),
            |best, (&o, &l)| if l > best.1 { (o, l) } else { best },
        )
    }
}

/// A snapshot of one region (in [`crate::Stats`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionStats {
    /// The region's (and its worker's) index.
    pub id: usize,
    /// Its address: images in it are based at `addr + offset`.
    pub addr: u64,
    pub capacity: usize,
    pub free_bytes: usize,
    /// The largest contiguous free part: the largest image it can take now.
    pub largest_free: usize,
    /// Images handed out and not yet released.
    pub live_images: usize,
}

impl Region {
    /// A zeroed region of `bytes` rounded up to a multiple of 8.
    pub(crate) fn new(id: usize, bytes: usize) -> Region {
        let words = bytes.div_ceil(8).max(1);
        let ptr = Box::into_raw(vec![0u64; words].into_boxed_slice()) as *mut u64;
        let mut map = BTreeMap::new();
        map.insert(0, words * 8);
        Region {
            id,
            ptr,
            words,
            free: Mutex::new(Extents {
                map,
                free_bytes: words * 8,
                live: 0,
            }),
            released: Condvar::new(),
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.words * 8
    }

    pub(crate) fn addr(&self) -> u64 {
        self.ptr as u64
    }

    /// The largest free extent (offset, length); (0, 0) when the region is full.
    pub(crate) fn largest_free(&self) -> (usize, usize) {
        self.free.lock().unwrap().largest()
    }

    /// The free extent `off..off + len` as a buffer to decode into.
    ///
    /// # Safety
    /// Only the region's worker may call this, for an extent `largest_free` gave it,
    /// and must not keep the slice past its next `commit`.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn extent(&self, off: usize, len: usize) -> &mut [u8] {
        debug_assert!(off + len <= self.capacity());
        std::slice::from_raw_parts_mut((self.ptr as *mut u8).add(off), len)
    }

    /// Takes `off..off + span` out of the free extent that holds it (it is free: only
    /// this worker allocates, and releases only ever grow free extents).
    pub(crate) fn commit(&self, off: usize, span: usize) {
        if span == 0 {
            return;
        }
        let mut e = self.free.lock().unwrap();
        let (&start, &len) = e
            .map
            .range(..=off)
            .next_back()
            .expect("the extent decoded into is free");
        assert!(
            start + len >= off + span,
            "the image lies in one free extent"
        );
        e.map.remove(&start);
        if off > start {
            e.map.insert(start, off - start);
        }
        if start + len > off + span {
            e.map.insert(off + span, start + len - off - span);
        }
        e.free_bytes -= span;
        e.live += 1;
    }

    /// Returns `off..off + span` to the free list, merged with its neighbours.
    fn release(&self, off: usize, span: usize) {
        if span == 0 {
            return;
        }
        let mut e = self.free.lock().unwrap();
        let (mut start, mut len) = (off, span);
        if let Some((&p, &pl)) = e.map.range(..off).next_back() {
            debug_assert!(p + pl <= off, "double release");
            if p + pl == off {
                e.map.remove(&p);
                start = p;
                len += pl;
            }
        }
        if let Some(nl) = e.map.remove(&(off + span)) {
            len += nl;
        }
        e.map.insert(start, len);
        e.free_bytes += span;
        e.live -= 1;
        drop(e);
        self.released.notify_all();
    }

    /// Waits until a free extent of at least `want` bytes exists; false if `cancel`
    /// was raised first (see [`Region::wake`]).
    pub(crate) fn wait_for(&self, want: usize, cancel: &AtomicBool) -> bool {
        let mut e = self.free.lock().unwrap();
        loop {
            if e.largest().1 >= want {
                return true;
            }
            if cancel.load(Ordering::SeqCst) {
                return false;
            }
            e = self.released.wait(e).unwrap();
        }
    }

    /// Wakes a worker waiting in `wait_for` (after `cancel` was raised).
    pub(crate) fn wake(&self) {
        let _e = self.free.lock().unwrap();
        self.released.notify_all();
    }

    pub(crate) fn stats(&self) -> RegionStats {
        let e = self.free.lock().unwrap();
        RegionStats {
            id: self.id,
            addr: self.addr(),
            capacity: self.capacity(),
            free_bytes: e.free_bytes,
            largest_free: e.largest().1,
            live_images: e.live,
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` of a boxed slice of `words` u64s in `new`;
        // the last `Arc<Region>` (every `ImageRef` holds one) is going away.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr, self.words,
            )))
        }
    }
}

/// One image, in place in a worker's region: its bytes are `addr()..addr() + len()`
/// and every pointer in it is already set for `addr()`. Dereferences to the bytes;
/// dropping it (or [`ImageRef::release`]) gives the space back to the region.
///
/// `Send` and `Sync`: it may be handed to and read from any thread, and released from
/// any thread. The region's memory lives as long as any of its images, even past the
/// pool.
pub struct ImageRef {
    region: Arc<Region>,
    offset: usize,
    len: usize,
    span: usize,
    pub(crate) tag: u64,
    pub(crate) msg: usize,
    pub(crate) wire: Wire,
}

impl ImageRef {
    pub(crate) fn new(
        region: Arc<Region>,
        offset: usize,
        len: usize,
        span: usize,
        tag: u64,
        msg: usize,
        wire: Wire,
    ) -> Self {
        ImageRef {
            region,
            offset,
            len,
            span,
            tag,
            msg,
            wire,
        }
    }

    /// The address the image lies at and was decoded for (its base): pointers in it
    /// point into `addr()..addr() + len()`.
    pub fn addr(&self) -> u64 {
        self.region.addr() + self.offset as u64
    }

    /// The image's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes (the same as `&*self`).
    pub fn bytes(&self) -> &[u8] {
        self
    }

    /// The region (and worker) that holds it.
    pub fn region(&self) -> usize {
        self.region.id
    }

    /// The request's tag, message type and wire format.
    pub fn tag(&self) -> u64 {
        self.tag
    }
    pub fn msg(&self) -> usize {
        self.msg
    }
    pub fn wire(&self) -> Wire {
        self.wire
    }

    /// Gives the space back now (the same as dropping it).
    pub fn release(self) {}
}

impl Deref for ImageRef {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: this handle owns `offset..offset + span` of the region (taken out of
        // the free list by `commit`, returned only by this handle's drop); the worker
        // wrote it before the handle was made and nobody writes it while it lives.
        unsafe {
            std::slice::from_raw_parts((self.region.ptr as *const u8).add(self.offset), self.len)
        }
    }
}

impl AsRef<[u8]> for ImageRef {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for ImageRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageRef")
            .field("tag", &self.tag)
            .field("msg", &self.msg)
            .field("addr", &format_args!("{:#x}", self.addr()))
            .field("len", &self.len)
            .field("region", &self.region.id)
            .finish()
    }
}

impl Drop for ImageRef {
    fn drop(&mut self) {
        self.region.release(self.offset, self.span);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(r: &Arc<Region>, off: usize, span: usize) -> ImageRef {
        r.commit(off, span);
        ImageRef::new(r.clone(), off, span, span, 0, 0, Wire::Protobuf)
    }

    #[test]
    fn regions_are_aligned_and_extents_coalesce_in_any_release_order() {
        let r = Arc::new(Region::new(3, 100));
        assert_eq!(r.capacity(), 104);
        assert_eq!(r.addr() % 8, 0);
        assert_eq!(r.largest_free(), (0, 104));
        let a = img(&r, 0, 24);
        let b = img(&r, 24, 32);
        let c = img(&r, 56, 16);
        assert_eq!(r.largest_free(), (72, 32));
        assert_eq!(c.addr(), r.addr() + 56);
        drop(b);
        assert_eq!(r.largest_free(), (24, 32));
        drop(a);
        assert_eq!(r.largest_free(), (0, 56));
        let s = r.stats();
        assert_eq!((s.free_bytes, s.live_images), (88, 1));
        c.release();
        assert_eq!(r.largest_free(), (0, 104));
        assert_eq!(r.stats().live_images, 0);
    }

    #[test]
    fn a_commit_inside_a_free_extent_keeps_both_sides() {
        let r = Arc::new(Region::new(0, 64));
        let m = img(&r, 16, 16);
        assert_eq!(r.stats().free_bytes, 48);
        assert_eq!(r.largest_free(), (32, 32));
        drop(m);
        assert_eq!(r.largest_free(), (0, 64));
    }

    #[test]
    fn waiting_for_space_ends_on_release_or_cancel() {
        let r = Arc::new(Region::new(0, 32));
        let a = img(&r, 0, 32);
        let cancel = AtomicBool::new(false);
        std::thread::scope(|s| {
            let w = s.spawn(|| r.wait_for(16, &cancel));
            std::thread::sleep(std::time::Duration::from_millis(20));
            drop(a);
            assert!(w.join().unwrap());
        });
        let _b = img(&r, 0, 32);
        std::thread::scope(|s| {
            let w = s.spawn(|| r.wait_for(16, &cancel));
            std::thread::sleep(std::time::Duration::from_millis(20));
            cancel.store(true, Ordering::SeqCst);
            r.wake();
            assert!(!w.join().unwrap());
        });
    }
}
