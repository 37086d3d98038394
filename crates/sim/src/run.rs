//! One run of a compiled simulator, the same for both cores: the input written as a hex
//! memory file, `vvp` with the testbench's plusargs (`heapwire_emit::testbench`), its
//! report read back (cycles, the error register, the image size) and the image.

use std::path::{Path, PathBuf};
use std::process::Command;

use heapwire_engine::RejectKind;

use crate::cache::{cache_dir, missing_icarus, tool};
use crate::{SimError, SimOutput};

/// The checks both drivers make before building anything: an input the cores' 32-bit
/// lengths hold, and memory widths a core can be built with.
pub(crate) fn check_request(input: &[u8], in_width: u32, out_width: u32) -> Result<(), SimError> {
    if input.len() > (u32::MAX / 2) as usize {
        return Err(SimError::rejected(RejectKind::Capacity));
    }
    if ![64, 128, 256].contains(&out_width) {
        return Err(SimError::Tool(format!("output width {out_width} (64, 128 or 256)")));
    }
    if ![32, 64, 128].contains(&in_width) {
        return Err(SimError::Tool(format!("input width {in_width} (32, 64 or 128)")));
    }
    Ok(())
}

/// One run: the simulator, the input, the shared plusargs' values and the core's own.
pub(crate) struct Run<'a> {
    pub vvp: &'a Path,
    pub input: &'a [u8],
    pub root: usize,
    pub base: u64,
    pub max_cycles: u64,
    /// Further plusargs (`+hist`, `+maximage=N`).
    pub args: Vec<String>,
    /// Files the testbench reads, `(name, text)`: each written beside the input and
    /// passed as `+name=PATH`.
    pub files: Vec<(&'a str, String)>,
    /// The core's error register: the kind of each code it reports.
    pub error_kind: fn(u32) -> Option<RejectKind>,
}

impl Run<'_> {
    /// Runs the simulator; returns what the core wrote (or its verdict) and the testbench's output.
    pub(crate) fn run(&self) -> Result<(SimOutput, String), SimError> {
        run(self)
    }
}

fn run(r: &Run) -> Result<(SimOutput, String), SimError> {
    let run_dir = cache_dir().join("runs");
    std::fs::create_dir_all(&run_dir).map_err(|e| SimError::Tool(e.to_string()))?;
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stem = run_dir.join(format!("{}-{n}", std::process::id()));
    let mut hex = String::with_capacity(r.input.len() * 3);
    for w in r.input.chunks(8) {
        let mut word = [0u8; 8];
        word[..w.len()].copy_from_slice(w);
        hex.push_str(&format!("{:016x}\n", u64::from_le_bytes(word)));
    }
    let image_file = stem.with_extension("out.hex");
    let mut inputs: Vec<(&str, PathBuf, &str)> = vec![("in", stem.with_extension("in.hex"), &hex)];
    inputs.extend(r.files.iter().map(|(name, text)| (*name, stem.with_extension(format!("{name}.hex")), text.as_str())));
    let mut written = Ok(());
    for (_, path, text) in &inputs {
        if written.is_ok() {
            written = std::fs::write(path, text).map_err(|e| SimError::Tool(e.to_string()));
        }
    }
    let out = written.and_then(|()| {
        Command::new(tool("vvp"))
            .arg("-n")
            .arg(r.vvp)
            .args(inputs.iter().map(|(name, path, _)| format!("+{name}={}", path.display())))
            .arg(format!("+out={}", image_file.display()))
            .arg(format!("+len={}", r.input.len()))
            .arg(format!("+root={}", r.root))
            .arg(format!("+base={:x}", r.base))
            .arg(format!("+maxcycles={}", r.max_cycles))
            .args(&r.args)
            .output()
            .map_err(|e| missing_icarus("vvp", e))
    });
    for (_, path, _) in &inputs {
        let _ = std::fs::remove_file(path);
    }
    let out = out?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let result = report(&text, &out.stderr, r.error_kind).and_then(|(cycles, size)| {
        let image = read_image(&image_file, size)?;
        Ok(SimOutput { image, cycles })
    });
    let _ = std::fs::remove_file(&image_file);
    Ok((result?, text))
}

/// Reads what a testbench printed (`cycles N`, `err CODE OFFSET`, `size N`, or
/// `timeout N` / `conflict ...`): the cycle count and image size, or the core's verdict.
fn report(text: &str, stderr: &[u8], error_kind: fn(u32) -> Option<RejectKind>) -> Result<(u64, usize), SimError> {
    let (mut cycles, mut errc, mut size) = (None, None, None);
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["cycles", c] => cycles = c.parse::<u64>().ok(),
            ["err", c, o] => errc = Some((c.parse::<u32>().unwrap_or(u32::MAX), o.parse::<u64>().unwrap_or(0))),
            ["size", s] => size = s.parse::<usize>().ok(),
            ["timeout", c] => return Err(SimError::Tool(format!("core did not finish within {c} cycles"))),
            ["conflict", ..] => return Err(SimError::Tool(format!("output memory port misuse: {line}"))),
            _ => {}
        }
    }
    match (cycles, errc, size) {
        (Some(cycles), Some((0, _)), Some(size)) => Ok((cycles, size)),
        (Some(cycles), Some((code, offset)), Some(_)) => match error_kind(code) {
            Some(kind) => Err(SimError::Rejected { kind, offset, cycles }),
            None => Err(SimError::Tool(format!("the core reported an unknown error code {code}"))),
        },
        _ => Err(SimError::Tool(format!("unexpected simulator output: {text}{}", String::from_utf8_lossy(stderr)))),
    }
}

/// The image the testbench wrote: 64-bit hex words, the first byte the low byte of the
/// first word; `size` bytes of it.
fn read_image(path: &Path, size: usize) -> Result<Vec<u8>, SimError> {
    let words = std::fs::read_to_string(path).map_err(|e| SimError::Tool(format!("image: {e}")))?;
    let mut image = Vec::with_capacity(size + 8);
    for line in words.lines() {
        let w = u64::from_str_radix(line.trim(), 16)
            .map_err(|_| SimError::Tool(format!("image word not fully defined (x/z bits): {line}")))?;
        image.extend_from_slice(&w.to_le_bytes());
    }
    if image.len() < size {
        return Err(SimError::Tool("image shorter than its size".into()));
    }
    image.truncate(size);
    Ok(image)
}
