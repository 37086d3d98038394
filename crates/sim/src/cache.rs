//! The simulator build cache: each generated design, with its testbench, compiled once by
//! Icarus Verilog into a `.vvp` file named by a hash of every source text.

use std::path::PathBuf;
use std::process::Command;

use crate::SimError;

/// Where compiled simulators (and the files of each run) are kept.
pub fn cache_dir() -> PathBuf {
    std::env::temp_dir().join("heapwire-sim")
}

/// The command that runs tool `name` (`iverilog`, `vvp`): `$HEAPWIRE_IVERILOG` etc., or the name.
pub(crate) fn tool(name: &str) -> String {
    std::env::var(format!("HEAPWIRE_{}", name.to_uppercase())).unwrap_or_else(|_| name.to_string())
}

pub(crate) fn missing_icarus(tool: &str, e: std::io::Error) -> SimError {
    SimError::Tool(format!("cannot run {tool} ({e}); install Icarus Verilog (apt-get install iverilog)"))
}

fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// The cache's file `file` of a build named `kind` and a hash of `head` and the texts of
/// the `generated` and hand-written `sources` files.
pub(crate) fn entry(kind: &str, file: &str, head: &[&[u8]], sources: &[(&str, &str)], generated: &[(&str, &str)]) -> PathBuf {
    let mut parts = head.to_vec();
    parts.extend(generated.iter().chain(sources).map(|(_, text)| text.as_bytes()));
    cache_dir().join(format!("{kind}{:016x}", fnv1a(&parts))).join(file)
}

/// Compiles the hand-written `sources` and the `generated` files (top module `tb`) with
/// iverilog into a simulator cached under a hash of every text; returns the .vvp path.
/// `kind` separates the cores' cache entries.
pub(crate) fn compile_simulator(kind: &str, sources: &[(&str, &str)], generated: &[(&str, &str)]) -> Result<PathBuf, SimError> {
    let vvp = entry(kind, "sim.vvp", &[kind.as_bytes()], sources, generated);
    let dir = vvp.parent().unwrap();
    if vvp.exists() {
        return Ok(vvp);
    }
    std::fs::create_dir_all(dir).map_err(|e| SimError::Tool(format!("{}: {e}", dir.display())))?;
    let uniq = format!("{}-{:?}", std::process::id(), std::thread::current().id()).replace(['(', ')'], "");
    let work = dir.join(format!("build-{uniq}"));
    std::fs::create_dir_all(&work).map_err(|e| SimError::Tool(format!("{}: {e}", work.display())))?;
    let mut files = Vec::new();
    for (name, text) in sources.iter().chain(generated) {
        let p = work.join(name);
        std::fs::write(&p, text).map_err(|e| SimError::Tool(e.to_string()))?;
        files.push(p);
    }
    let tmp = work.join("sim.vvp");
    let out = Command::new(tool("iverilog"))
        .arg("-g2012")
        .arg("-o")
        .arg(&tmp)
        .arg("-s")
        .arg("tb")
        .args(&files)
        .output()
        .map_err(|e| missing_icarus("iverilog", e))?;
    if !out.status.success() {
        return Err(SimError::Tool(format!("iverilog failed: {}", String::from_utf8_lossy(&out.stderr))));
    }
    std::fs::rename(&tmp, &vvp).map_err(|e| SimError::Tool(e.to_string()))?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(vvp)
}
