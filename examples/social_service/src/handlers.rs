//! The service's work, shared by both codecs: each rpc is one function from borrowed
//! request fields (read in place from a heapwire image, or borrowed from a prost struct)
//! to a plain reply struct that each codec then encodes its own way. The work is small
//! and realistic (hashing, scanning the text, a user-table lookup) and deterministic, so
//! replies can be compared across codecs and modes (docs/service.md, "Replies").

use std::collections::HashMap;
use std::sync::RwLock;

/// Most users the in-memory table holds; `RegisterUser` past it is refused (bounded memory).
pub const MAX_USERS: usize = 1 << 20;

/// FNV-1a, 64-bit: the service's one documented hash (offset basis 0xcbf29ce484222325,
/// prime 0x100000001b3), continued from `h` so several pieces can be hashed in turn.
pub fn fnv1a64_from(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

pub fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a64_from(FNV_OFFSET, bytes)
}

/// `(mentions, urls)` in `text`: words (runs of bytes that are not ASCII whitespace)
/// that start with `@` and have at least one more byte, and words that start with
/// `http://` or `https://` and have at least one more byte.
pub fn scan_text(text: &[u8]) -> (i32, i32) {
    let (mut mentions, mut urls) = (0i32, 0i32);
    for w in text.split(|b| b.is_ascii_whitespace()) {
        if w.len() > 1 && w[0] == b'@' {
            mentions = mentions.saturating_add(1);
        } else if (w.len() > 7 && w.starts_with(b"http://")) || (w.len() > 8 && w.starts_with(b"https://")) {
            urls = urls.saturating_add(1);
        }
    }
    (mentions, urls)
}

/// A post id derived from the request id and the text's hash (the top bit cleared, so
/// it is a non-negative `int64`).
pub fn post_id(req_id: i64, text_hash: u64) -> i64 {
    ((req_id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ text_hash) as i64 & i64::MAX
}

/// The password hash the user table keeps: FNV-1a over `username 0x00 password`.
pub fn password_hash(username: &[u8], password: &[u8]) -> u64 {
    fnv1a64_from(fnv1a64_from(fnv1a64(username), &[0]), password)
}

/// A login token: 16 lowercase hex digits of FNV-1a over `"token" 0x00 username 0x00 password`.
pub fn login_token(username: &[u8], password: &[u8]) -> String {
    let h = fnv1a64_from(fnv1a64_from(fnv1a64_from(fnv1a64(b"token\0"), username), &[0]), password);
    format!("{h:016x}")
}

/// Distinct keys among a map's entries, as a map holds them (the last entry for a key
/// wins): a heapwire image keeps every entry in wire order, prost's `HashMap` one per key.
pub fn distinct_keys<'a>(keys: impl Iterator<Item = &'a [u8]>) -> usize {
    keys.collect::<std::collections::HashSet<_>>().len()
}

/// Counts `n` as a reply's `int32`, saturating (an image may hold more than 2^31).
fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

// ---- requests, as the handlers see them --------------------------------------------

pub struct ComposePost<'a> {
    pub req_id: i64,
    pub username: &'a [u8],
    pub user_id: i64,
    pub text: &'a [u8],
    pub media_ids: usize,
}

/// `post` absent reads as every field zero or empty.
pub struct StorePost<'a> {
    pub req_id: i64,
    pub post_id: i64,
    pub text: &'a [u8],
    pub user_mentions: usize,
    pub urls: usize,
    pub media: usize,
}

pub struct ComposeMedia<I> {
    pub req_id: i64,
    /// Each media type in order; only the first `min(types, ids)` are hashed.
    pub media_types: I,
    pub media_types_len: usize,
    pub media_ids_len: usize,
}

pub struct RegisterUser<'a> {
    pub req_id: i64,
    pub username: &'a [u8],
    pub password: &'a [u8],
    pub user_id: i64,
}

pub struct Login<'a> {
    pub req_id: i64,
    pub username: &'a [u8],
    pub password: &'a [u8],
    /// Distinct keys in `carrier` (a map: the last entry for a key wins).
    pub carrier_entries: usize,
}

// ---- replies -----------------------------------------------------------------------

/// What the ComposePost and StorePost replies share (their fields 1-6).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostSummary {
    pub req_id: i64,
    pub post_id: i64,
    pub text_hash: u64,
    pub mentions: i32,
    pub urls: i32,
    pub media: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComposePostReply {
    pub post: PostSummary,
    pub author_known: bool,
}

pub type StorePostReply = PostSummary;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComposeMediaReply {
    pub req_id: i64,
    pub media: i32,
    pub types_hash: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegisterUserReply {
    pub req_id: i64,
    pub user_id: i64,
    pub created: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoginReply {
    pub req_id: i64,
    pub ok: bool,
    pub token: String,
    pub carrier_entries: i32,
}

/// Why a handler refused a request (it becomes a gRPC status).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The user table holds [`MAX_USERS`] already (`RESOURCE_EXHAUSTED`).
    UserTableFull,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::UserTableFull => write!(f, "user table full ({MAX_USERS} users)"),
        }
    }
}

struct User {
    user_id: i64,
    password_hash: u64,
}

/// The service's state: the in-memory user table.
#[derive(Default)]
pub struct Handlers {
    users: RwLock<HashMap<Vec<u8>, User>>,
}

impl Handlers {
    pub fn new() -> Handlers {
        Handlers::default()
    }

    /// The text hashed and scanned; `author_known` when `username` is registered with
    /// this `user_id`.
    pub fn compose_post(&self, r: ComposePost<'_>) -> ComposePostReply {
        let text_hash = fnv1a64(r.text);
        let (mentions, urls) = scan_text(r.text);
        let author_known = self.users().get(r.username).is_some_and(|u| u.user_id == r.user_id);
        ComposePostReply {
            post: PostSummary { req_id: r.req_id, post_id: post_id(r.req_id, text_hash), text_hash, mentions, urls, media: count(r.media_ids) },
            author_known,
        }
    }

    /// The post's own id, its text's hash and its entry counts.
    pub fn store_post(&self, r: StorePost<'_>) -> StorePostReply {
        PostSummary {
            req_id: r.req_id,
            post_id: r.post_id,
            text_hash: fnv1a64(r.text),
            mentions: count(r.user_mentions),
            urls: count(r.urls),
            media: count(r.media),
        }
    }

    /// `media` = ids paired with a type; `types_hash` = FNV-1a over those types, each
    /// followed by a 0x00 byte.
    pub fn compose_media<'t>(&self, r: ComposeMedia<impl Iterator<Item = &'t [u8]>>) -> ComposeMediaReply {
        let paired = r.media_types_len.min(r.media_ids_len);
        let types_hash = r.media_types.take(paired).fold(FNV_OFFSET, |h, t| fnv1a64_from(fnv1a64_from(h, t), &[0]));
        ComposeMediaReply { req_id: r.req_id, media: count(paired), types_hash }
    }

    /// Inserts the user unless the username is taken; `user_id` is the id the username
    /// has afterwards (the existing one when taken).
    pub fn register_user(&self, r: RegisterUser<'_>) -> Result<RegisterUserReply, Refusal> {
        let mut users = self.users.write().unwrap_or_else(|p| p.into_inner());
        if let Some(u) = users.get(r.username) {
            return Ok(RegisterUserReply { req_id: r.req_id, user_id: u.user_id, created: false });
        }
        if users.len() >= MAX_USERS {
            return Err(Refusal::UserTableFull);
        }
        users.insert(r.username.to_vec(), User { user_id: r.user_id, password_hash: password_hash(r.username, r.password) });
        Ok(RegisterUserReply { req_id: r.req_id, user_id: r.user_id, created: true })
    }

    /// `ok` when the username is registered with this password; the token only then.
    pub fn login(&self, r: Login<'_>) -> LoginReply {
        let ok = self.users().get(r.username).is_some_and(|u| u.password_hash == password_hash(r.username, r.password));
        LoginReply {
            req_id: r.req_id,
            ok,
            token: if ok { login_token(r.username, r.password) } else { String::new() },
            carrier_entries: count(r.carrier_entries),
        }
    }

    fn users(&self) -> std::sync::RwLockReadGuard<'_, HashMap<Vec<u8>, User>> {
        // a handler never panics holding the lock; recover the table anyway if one did
        self.users.read().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_known_values() {
        // published FNV-1a 64 test vectors
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
        assert_eq!(fnv1a64_from(fnv1a64(b"foo"), b"bar"), fnv1a64(b"foobar"));
    }

    #[test]
    fn scans_mentions_and_urls_by_word() {
        assert_eq!(scan_text(b"hi @bob and @ al\t@x\nhttp://a https://b.c/d http:// httpx://y @"), (2, 2));
        assert_eq!(scan_text(b""), (0, 0));
        assert_eq!(scan_text(b"mail@host https://"), (0, 0));
        assert_eq!(scan_text("@\u{e9}t\u{e9} caf\u{e9}".as_bytes()), (1, 0));
    }

    #[test]
    fn users_register_once_and_log_in_with_their_password() {
        let h = Handlers::new();
        let reg = |name: &[u8], pw: &[u8], id| h.register_user(RegisterUser { req_id: 1, username: name, password: pw, user_id: id }).unwrap();
        assert_eq!(reg(b"ann", b"pw", 7), RegisterUserReply { req_id: 1, user_id: 7, created: true });
        assert_eq!(reg(b"ann", b"other", 8), RegisterUserReply { req_id: 1, user_id: 7, created: false });
        let login = |name: &[u8], pw: &[u8]| h.login(Login { req_id: 2, username: name, password: pw, carrier_entries: 1 });
        let ok = login(b"ann", b"pw");
        assert!(ok.ok);
        assert_eq!(ok.token, login_token(b"ann", b"pw"));
        assert_eq!(ok.token.len(), 16);
        assert_eq!(login(b"ann", b"other"), LoginReply { req_id: 2, ok: false, token: String::new(), carrier_entries: 1 });
        assert!(!login(b"bob", b"pw").ok);
        let post = |name: &[u8], id| h.compose_post(ComposePost { req_id: 3, username: name, user_id: id, text: b"@a", media_ids: 2 });
        assert!(post(b"ann", 7).author_known);
        assert!(!post(b"ann", 8).author_known);
        assert!(!post(b"bob", 7).author_known);
        assert_eq!(post(b"ann", 7).post.media, 2);
    }

    #[test]
    fn media_types_pair_with_ids() {
        let h = Handlers::new();
        let types: [&[u8]; 3] = [b"ab", b"c", b"zz"];
        let r = h.compose_media(ComposeMedia { req_id: 1, media_types: types.iter().copied(), media_types_len: 3, media_ids_len: 2 });
        assert_eq!(r.media, 2);
        assert_eq!(r.types_hash, fnv1a64(b"ab\0c\0"));
        // the separator tells ["ab","c"] from ["a","bc"]
        let other: [&[u8]; 2] = [b"a", b"bc"];
        let r2 = h.compose_media(ComposeMedia { req_id: 1, media_types: other.iter().copied(), media_types_len: 2, media_ids_len: 2 });
        assert_ne!(r2.types_hash, r.types_hash);
    }
}
