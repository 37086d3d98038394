//! Baseline: prost decoding a length-delimited stream of bench messages.
//!
//!   prost-bench --type pkg.Type [--reps K] [--clock cpu|wall] FILE
//!
//! Same protocol as the C++ arena baseline and `heapwire bench`: the whole file
//! is read first, one untimed warm-up pass, then K timed passes over every
//! message (`T::decode(&[u8])`, the ordinary prost call: a fresh owned struct
//! per message, dropped after). MB = 10^6 bytes of message payload (length
//! prefixes excluded). Passes are timed with the calling thread's CPU clock
//! (`--clock cpu`, the default) or elapsed time (`--clock wall`), read by the same code
//! as `heapwire bench` (crates/cli/src/clock.rs). The last line is the median pass:
//!
//!   decode: <MB/s> MB/s, <msgs/s> msg/s
use prost::Message;
use std::hint::black_box;
use std::process::ExitCode;

#[path = "../../../../crates/cli/src/clock.rs"]
mod clock;
use clock::BenchClock;

pub mod social {
    include!(concat!(env!("OUT_DIR"), "/heapwire.bench.social.rs"));
}
pub mod gm1 {
    include!(concat!(env!("OUT_DIR"), "/heapwire.bench.gm1.rs"));
}
pub mod gm2 {
    include!(concat!(env!("OUT_DIR"), "/heapwire.bench.gm2.rs"));
}
pub mod kinds {
    include!(concat!(env!("OUT_DIR"), "/heapwire.bench.kinds.rs"));
}

type PassFn = fn(&[&[u8]], BenchClock) -> Option<f64>;

/// One pass over all messages; seconds on `clock`, or None if a message failed to decode.
fn pass<T: Message + Default>(msgs: &[&[u8]], clock: BenchClock) -> Option<f64> {
    let t0 = clock.now();
    for m in msgs {
        let v = T::decode(black_box(*m)).ok()?;
        black_box(&v);
    }
    Some(clock.now() - t0)
}

const TYPES: &[(&str, PassFn)] = &[
    ("heapwire.bench.social.ComposePostRequest", pass::<social::ComposePostRequest>),
    ("heapwire.bench.social.StorePostRequest", pass::<social::StorePostRequest>),
    ("heapwire.bench.social.ComposeMediaRequest", pass::<social::ComposeMediaRequest>),
    ("heapwire.bench.social.RegisterUserRequest", pass::<social::RegisterUserRequest>),
    ("heapwire.bench.social.LoginRequest", pass::<social::LoginRequest>),
    ("heapwire.bench.social.Post", pass::<social::Post>),
    ("heapwire.bench.gm1.Record", pass::<gm1::Record>),
    ("heapwire.bench.gm2.Document", pass::<gm2::Document>),
    ("heapwire.bench.kinds.EveryKind", pass::<kinds::EveryKind>),
];

fn usage(msg: &str) -> ExitCode {
    if !msg.is_empty() {
        eprintln!("prost-bench: {msg}");
    }
    eprintln!("usage: prost-bench --type pkg.Type [--reps K] [--clock cpu|wall] [--delimited] FILE\ntypes:");
    for (t, _) in TYPES {
        eprintln!("  {t}");
    }
    ExitCode::from(2)
}

fn split_delimited(buf: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < buf.len() {
        let mut len: u64 = 0;
        let mut shift = 0;
        loop {
            if pos >= buf.len() || shift > 63 {
                return None;
            }
            let b = buf[pos];
            pos += 1;
            len |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        let len = usize::try_from(len).ok()?;
        if len > buf.len() - pos {
            return None;
        }
        out.push(&buf[pos..pos + len]);
        pos += len;
    }
    Some(out)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut ty, mut file, mut reps, mut clock) = (None, None, 9usize, BenchClock::Cpu);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--type" => ty = args.next(),
            "--reps" => match args.next().and_then(|r| r.parse().ok()) {
                Some(r) if r >= 1 => reps = r,
                _ => return usage("--reps needs a number >= 1"),
            },
            "--clock" => match BenchClock::parse(&args.next().unwrap_or_default()) {
                Ok(c) => clock = c,
                Err(e) => return usage(&format!("--clock: {e}")),
            },
            "--delimited" => {} // input is always delimited; accepted for symmetry
            "-h" | "--help" => return usage(""),
            s if s.starts_with('-') => return usage(&format!("unknown flag {s}")),
            _ => file = Some(a),
        }
    }
    let (Some(ty), Some(file)) = (ty, file) else {
        return usage("need --type and FILE");
    };
    let Some(&(_, run)) = TYPES.iter().find(|(t, _)| *t == ty) else {
        return usage(&format!("unknown type {ty}"));
    };
    let buf = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) => return usage(&format!("cannot read {file}: {e}")),
    };
    let Some(msgs) = split_delimited(&buf) else {
        eprintln!("prost-bench: malformed length-delimited stream");
        return ExitCode::from(1);
    };
    let payload: usize = msgs.iter().map(|m| m.len()).sum();
    if run(&msgs, clock).is_none() {
        eprintln!("prost-bench: a message failed to decode as {ty}");
        return ExitCode::from(1);
    }
    let mut secs = Vec::with_capacity(reps);
    for r in 0..reps {
        let Some(t) = run(&msgs, clock) else { return ExitCode::from(1) };
        eprintln!("prost-bench: rep {}: {:.1} MB/s", r + 1, payload as f64 / t / 1e6);
        secs.push(t);
    }
    secs.sort_by(f64::total_cmp);
    let n = secs.len();
    let med = if n % 2 == 1 { secs[n / 2] } else { (secs[n / 2 - 1] + secs[n / 2]) / 2.0 };
    eprintln!(
        "prost-bench: {ty}: {} messages, {payload} payload bytes, {reps} reps, {} clock",
        msgs.len(),
        clock.name()
    );
    println!(
        "decode: {:.1} MB/s, {:.0} msg/s",
        payload as f64 / med / 1e6,
        msgs.len() as f64 / med
    );
    ExitCode::SUCCESS
}
