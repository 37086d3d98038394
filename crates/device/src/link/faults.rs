//! Fault injection for tests and demonstrations: drop, duplicate, reorder and corrupt
//! datagrams, each with its own probability, from a seeded generator.
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Faults {
    pub drop: f64,
    pub dup: f64,
    pub reorder: f64,
    pub corrupt: f64,
    pub seed: u64,
}

impl Faults {
    pub fn none() -> Faults {
        Faults::default()
    }
    pub fn is_none(&self) -> bool {
        self.drop == 0.0 && self.dup == 0.0 && self.reorder == 0.0 && self.corrupt == 0.0
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultsParseError(pub String);

impl fmt::Display for FaultsParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad fault spec: {} (expected e.g. drop=0.1,dup=0.05,reorder=0.05,corrupt=0.01[,seed=N])", self.0)
    }
}
impl std::error::Error for FaultsParseError {}

impl FromStr for Faults {
    type Err = FaultsParseError;
    /// `drop=P,dup=P,reorder=P,corrupt=P,seed=N`, any subset in any order, each P in [0,1];
    /// an empty string or `none` is no faults.
    fn from_str(s: &str) -> Result<Faults, FaultsParseError> {
        let mut f = Faults::default();
        let s = s.trim();
        if s.is_empty() || s == "none" {
            return Ok(f);
        }
        for part in s.split(',') {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| FaultsParseError(format!("`{part}` is not NAME=VALUE")))?;
            let (k, v) = (k.trim(), v.trim());
            if k == "seed" {
                f.seed = v.parse().map_err(|_| FaultsParseError(format!("seed `{v}` is not an unsigned integer")))?;
                continue;
            }
            let p: f64 = v.parse().map_err(|_| FaultsParseError(format!("{k} `{v}` is not a number")))?;
            if !(0.0..=1.0).contains(&p) {
                return Err(FaultsParseError(format!("{k}={v} is not a probability in [0, 1]")));
            }
            match k {
                "drop" => f.drop = p,
                "dup" => f.dup = p,
                "reorder" => f.reorder = p,
                "corrupt" => f.corrupt = p,
                _ => return Err(FaultsParseError(format!("unknown fault `{k}` (drop, dup, reorder, corrupt, seed)"))),
            }
        }
        Ok(f)
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "drop={},dup={},reorder={},corrupt={},seed={}", self.drop, self.dup, self.reorder, self.corrupt, self.seed)
    }
}

/// splitmix64: small, seeded, good enough for fault dice.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// Applies `Faults` to a stream of datagrams: `apply` takes one and returns those to pass
/// on now (none when dropped or held back for reordering; two when duplicated; a held one
/// goes out after the next).
#[derive(Debug)]
pub(crate) struct Injector<T> {
    f: Faults,
    rng: Rng,
    held: Option<T>,
    pub dropped: u64,
    pub corrupted: u64,
    pub duplicated: u64,
    pub reordered: u64,
}

impl<T: Clone + AsMut<[u8]>> Injector<T> {
    pub fn new(f: Faults, salt: u64) -> Injector<T> {
        Injector { f, rng: Rng::new(f.seed.wrapping_mul(31).wrapping_add(salt)), held: None, dropped: 0, corrupted: 0, duplicated: 0, reordered: 0 }
    }
    pub fn active(&self) -> bool {
        !self.f.is_none()
    }
    pub fn apply(&mut self, mut item: T, out: &mut Vec<T>) {
        if self.rng.chance(self.f.drop) {
            self.dropped += 1;
            return;
        }
        if self.rng.chance(self.f.corrupt) {
            let b = item.as_mut();
            if !b.is_empty() {
                let at = (self.rng.next_u64() % b.len() as u64) as usize;
                b[at] ^= 1 << (self.rng.next_u64() % 8);
                self.corrupted += 1;
            }
        }
        let dup = self.rng.chance(self.f.dup);
        if self.held.is_none() && self.rng.chance(self.f.reorder) {
            self.reordered += 1;
            self.held = Some(item);
            return;
        }
        if dup {
            self.duplicated += 1;
            out.push(item.clone());
        }
        out.push(item);
        if let Some(h) = self.held.take() {
            out.push(h);
        }
    }
    /// `apply` to each item, adding the faults injected to `total`.
    pub fn apply_all(&mut self, items: impl IntoIterator<Item = T>, out: &mut Vec<T>, total: &AtomicU64) {
        let before = self.dropped + self.corrupted + self.duplicated + self.reordered;
        for item in items {
            self.apply(item, out);
        }
        let after = self.dropped + self.corrupted + self.duplicated + self.reordered;
        total.fetch_add(after - before, Ordering::Relaxed);
    }
    /// The held datagram, if any (sent on a timer tick so nothing waits forever).
    pub fn flush(&mut self, out: &mut Vec<T>) {
        if let Some(h) = self.held.take() {
            out.push(h);
        }
    }
}
