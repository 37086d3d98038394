//! The generated C header compiles with gcc (its _Static_asserts check every offset
//! and size), and a C program reading a decoded image through it — mapped at the
//! image's base address — sees the decoded values.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn heapwire(args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    use std::io::Write;
    let mut c = Command::new(env!("CARGO_BIN_EXE_heapwire"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(stdin.unwrap_or(&[])).unwrap();
    c.wait_with_output().unwrap()
}

fn gcc(dir: &Path, src: &str, extra: &[&str]) -> PathBuf {
    let c = dir.join("t.c");
    std::fs::write(&c, src).unwrap();
    let exe = dir.join("t");
    let out = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Werror", "-O1", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg("-I")
        .arg(dir)
        .args(extra)
        .output()
        .expect("gcc runs");
    assert!(out.status.success(), "gcc failed:\n{}", String::from_utf8_lossy(&out.stderr));
    exe
}

#[test]
fn headers_compile_for_every_schema_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    let schemas = [
        "crates/cpu/testdata/unit.proto",
        "crates/cpu/testdata/unit2.proto",
        "bench/schemas/social.proto",
        "bench/schemas/google_message1.proto",
        "bench/schemas/google_message2.proto",
        // Editions, and extensions (slots named pkg_Scope_ext).
        "tests/differential/schemas/editions2023.proto",
        "tests/differential/schemas/editions2024.proto",
        "tests/differential/schemas/extensions2023.proto",
    ];
    for (i, s) in schemas.iter().enumerate() {
        for flags in [&[][..], &["--pointer-width", "32"][..], &["--header-word"][..]] {
            let out = dir.path().join(format!("o{i}{}", flags.len()));
            let mut args: Vec<String> = vec!["compile".into(), repo().join(s).to_str().unwrap().to_string(), "-o".into(), out.to_str().unwrap().into()];
            args.extend(flags.iter().map(|f| f.to_string()));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = heapwire(&args, None);
            assert!(o.status.success(), "compile {s}: {}", String::from_utf8_lossy(&o.stderr));
            let stem = Path::new(s).file_stem().unwrap().to_str().unwrap();
            let hdr = out.join(format!("{stem}.gen.h"));
            let src = format!("#include \"{}\"\nint main(void) {{ return 0; }}\n", hdr.display());
            gcc(dir.path(), &src, &[]);
        }
    }
}

#[test]
fn c_reads_the_image_at_its_base() {
    let dir = tempfile::tempdir().unwrap();
    let schema = repo().join("crates/cpu/testdata/unit.proto");
    let o = heapwire(&["compile", schema.to_str().unwrap(), "-o", dir.path().to_str().unwrap()], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // i32=-7, s="héllo", leaf{id=3,name="x"}, packed_ints=[1,2,300], strs=["a","bc"], c_str="z"
    let msg: &[u8] = &[
        0x08, 0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, // i32 = -7
        0x72, 0x06, b'h', 0xc3, 0xa9, b'l', b'l', b'o', // s
        0x92, 0x01, 0x05, 0x08, 0x03, 0x12, 0x01, b'x', // leaf
        0xa2, 0x01, 0x04, 0x01, 0x02, 0xac, 0x02, // packed_ints
        0xaa, 0x01, 0x01, b'a', 0xaa, 0x01, 0x02, b'b', b'c', // strs
        0xc2, 0x01, 0x01, b'z', // c_str (oneof)
    ];
    let base = "0x300000000";
    let o = heapwire(&["decode", "--schema", schema.to_str().unwrap(), "--type", "unit.Node", "--base", base], Some(msg));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let img = dir.path().join("img.bin");
    std::fs::write(&img, &o.stdout).unwrap();
    let src = format!(
        r#"#include <stdio.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include "unit.gen.h"
int main(int argc, char **argv) {{
  int fd = open(argv[1], O_RDONLY);
  off_t n = lseek(fd, 0, SEEK_END);
  void *at = mmap((void *){base}ULL, n, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
  if (at != (void *){base}ULL) {{ perror("mmap"); return 2; }}
  const unit_Node *m = at;
  printf("%d %.*s %d %.*s", m->i32, (int)m->s.len, (const char *)m->s.data, m->leaf->id,
         (int)m->leaf->name.len, (const char *)m->leaf->name.data);
  for (uint64_t i = 0; i < m->packed_ints.count; i++) printf(" %d", m->packed_ints.items[i]);
  for (uint64_t i = 0; i < m->strs.count; i++) printf(" %.*s", (int)m->strs.items[i].len, (const char *)m->strs.items[i].data);
  printf(" case=%u %.*s\n", m->choice_case, (int)m->choice.c_str.len, (const char *)m->choice.c_str.data);
  return 0;
}}
"#
    );
    let exe = gcc(dir.path(), &src, &["-D_GNU_SOURCE"]);
    let run = Command::new(exe).arg(&img).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "-7 héllo 3 x 1 2 300 a bc case=24 z\n");
}
