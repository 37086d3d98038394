//! The offload pool end to end with the CPU engine: every image equal to a direct
//! `CpuEngine::decode` at the address it landed at (and every rejection the same),
//! images valid in place, regions recycled under sustained load with out-of-order
//! releases, both back-pressure policies with the counts adding up, an image larger
//! than a region, shutdown with requests in flight, many submitter threads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use heapwire_cpu::CpuEngine;
use heapwire_engine::{Engine, Error, Options, RejectKind, Rejection, Request, Wire};
use heapwire_image::ImageView;
use heapwire_pool::{
    Backpressure, Completion, DropReason, ImageRef, Job, Outcome, Pool, PoolConfig, Shutdown,
    SubmitError,
};
use heapwire_schema::{CompiledSchema, LayoutOptions};
use heapwire_testkit::{protobuf_gen, Rng};

fn load(rel: &str) -> Arc<CompiledSchema> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    let dir: PathBuf = p.parent().unwrap().to_path_buf();
    Arc::new(heapwire_schema::load(&p, &[dir], LayoutOptions::default()).expect("schema"))
}

fn unit() -> Arc<CompiledSchema> {
    load("crates/cpu/testdata/unit.proto")
}

fn social() -> Arc<CompiledSchema> {
    load("bench/schemas/social.proto")
}

/// Random messages of every type of `schema`, one in three mutated (many rejected).
fn corpus(schema: &CompiledSchema, n: usize, seed: u64, budget: i64) -> Vec<Job> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|k| {
            let msg = r.below(schema.messages.len() as u64) as usize;
            let mut m = Vec::new();
            let mut b = budget;
            protobuf_gen::message(&mut r, schema, msg, 0, &mut b, &mut m);
            if k % 3 == 1 {
                m = protobuf_gen::mutate(&mut r, &m);
            }
            Job {
                tag: k as u64,
                msg,
                wire: Wire::Protobuf,
                input: m,
            }
        })
        .collect()
}

/// What `CpuEngine::decode` gives at `base`.
fn direct(schema: &Arc<CompiledSchema>, job: &Job, base: u64) -> Result<Vec<u8>, Rejection> {
    let mut e = CpuEngine::new(schema.clone());
    let options = Options {
        base,
        ..Options::default()
    };
    let mut out = Vec::new();
    match e.decode(
        &Request {
            msg: job.msg,
            wire: job.wire,
            input: &job.input,
            options: &options,
        },
        &mut out,
    ) {
        Ok(_) => Ok(out),
        Err(Error::Rejected(r)) => Err(r),
        Err(Error::Engine(m)) => panic!("direct decode failed: {m}"),
    }
}

fn pool(schema: &Arc<CompiledSchema>, config: PoolConfig) -> Pool {
    let s = schema.clone();
    Pool::new(config, move |_| CpuEngine::new(s.clone()))
}

/// Checks a completion against the direct decode of its job; true for an image.
fn check(schema: &Arc<CompiledSchema>, jobs: &[Job], c: &Completion) -> bool {
    let job = &jobs[c.tag as usize];
    assert_eq!(
        (c.msg, c.wire, &c.input),
        (job.msg, job.wire, &job.input),
        "tag {}",
        c.tag
    );
    match &c.outcome {
        Outcome::Image(img) => {
            assert_eq!(
                (img.tag(), img.msg(), img.region()),
                (c.tag, c.msg, c.worker)
            );
            assert_eq!(img.addr() % 8, 0);
            let want = direct(schema, job, img.addr())
                .unwrap_or_else(|r| panic!("tag {}: pool decoded, direct rejected {r}", c.tag));
            assert!(
                img[..] == want[..],
                "tag {}: image differs from the direct decode at {:#x}",
                c.tag,
                img.addr()
            );
            true
        }
        Outcome::Rejected(r) if r.kind == RejectKind::BufferTooSmall => {
            let want = direct(schema, job, 0x1000).expect("only a valid image can be too large");
            assert_eq!(r.needed as usize, want.len(), "tag {}", c.tag);
            false
        }
        Outcome::Rejected(r) => {
            assert_eq!(
                Err(r.clone()),
                direct(schema, job, 0x1000).map(|_| ()),
                "tag {}",
                c.tag
            );
            false
        }
        o => panic!("tag {}: {o:?}", c.tag),
    }
}

#[test]
fn images_and_rejections_equal_direct_decode_at_the_same_address() {
    for (schema, seed) in [(unit(), 1u64), (social(), 2)] {
        let jobs = corpus(&schema, 300, seed, 40);
        let p = pool(
            &schema,
            PoolConfig {
                workers: 2,
                region_bytes: 1 << 20,
                depth: 400,
                ..PoolConfig::default()
            },
        );
        for j in &jobs {
            p.submit(j.clone()).unwrap();
        }
        let mut held = Vec::new();
        let (mut images, mut rejected) = (0, 0);
        for _ in 0..jobs.len() {
            let c = p.recv().unwrap();
            if check(&schema, &jobs, &c) {
                images += 1;
            } else {
                rejected += 1;
            }
            held.push(c); // all held at once: every image at its own address
        }
        assert!(
            images > 50 && rejected > 20,
            "{images} images, {rejected} rejections"
        );
        let s = p.stats();
        assert_eq!(
            (s.images, s.rejected, s.submitted),
            (images, rejected, jobs.len() as u64)
        );
        assert_eq!(
            s.regions.iter().map(|r| r.live_images).sum::<usize>() as u64,
            images
        );
        drop(held);
        assert!(p
            .stats()
            .regions
            .iter()
            .all(|r| r.live_images == 0 && r.free_bytes == r.capacity));
    }
}

#[test]
fn images_are_valid_in_place() {
    let schema = unit();
    let node = schema.message_index("unit.Node").unwrap();
    let field = |name: &str| {
        schema.messages[node]
            .fields
            .iter()
            .find(|f| f.name == name)
            .unwrap()
            .offset as usize
    };
    let (s_off, i32_off) = (field("s"), field("i32"));
    let p = pool(
        &schema,
        PoolConfig {
            workers: 2,
            region_bytes: 64 << 10,
            ..PoolConfig::default()
        },
    );
    let texts: Vec<String> = (0..20)
        .map(|k| format!("string number {k} lives in the region"))
        .collect();
    for (k, t) in texts.iter().enumerate() {
        let mut m = vec![0x08, k as u8, 0x72, t.len() as u8];
        m.extend_from_slice(t.as_bytes());
        p.submit(Job {
            tag: k as u64,
            msg: node,
            wire: Wire::Protobuf,
            input: m,
        })
        .unwrap();
    }
    let mut held: Vec<ImageRef> = Vec::new();
    for _ in 0..texts.len() {
        let c = p.recv().unwrap();
        let img = c.into_result().expect("an image");
        let region = p.stats().regions[img.region()].clone();
        let word = |o: usize| u64::from_le_bytes(img[o..o + 8].try_into().unwrap());
        let (ptr, len) = (word(s_off), word(s_off + 8) as usize);
        let want = &texts[img.tag() as usize];
        assert_eq!(len, want.len());
        assert!(
            ptr >= img.addr() && ptr + len as u64 <= img.addr() + img.len() as u64,
            "the pointer is inside the image"
        );
        assert!(
            ptr >= region.addr && ptr + len as u64 <= region.addr + region.capacity as u64,
            "and inside its region"
        );
        // Follow the pointer itself: the string is where the image says it is.
        let at = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
        assert_eq!(at, want.as_bytes());
        // And through the bounds-checked views the generated Rust views are built on.
        let view = ImageView::for_schema(&schema, &img, img.addr());
        assert_eq!(view.slice_at(s_off, "s").unwrap(), want.as_bytes());
        assert_eq!(
            i32::from_le_bytes(img[i32_off..i32_off + 4].try_into().unwrap()),
            img.tag() as i32
        );
        held.push(img);
    }
    // Images stay readable after the pool is gone, until released.
    drop(p);
    let img = &held[3];
    let ptr = u64::from_le_bytes(img[s_off..s_off + 8].try_into().unwrap());
    let at =
        unsafe { std::slice::from_raw_parts(ptr as *const u8, texts[img.tag() as usize].len()) };
    assert_eq!(at, texts[img.tag() as usize].as_bytes());
}

/// The application receives on its own thread, holds up to `hold` images and releases
/// a random one (out of order) when it holds more, or when nothing arrives for a while.
fn receive(
    p: &Pool,
    schema: &Arc<CompiledSchema>,
    jobs: &[Job],
    hold: usize,
    seed: u64,
) -> (u64, u64, u64) {
    let mut r = Rng::new(seed);
    let mut held: Vec<ImageRef> = Vec::new();
    let (mut images, mut rejected, mut bytes) = (0u64, 0u64, 0u64);
    loop {
        match p.recv_timeout(Duration::from_millis(2)) {
            Some(c) => {
                if check(schema, jobs, &c) {
                    images += 1;
                } else {
                    rejected += 1;
                }
                if let Outcome::Image(img) = c.outcome {
                    bytes += img.len() as u64;
                    held.push(img);
                }
                if held.len() > hold {
                    held.swap_remove(r.below(held.len() as u64) as usize)
                        .release();
                }
            }
            None if images + rejected == jobs.len() as u64 => break,
            None => {
                if !held.is_empty() {
                    held.swap_remove(r.below(held.len() as u64) as usize);
                }
            }
        }
    }
    (images, rejected, bytes)
}

#[test]
fn regions_are_recycled_under_sustained_load_with_out_of_order_releases() {
    let schema = social();
    let jobs = corpus(&schema, 1500, 3, 60);
    let region_bytes = 4096;
    let p = pool(
        &schema,
        PoolConfig {
            workers: 2,
            region_bytes,
            depth: 16,
            ..PoolConfig::default()
        },
    );
    let (images, rejected, bytes) = std::thread::scope(|s| {
        let rx = s.spawn(|| receive(&p, &schema, &jobs, 6, 9));
        for j in &jobs {
            p.submit(j.clone()).unwrap();
        }
        rx.join().unwrap()
    });
    assert_eq!(images + rejected, jobs.len() as u64);
    assert!(
        bytes > 10 * 2 * region_bytes as u64,
        "{bytes} bytes decoded through 2 regions of {region_bytes}"
    );
    let s = p.stats();
    assert_eq!(
        (s.dropped_queue_full, s.dropped_region_full, s.cancelled),
        (0, 0, 0)
    );
    assert!(
        s.regions
            .iter()
            .all(|r| r.live_images == 0 && r.largest_free == r.capacity),
        "{:?}",
        s.regions
    );
}

#[test]
fn block_waits_and_completes_everything_from_many_submitters() {
    let schema = social();
    let jobs = corpus(&schema, 800, 4, 40);
    let p = pool(
        &schema,
        PoolConfig {
            workers: 2,
            region_bytes: 2048,
            depth: 4,
            ..PoolConfig::default()
        },
    );
    let (images, rejected, _) = std::thread::scope(|s| {
        let rx = s.spawn(|| receive(&p, &schema, &jobs, 4, 5));
        for part in jobs.chunks(100) {
            let p = &p;
            s.spawn(move || {
                for j in part {
                    p.submit(j.clone()).expect("Block never hands a job back");
                }
            });
        }
        rx.join().unwrap()
    });
    assert_eq!(images + rejected, jobs.len() as u64);
    let s = p.stats();
    assert_eq!(s.submitted, jobs.len() as u64);
    assert_eq!((s.images, s.rejected), (images, rejected));
    assert_eq!((s.dropped_queue_full, s.dropped_region_full), (0, 0));
    assert!(
        s.submit_waits > 0,
        "8 submitters never waited for a depth of 4"
    );
}

#[test]
fn drop_and_count_hands_back_and_counts_nothing_lost() {
    let schema = social();
    let jobs = corpus(&schema, 1200, 6, 40);
    let p = pool(
        &schema,
        PoolConfig {
            workers: 2,
            region_bytes: 1536,
            depth: 6,
            backpressure: Backpressure::DropAndCount,
            ..PoolConfig::default()
        },
    );
    let handed_back = std::sync::atomic::AtomicU64::new(0);
    let (mut images, mut rejected, mut region_full) = (0u64, 0u64, 0u64);
    std::thread::scope(|s| {
        for part in jobs.chunks(200) {
            let (p, handed_back) = (&p, &handed_back);
            s.spawn(move || {
                for j in part {
                    match p.submit(j.clone()) {
                        Ok(()) => {}
                        Err(SubmitError::Full(back)) => {
                            assert_eq!(&back, j, "the job comes back untouched");
                            handed_back.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            std::thread::sleep(Duration::from_micros(200)); // and offers the next later
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            });
        }
        // The application is slow and holds many images: queues and regions fill.
        let mut held: Vec<ImageRef> = Vec::new();
        let mut r = Rng::new(7);
        loop {
            match p.recv_timeout(Duration::from_millis(20)) {
                Some(c) => match c.outcome {
                    Outcome::Dropped(DropReason::RegionFull) => {
                        assert_eq!(c.input, jobs[c.tag as usize].input, "the input comes back");
                        region_full += 1;
                    }
                    _ => {
                        if check(&schema, &jobs, &c) {
                            images += 1;
                        } else {
                            rejected += 1;
                        }
                        if let Outcome::Image(img) = c.outcome {
                            held.push(img);
                        }
                        if held.len() > 40 {
                            held.swap_remove(r.below(held.len() as u64) as usize);
                        }
                        std::thread::sleep(Duration::from_micros(50));
                    }
                },
                None if p.in_flight() == 0
                    && p.stats().submitted
                        + handed_back.load(std::sync::atomic::Ordering::Relaxed)
                        == jobs.len() as u64 =>
                {
                    break
                }
                None => {}
            }
        }
    });
    let back = handed_back.into_inner();
    let s = p.stats();
    assert_eq!(s.dropped_queue_full, back);
    assert_eq!(s.dropped_region_full, region_full);
    assert_eq!((s.images, s.rejected), (images, rejected));
    assert_eq!(
        jobs.len() as u64,
        images + rejected + back + region_full,
        "submitted = completed + handed back"
    );
    assert_eq!(s.submitted, images + rejected + region_full);
    assert!(back > 0, "the queue never filled");
    assert!(region_full > 0, "no region ever filled: {s:?}");
    eprintln!("drop-and-count: {images} images, {rejected} rejected ({} oversized), {back} handed back by submit, {region_full} dropped for region space", s.oversized);
}

#[test]
fn an_image_larger_than_a_region_is_rejected_with_its_size() {
    let schema = unit();
    let node = schema.message_index("unit.Node").unwrap();
    let text = vec![b'x'; 1000];
    let mut big = vec![0x72, 0xe8, 0x07];
    big.extend_from_slice(&text);
    let want = direct(
        &schema,
        &Job {
            tag: 0,
            msg: node,
            wire: Wire::Protobuf,
            input: big.clone(),
        },
        0,
    )
    .unwrap()
    .len();
    for policy in [Backpressure::Block, Backpressure::DropAndCount] {
        let p = pool(
            &schema,
            PoolConfig {
                workers: 1,
                region_bytes: 512,
                backpressure: policy,
                ..PoolConfig::default()
            },
        );
        p.submit(Job {
            tag: 1,
            msg: node,
            wire: Wire::Protobuf,
            input: big.clone(),
        })
        .unwrap();
        p.submit(Job {
            tag: 2,
            msg: node,
            wire: Wire::Protobuf,
            input: b"\x72\x02hi".to_vec(),
        })
        .unwrap();
        let c = p.recv_timeout(Duration::from_secs(10)).expect("no hang");
        assert_eq!(c.tag, 1);
        match c.outcome {
            Outcome::Rejected(r) => {
                assert_eq!(r.kind, RejectKind::BufferTooSmall);
                assert_eq!(r.needed as usize, want);
                assert_eq!(r.to_string(), "buffer_too_small at byte 0");
            }
            o => panic!("{o:?}"),
        }
        assert!(
            matches!(p.recv().unwrap().outcome, Outcome::Image(_)),
            "the pool goes on"
        );
        let s = p.stats();
        assert_eq!((s.oversized, s.rejected, s.images), (1, 1, 1));
    }
}

#[test]
fn shutdown_drain_decodes_everything_cancel_hands_the_rest_back() {
    let schema = social();
    let jobs = corpus(&schema, 400, 8, 40);
    // Drain: nothing received before shutdown; everything comes back decoded.
    let p = pool(
        &schema,
        PoolConfig {
            workers: 2,
            region_bytes: 1 << 20,
            depth: 1000,
            ..PoolConfig::default()
        },
    );
    for j in &jobs {
        p.submit(j.clone()).unwrap();
    }
    let left = p.shutdown(Shutdown::Drain);
    assert_eq!(left.len(), jobs.len());
    for c in &left {
        check(&schema, &jobs, c);
    }
    assert!(matches!(
        p.submit(jobs[0].clone()),
        Err(SubmitError::Closed(_))
    ));
    assert!(p.recv().is_none());
    drop(left);

    // Cancel with a receiver running: every job comes back once, decoded or cancelled.
    let p = pool(
        &schema,
        PoolConfig {
            workers: 1,
            region_bytes: 1 << 20,
            depth: 1000,
            ..PoolConfig::default()
        },
    );
    let mut seen = HashMap::new();
    std::thread::scope(|s| {
        let rx = s.spawn(|| {
            let mut out = Vec::new();
            while let Some(c) = p.recv() {
                out.push(c);
            }
            out
        });
        for j in &jobs {
            p.submit(j.clone()).unwrap();
        }
        let left = p.shutdown(Shutdown::Cancel);
        for c in rx.join().unwrap().into_iter().chain(left) {
            let cancelled = matches!(c.outcome, Outcome::Cancelled);
            if !cancelled {
                check(&schema, &jobs, &c);
            }
            assert!(
                seen.insert(c.tag, cancelled).is_none(),
                "tag {} twice",
                c.tag
            );
        }
    });
    assert_eq!(seen.len(), jobs.len());
    let s = p.stats();
    assert_eq!(s.cancelled as usize, seen.values().filter(|&&c| c).count());
    assert_eq!(s.images + s.rejected + s.cancelled, jobs.len() as u64);
}

#[test]
fn cancel_frees_a_worker_waiting_for_region_space() {
    let schema = unit();
    let node = schema.message_index("unit.Node").unwrap();
    let p = pool(
        &schema,
        PoolConfig {
            workers: 1,
            region_bytes: 512,
            ..PoolConfig::default()
        },
    );
    let mut m = vec![0x72, 100];
    m.extend_from_slice(&[b'y'; 100]);
    let job = |tag| Job {
        tag,
        msg: node,
        wire: Wire::Protobuf,
        input: m.clone(),
    };
    p.submit(job(0)).unwrap();
    let first = p.recv().unwrap().into_result().unwrap(); // held: the region cannot take a second
    p.submit(job(1)).unwrap();
    p.submit(job(2)).unwrap();
    while p.stats().region_waits == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let left = p.shutdown(Shutdown::Cancel);
    let tags: Vec<(u64, bool)> = left
        .iter()
        .map(|c| (c.tag, matches!(c.outcome, Outcome::Cancelled)))
        .collect();
    assert_eq!(tags.len(), 2);
    assert!(tags.iter().all(|&(_, cancelled)| cancelled), "{tags:?}");
    assert_eq!(first.len(), direct(&schema, &job(0), 0).unwrap().len());
}
