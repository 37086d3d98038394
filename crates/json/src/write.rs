//! JSON text that both halves write: strings, and the spelling of non-finite floats.
//! (Finite numbers differ: the proto3 printer writes Python's `repr`, the object-graph
//! printer Rust's shortest `Display`.)

/// A float that JSON has no number for, as the proto3 JSON mapping spells it (a
/// string): `"NaN"`, `"Infinity"`, `"-Infinity"`; `None` for a finite value.
pub(crate) fn non_finite(v: f64) -> Option<&'static [u8]> {
    if v.is_nan() {
        Some(b"\"NaN\"")
    } else if v.is_infinite() {
        Some(if v > 0.0 { b"\"Infinity\"" } else { b"\"-Infinity\"" })
    } else {
        None
    }
}

/// Writes `s` as a JSON string, as Python's `json.dumps` does: `\" \\ \n \r \t \b \f`,
/// other bytes below 0x20 as `\u00XX`, and with `ensure_ascii` every non-ASCII
/// character as `\uXXXX` (surrogate pairs above the BMP); invalid UTF-8 sequences
/// become U+FFFD.
pub(crate) fn string(out: &mut Vec<u8>, s: &[u8], ensure_ascii: bool) {
    out.push(b'"');
    for chunk in s.utf8_chunks() {
        write_valid(out, chunk.valid(), ensure_ascii);
        if !chunk.invalid().is_empty() {
            write_valid(out, "\u{fffd}", ensure_ascii);
        }
    }
    out.push(b'"');
}

fn write_valid(out: &mut Vec<u8>, s: &str, ensure_ascii: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = s.as_bytes();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&b[start..i]);
        if esc.is_empty() {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    if !ensure_ascii || s.is_ascii() {
        out.extend_from_slice(&b[start..]);
        return;
    }
    for ch in s[start..].chars() {
        if ch.is_ascii() {
            out.push(ch as u8);
        } else {
            let mut units = [0u16; 2];
            for u in ch.encode_utf16(&mut units) {
                out.extend_from_slice(b"\\u");
                for k in (0..4).rev() {
                    out.push(HEX[((*u >> (4 * k)) & 15) as usize]);
                }
            }
        }
    }
}
