//! The requests the generator sends: the five rpcs of `heapwire.social.v1.Social`, the
//! mix between them, and per-rpc corpora of pre-encoded request bytes read from the
//! length-delimited streams `bench/gen_workloads.py` writes.

use std::fmt;
use std::path::{Path, PathBuf};

use bytes::Bytes;

/// One rpc of the social service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rpc {
    ComposePost,
    StorePost,
    ComposeMedia,
    RegisterUser,
    Login,
}

impl Rpc {
    pub const ALL: [Rpc; 5] = [
        Rpc::ComposePost,
        Rpc::StorePost,
        Rpc::ComposeMedia,
        Rpc::RegisterUser,
        Rpc::Login,
    ];

    /// The name used on the command line, in reports and in corpus file names.
    pub fn name(self) -> &'static str {
        match self {
            Rpc::ComposePost => "compose_post",
            Rpc::StorePost => "store_post",
            Rpc::ComposeMedia => "compose_media",
            Rpc::RegisterUser => "register_user",
            Rpc::Login => "login",
        }
    }

    /// The gRPC method path, as the service names it (the two enums list the rpcs in the
    /// same order).
    pub fn path(self) -> &'static str {
        heapwire_social_service::schema::Rpc::ALL[self.index()].path()
    }

    /// The request stream `gen_workloads.py` writes for this rpc.
    pub fn corpus_file(self) -> String {
        format!("social_{}.bin", self.name())
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// Accepts the report name (`compose_post`) or the method name (`ComposePost`).
    pub fn parse(s: &str) -> Option<Rpc> {
        let folded: String = s.chars().filter(|c| *c != '_').flat_map(char::to_lowercase).collect();
        Rpc::ALL.into_iter().find(|r| r.name().replace('_', "") == folded)
    }
}

impl fmt::Display for Rpc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Relative weights of the rpcs in the offered load.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    weights: [u32; 5],
}

impl Mix {
    /// The default: the requests of one composed post in DeathStarBench's call graph
    /// (the front end's ComposePost and the storage service's StorePost, equally often),
    /// media attached to about a third of them, and user-service traffic where logins
    /// outnumber registrations two to one.
    pub const DEFAULT: &'static str = "compose_post=3,store_post=3,compose_media=1,register_user=1,login=2";

    /// Parses `name=weight,...`; rpcs not named get weight 0; at least one weight must
    /// be positive.
    pub fn parse(spec: &str) -> Result<Mix, String> {
        let mut weights = [0u32; 5];
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, weight) = part
                .split_once('=')
                .ok_or_else(|| format!("mix entry '{part}': expected NAME=WEIGHT"))?;
            let rpc = Rpc::parse(name.trim()).ok_or_else(|| {
                format!(
                    "mix entry '{part}': unknown rpc '{}' (one of {})",
                    name.trim(),
                    Rpc::ALL.map(Rpc::name).join(", ")
                )
            })?;
            weights[rpc.index()] = weight
                .trim()
                .parse()
                .map_err(|_| format!("mix entry '{part}': weight must be a whole number"))?;
        }
        if weights.iter().all(|w| *w == 0) {
            return Err(format!("mix '{spec}': every weight is 0"));
        }
        Ok(Mix { weights })
    }

    pub fn weight(&self, rpc: Rpc) -> u32 {
        self.weights[rpc.index()]
    }

    /// The rpcs with a positive weight.
    pub fn rpcs(&self) -> impl Iterator<Item = Rpc> + '_ {
        Rpc::ALL.into_iter().filter(|r| self.weight(*r) > 0)
    }

    /// The rpc for a uniform draw `u` in [0, total weight).
    fn pick(&self, mut u: u64) -> Rpc {
        for rpc in Rpc::ALL {
            let w = u64::from(self.weight(rpc));
            if u < w {
                return rpc;
            }
            u -= w;
        }
        unreachable!("draw beyond the total weight")
    }

    fn total(&self) -> u64 {
        self.weights.iter().map(|w| u64::from(*w)).sum()
    }

    /// The rpc of every request in order: a deterministic weighted draw per request
    /// (splitmix64 from `seed`), so the same seed offers the same sequence.
    pub fn sequence(&self, seed: u64) -> impl Iterator<Item = Rpc> + '_ {
        let total = self.total();
        let mut state = seed;
        std::iter::repeat_with(move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            // Multiply-shift: an unbiased-enough index into the weights.
            self.pick(((u128::from(z) * u128::from(total)) >> 64) as u64)
        })
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.rpcs().map(|r| format!("{}={}", r, self.weight(r))).collect();
        f.write_str(&parts.join(","))
    }
}

/// Pre-encoded requests per rpc; every rpc in the mix has at least one.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    requests: [Vec<Bytes>; 5],
    sources: [Option<PathBuf>; 5],
}

impl Corpus {
    /// Reads `DIR/social_<rpc>.bin` for every rpc in the mix, keeping at most
    /// `max_per_rpc` requests of each (all when `None`).
    pub fn load(dir: &Path, mix: &Mix, max_per_rpc: Option<usize>) -> Result<Corpus, String> {
        let mut corpus = Corpus::default();
        for rpc in mix.rpcs() {
            let path = dir.join(rpc.corpus_file());
            let data = std::fs::read(&path).map_err(|e| {
                format!(
                    "{}: {e} (make the corpus with: python3 bench/gen_workloads.py --out {} --mb 0.5)",
                    path.display(),
                    dir.display()
                )
            })?;
            let mut msgs = split_delimited(&data).map_err(|e| format!("{}: {e}", path.display()))?;
            if let Some(max) = max_per_rpc {
                msgs.truncate(max.max(1));
            }
            if msgs.is_empty() {
                return Err(format!("{}: no requests in the file", path.display()));
            }
            corpus.requests[rpc.index()] = msgs;
            corpus.sources[rpc.index()] = Some(path);
        }
        Ok(corpus)
    }

    /// A corpus from requests in memory (for tests and tools that make their own).
    pub fn from_requests(requests: impl IntoIterator<Item = (Rpc, Vec<Bytes>)>) -> Corpus {
        let mut corpus = Corpus::default();
        for (rpc, msgs) in requests {
            corpus.requests[rpc.index()] = msgs;
        }
        corpus
    }

    pub fn requests(&self, rpc: Rpc) -> &[Bytes] {
        &self.requests[rpc.index()]
    }

    pub fn source(&self, rpc: Rpc) -> Option<&Path> {
        self.sources[rpc.index()].as_deref()
    }

    /// Average request size in bytes, `None` without requests.
    pub fn avg_size(&self, rpc: Rpc) -> Option<f64> {
        let r = self.requests(rpc);
        (!r.is_empty()).then(|| r.iter().map(Bytes::len).sum::<usize>() as f64 / r.len() as f64)
    }

    /// Checks that every rpc of the mix has requests.
    pub fn check_covers(&self, mix: &Mix) -> Result<(), String> {
        match mix.rpcs().find(|r| self.requests(*r).is_empty()) {
            Some(rpc) => Err(format!("the corpus has no {rpc} requests but the mix asks for them")),
            None => Ok(()),
        }
    }
}

/// Splits a stream of `varint length, message` records (protobuf's writeDelimitedTo).
pub fn split_delimited(data: &[u8]) -> Result<Vec<Bytes>, String> {
    let whole = Bytes::copy_from_slice(data);
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let start = pos;
        let mut len: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&b) = data.get(pos) else {
                return Err(format!("truncated length prefix at byte offset {start}"));
            };
            pos += 1;
            if shift >= 63 && b > 1 {
                return Err(format!("length prefix at byte offset {start} overflows 64 bits"));
            }
            len |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        let remaining = (data.len() - pos) as u64;
        if len > remaining {
            return Err(format!(
                "message at byte offset {start} declares {len} bytes but only {remaining} remain"
            ));
        }
        let end = pos + len as usize;
        out.push(whole.slice(pos..end));
        pos = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_parses_names_and_weights() {
        let mix = Mix::parse("ComposePost=2, login=1").unwrap();
        assert_eq!(mix.weight(Rpc::ComposePost), 2);
        assert_eq!(mix.weight(Rpc::Login), 1);
        assert_eq!(mix.weight(Rpc::StorePost), 0);
        assert_eq!(mix.to_string(), "compose_post=2,login=1");
        assert!(Mix::parse(Mix::DEFAULT).is_ok());
        assert!(Mix::parse("login=0").unwrap_err().contains("every weight is 0"));
        assert!(Mix::parse("logout=1").unwrap_err().contains("unknown rpc 'logout'"));
        assert!(Mix::parse("login").unwrap_err().contains("NAME=WEIGHT"));
        assert!(Mix::parse("login=-1").unwrap_err().contains("whole number"));
    }

    #[test]
    fn mix_sequence_follows_weights_and_seed() {
        let mix = Mix::parse("compose_post=3,login=1").unwrap();
        let seq: Vec<Rpc> = mix.sequence(7).take(40_000).collect();
        let posts = seq.iter().filter(|r| **r == Rpc::ComposePost).count();
        assert_eq!(posts + seq.iter().filter(|r| **r == Rpc::Login).count(), seq.len());
        let share = posts as f64 / seq.len() as f64;
        assert!((share - 0.75).abs() < 0.02, "compose_post share {share}");
        let again: Vec<Rpc> = mix.sequence(7).take(40_000).collect();
        assert_eq!(seq, again, "same seed, same sequence");
        let other: Vec<Rpc> = mix.sequence(8).take(40_000).collect();
        assert_ne!(seq, other);
    }

    #[test]
    fn split_delimited_accepts_records_and_names_bad_offsets() {
        let mut data = vec![3, b'a', b'b', b'c', 0, 1, b'z'];
        let msgs = split_delimited(&data).unwrap();
        assert_eq!(msgs, vec![Bytes::from_static(b"abc"), Bytes::new(), Bytes::from_static(b"z")]);
        data.push(5);
        data.push(b'x');
        assert_eq!(
            split_delimited(&data).unwrap_err(),
            "message at byte offset 7 declares 5 bytes but only 1 remain"
        );
        assert_eq!(split_delimited(&[1, b'q', 0x80]).unwrap_err(), "truncated length prefix at byte offset 2");
        let overlong = [0xff; 11];
        assert!(split_delimited(&overlong).unwrap_err().contains("overflows 64 bits"));
    }

    #[test]
    fn rpc_names_round_trip() {
        for rpc in Rpc::ALL {
            assert_eq!(Rpc::parse(rpc.name()), Some(rpc));
            let method = rpc.path().rsplit('/').next().unwrap();
            assert_eq!(Rpc::parse(method), Some(rpc));
        }
        assert_eq!(Rpc::parse("nope"), None);
    }
}
