//! The clock benchmarks time passes with: `cpu` (the calling thread's CPU time,
//! `CLOCK_THREAD_CPUTIME_ID`) or `wall` (`CLOCK_MONOTONIC`). On a shared machine with
//! fewer cores than runnable processes the scheduler takes the core away for whole time
//! slices; the wall clock counts those slices against whatever pass was running, the
//! thread's CPU clock does not. Shared by `heapwire bench` and the prost baseline
//! (bench/baselines/prost includes this file), so both read the same clock the same way.

/// Which clock a benchmark pass is timed with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchClock {
    /// The calling thread's CPU time: time spent running, not waiting for a core.
    Cpu,
    /// Elapsed (monotonic) time.
    Wall,
}

impl BenchClock {
    /// `cpu` or `wall`; anything else is an error naming the value.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "wall" => Ok(Self::Wall),
            _ => Err(format!("'{s}' is neither cpu nor wall")),
        }
    }

    /// The name `parse` accepts.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Wall => "wall",
        }
    }

    /// The clock's current reading in seconds (an arbitrary origin: only differences mean
    /// anything).
    pub fn now(self) -> f64 {
        let id = match self {
            Self::Cpu => libc::CLOCK_THREAD_CPUTIME_ID,
            Self::Wall => libc::CLOCK_MONOTONIC,
        };
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec; both clock ids exist on every Linux
        // this project builds for.
        let rc = unsafe { libc::clock_gettime(id, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime({}) failed", self.name());
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    }
}
