//! A small reproducible random source for randomized tests: xorshift64, so a failing
//! case comes back from its seed on every machine, with no dependency.

/// xorshift64 (the seed must not be 0; `Rng::new` makes sure).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// A generator from `seed` (0 is taken as 1).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    #[allow(clippy::should_implement_trait)] // (an endless stream; `Iterator` would add nothing)
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value below `n` (0 when `n` is 0, without drawing).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// True with `pct` percent probability.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

/// A numeric knob of a test or figure from the environment (`HEAPWIRE_..._SEED`,
/// `..._CASES`), or `default`.
pub fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
