//! The optional shared key: HMAC-SHA256 over the whole frame (header with its CRC, and
//! the payload), truncated to 16 bytes and appended.
use std::fmt;
use std::io;
use std::path::Path;

use hmac::{Hmac, Mac};
use sha2::Sha256;

pub const MAC_LEN: usize = 16;
/// Shortest key accepted.
pub const MIN_KEY_LEN: usize = 16;

#[derive(Clone)]
pub struct Key(Vec<u8>);

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({} bytes)", self.0.len())
    }
}

impl Key {
    /// A key of at least 16 bytes.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> io::Result<Key> {
        let b = bytes.into();
        if b.len() < MIN_KEY_LEN {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("link key is {} bytes; at least {MIN_KEY_LEN} are needed", b.len()),
            ));
        }
        Ok(Key(b))
    }

    /// Reads a key file: when its content, without surrounding whitespace, is an even
    /// number of hex digits it is decoded as hex; otherwise its raw bytes are the key.
    pub fn from_file(path: impl AsRef<Path>) -> io::Result<Key> {
        let path = path.as_ref();
        let raw = std::fs::read(path)
            .map_err(|e| io::Error::new(e.kind(), format!("reading link key file {}: {e}", path.display())))?;
        let text = std::str::from_utf8(&raw).map(str::trim).unwrap_or("");
        let bytes = if !text.is_empty() && text.len() % 2 == 0 && text.bytes().all(|c| c.is_ascii_hexdigit()) {
            (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
        } else {
            raw
        };
        Key::from_bytes(bytes).map_err(|e| io::Error::new(e.kind(), format!("link key file {}: {e}", path.display())))
    }

    fn mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }

    pub fn tag(&self, data: &[u8]) -> [u8; MAC_LEN] {
        let mut m = self.mac();
        m.update(data);
        let full = m.finalize().into_bytes();
        full[..MAC_LEN].try_into().unwrap()
    }

    /// Constant-time check of a truncated tag.
    pub fn verify(&self, data: &[u8], tag: &[u8]) -> bool {
        let mut m = self.mac();
        m.update(data);
        tag.len() == MAC_LEN && m.verify_truncated_left(tag).is_ok()
    }
}
