//! Requests that complete later than they were submitted: the caller fills
//! [`Submission`]s (its tag, its input and output buffers), the engine posts
//! [`Completion`]s carrying the tag and the buffers back, and the caller reaps them
//! when it likes. Buffers travel with the request, so a steady stream allocates nothing.

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;

use crate::{Decoded, Engine, Error, Options, Request, Wire};

/// One request in flight: decode `input` as message `msg` on `wire` into `output`, the
/// image to live at `base`. The queue's [`Options`] give everything else.
#[derive(Debug)]
pub struct Submission {
    pub tag: u64,
    pub msg: usize,
    pub wire: Wire,
    pub base: u64,
    pub input: Vec<u8>,
    /// Where the image goes (cleared and resized); returned in the completion.
    pub output: Vec<u8>,
}

/// A finished request: the submission's tag and buffers, and the result.
#[derive(Debug)]
pub struct Completion {
    pub tag: u64,
    pub input: Vec<u8>,
    /// The image (`output[..decoded.len]`) when `result` is `Ok`.
    pub output: Vec<u8>,
    pub result: Result<Decoded, Error>,
}

/// The asynchronous side of the engine door.
pub trait Queue {
    /// Queues a request. When the queue is full the submission comes back untouched
    /// (nothing is lost): reap a completion and submit it again.
    fn submit(&mut self, s: Submission) -> Result<(), Box<Submission>>;
    /// A completion if one is ready, without waiting.
    fn reap(&mut self) -> Option<Completion>;
    /// Waits for the next completion; `None` when nothing is in flight.
    fn wait(&mut self) -> Option<Completion>;
    /// Submitted and not yet reaped.
    fn in_flight(&self) -> usize;
}

fn run<E: Engine + ?Sized>(engine: &mut E, options: &mut Options, mut s: Submission) -> Completion {
    options.base = s.base;
    let req = Request { msg: s.msg, wire: s.wire, input: &s.input, options };
    let result = engine.decode(&req, &mut s.output);
    Completion { tag: s.tag, input: s.input, output: s.output, result }
}

/// Any [`Engine`] as a queue that completes each request as it is submitted, on the
/// caller's thread (at most `depth` completions waiting to be reaped).
pub struct Inline<E> {
    engine: E,
    options: Options,
    depth: usize,
    done: VecDeque<Completion>,
}

impl<E: Engine> Inline<E> {
    pub fn new(engine: E, options: Options, depth: usize) -> Self {
        Inline { engine, options, depth: depth.max(1), done: VecDeque::new() }
    }
}

impl<E: Engine> Queue for Inline<E> {
    fn submit(&mut self, s: Submission) -> Result<(), Box<Submission>> {
        if self.done.len() >= self.depth {
            return Err(Box::new(s));
        }
        let c = run(&mut self.engine, &mut self.options, s);
        self.done.push_back(c);
        Ok(())
    }
    fn reap(&mut self) -> Option<Completion> {
        self.done.pop_front()
    }
    fn wait(&mut self) -> Option<Completion> {
        self.done.pop_front()
    }
    fn in_flight(&self) -> usize {
        self.done.len()
    }
}

/// Any [`Engine`] on a thread of its own: submissions go to it through a bounded queue of
/// `depth` entries and complete in order while the caller goes on. Dropping it stops
/// the thread after the requests already submitted.
pub struct Threaded {
    tx: Option<SyncSender<Submission>>,
    rx: Receiver<Completion>,
    in_flight: usize,
    worker: Option<JoinHandle<()>>,
}

impl Threaded {
    pub fn new<E: Engine + Send + 'static>(mut engine: E, mut options: Options, depth: usize) -> Self {
        let (tx, work) = mpsc::sync_channel::<Submission>(depth.max(1));
        let (done, rx) = mpsc::channel();
        let worker = std::thread::Builder::new()
            .name(format!("heapwire-{}", engine.name()))
            .spawn(move || {
                for s in work {
                    if done.send(run(&mut engine, &mut options, s)).is_err() {
                        break;
                    }
                }
            })
            .expect("spawning an engine thread");
        Threaded { tx: Some(tx), rx, in_flight: 0, worker: Some(worker) }
    }
}

impl Queue for Threaded {
    fn submit(&mut self, s: Submission) -> Result<(), Box<Submission>> {
        let Some(tx) = &self.tx else { return Err(Box::new(s)) };
        match tx.try_send(s) {
            Ok(()) => {
                self.in_flight += 1;
                Ok(())
            }
            Err(TrySendError::Full(s)) | Err(TrySendError::Disconnected(s)) => Err(Box::new(s)),
        }
    }
    fn reap(&mut self) -> Option<Completion> {
        let c = self.rx.try_recv().ok()?;
        self.in_flight -= 1;
        Some(c)
    }
    fn wait(&mut self) -> Option<Completion> {
        if self.in_flight == 0 {
            return None;
        }
        // The worker outlives every submission it accepted, so this answers.
        let c = self.rx.recv().ok()?;
        self.in_flight -= 1;
        Some(c)
    }
    fn in_flight(&self) -> usize {
        self.in_flight
    }
}

impl Drop for Threaded {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RejectKind, Rejection};

    /// A toy engine: the image is the input reversed at `base`; an input starting with
    /// 0xff is rejected at byte 0.
    struct Reverse;

    impl Engine for Reverse {
        fn name(&self) -> &'static str {
            "reverse"
        }
        fn check(&self, _: usize, _: Wire) -> Result<(), String> {
            Ok(())
        }
        fn decode(&mut self, req: &Request<'_>, out: &mut Vec<u8>) -> Result<Decoded, Error> {
            if req.input.first() == Some(&0xff) {
                return Err(Rejection::new(RejectKind::Truncated, 0).into());
            }
            out.clear();
            out.extend(req.input.iter().rev());
            out.extend_from_slice(&req.options.base.to_le_bytes());
            Ok(Decoded { len: out.len(), cycles: None })
        }
    }

    fn sub(tag: u64, input: &[u8]) -> Submission {
        Submission { tag, msg: 0, wire: Wire::Protobuf, base: tag * 8, input: input.to_vec(), output: Vec::new() }
    }

    fn check_completion(c: &Completion) {
        if c.input.first() == Some(&0xff) {
            assert!(matches!(c.result, Err(Error::Rejected(Rejection { kind: RejectKind::Truncated, .. }))));
        } else {
            let mut want: Vec<u8> = c.input.iter().rev().copied().collect();
            want.extend_from_slice(&(c.tag * 8).to_le_bytes());
            assert_eq!(c.output, want, "tag {}", c.tag);
        }
    }

    fn drive(q: &mut dyn Queue, n: u64) {
        let mut pending: VecDeque<Submission> = (0..n).map(|t| sub(t, &[t as u8, if t % 7 == 3 { 0 } else { 1 }, 2])).collect();
        pending[5].input[0] = 0xff;
        let mut seen = vec![false; n as usize];
        while let Some(s) = pending.pop_front() {
            if let Err(back) = q.submit(s) {
                pending.push_front(*back);
                let c = q.wait().expect("a full queue has something in flight");
                check_completion(&c);
                assert!(!std::mem::replace(&mut seen[c.tag as usize], true));
            }
        }
        while let Some(c) = q.wait() {
            check_completion(&c);
            assert!(!std::mem::replace(&mut seen[c.tag as usize], true));
        }
        assert!(seen.iter().all(|&s| s), "every submission completes once");
        assert_eq!(q.in_flight(), 0);
        assert!(q.reap().is_none());
    }

    #[test]
    fn inline_queue_completes_everything_once_and_pushes_back_when_full() {
        let mut q = Inline::new(Reverse, Options::default(), 4);
        for t in 0..4 {
            q.submit(sub(t, &[1])).unwrap();
        }
        let back = q.submit(sub(9, &[1, 2])).unwrap_err();
        assert_eq!((back.tag, back.input.as_slice()), (9, &[1u8, 2][..]));
        while q.reap().is_some() {}
        drive(&mut q, 50);
    }

    #[test]
    fn threaded_queue_completes_everything_once() {
        let mut q = Threaded::new(Reverse, Options::default(), 3);
        drive(&mut q, 200);
    }
}
