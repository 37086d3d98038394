//! The compiled social-service schema (built into the binary by `build.rs`), the five
//! rpcs' message types in it, and replies written as heap images for heapwire's encoder.

use std::sync::{Arc, LazyLock};

use heapwire_cpu::protobuf::encode::{encode, EncodeError};
use heapwire_image::ImageView;
use heapwire_schema::{CompiledSchema, Kind, Presence};

use crate::handlers;

static TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/social_service.hwsc"));

/// The five rpcs of `heapwire.social.v1.Social`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rpc {
    ComposePost = 0,
    StorePost = 1,
    ComposeMedia = 2,
    RegisterUser = 3,
    Login = 4,
}

impl Rpc {
    pub const ALL: [Rpc; 5] = [Rpc::ComposePost, Rpc::StorePost, Rpc::ComposeMedia, Rpc::RegisterUser, Rpc::Login];

    /// The rpc's name in the .proto (`ComposePost`).
    pub fn name(self) -> &'static str {
        ["ComposePost", "StorePost", "ComposeMedia", "RegisterUser", "Login"][self as usize]
    }

    /// The HTTP/2 path gRPC calls it by.
    pub fn path(self) -> &'static str {
        [
            "/heapwire.social.v1.Social/ComposePost",
            "/heapwire.social.v1.Social/StorePost",
            "/heapwire.social.v1.Social/ComposeMedia",
            "/heapwire.social.v1.Social/RegisterUser",
            "/heapwire.social.v1.Social/Login",
        ][self as usize]
    }

    pub fn from_path(path: &str) -> Option<Rpc> {
        Rpc::ALL.into_iter().find(|r| r.path() == path)
    }

    pub fn request_type(self) -> String {
        format!("heapwire.bench.social.{}Request", self.name())
    }

    pub fn reply_type(self) -> String {
        format!("heapwire.social.v1.{}Reply", self.name())
    }
}

/// The compiled schema and where the rpcs' messages are in it.
pub struct SocialSchema {
    pub compiled: Arc<CompiledSchema>,
    /// Message index of each rpc's request, by `Rpc as usize`.
    pub request_msg: [usize; 5],
    pub reply_msg: [usize; 5],
}

pub static SCHEMA: LazyLock<SocialSchema> = LazyLock::new(|| {
    let compiled = heapwire_schema::table_file::read(TABLE).expect("the table file build.rs wrote reads back");
    let index = |name: String| compiled.message_index(&name).unwrap_or_else(|| panic!("{name} is in social_service.proto"));
    SocialSchema {
        request_msg: Rpc::ALL.map(|r| index(r.request_type())),
        reply_msg: Rpc::ALL.map(|r| index(r.reply_type())),
        compiled: Arc::new(compiled),
    }
});

/// A reply as the handlers produced it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    ComposePost(handlers::ComposePostReply),
    StorePost(handlers::StorePostReply),
    ComposeMedia(handlers::ComposeMediaReply),
    RegisterUser(handlers::RegisterUserReply),
    Login(handlers::LoginReply),
}

/// A field value to write into a reply image.
enum Value<'a> {
    I64(i64),
    U64(u64),
    I32(i32),
    Bool(bool),
    Str(&'a [u8]),
}

/// Fields 1-6 of the ComposePost and StorePost replies.
fn post_fields(p: &handlers::PostSummary) -> Vec<(u32, Value<'_>)> {
    use Value::*;
    vec![(1, I64(p.req_id)), (2, I64(p.post_id)), (3, U64(p.text_hash)), (4, I32(p.mentions)), (5, I32(p.urls)), (6, I32(p.media))]
}

impl Reply {
    pub fn rpc(&self) -> Rpc {
        match self {
            Reply::ComposePost(_) => Rpc::ComposePost,
            Reply::StorePost(_) => Rpc::StorePost,
            Reply::ComposeMedia(_) => Rpc::ComposeMedia,
            Reply::RegisterUser(_) => Rpc::RegisterUser,
            Reply::Login(_) => Rpc::Login,
        }
    }

    /// The reply's fields by field number (the .proto's).
    fn fields(&self) -> Vec<(u32, Value<'_>)> {
        use Value::*;
        match self {
            Reply::ComposePost(r) => {
                let mut f = post_fields(&r.post);
                f.push((7, Bool(r.author_known)));
                f
            }
            Reply::StorePost(r) => post_fields(r),
            Reply::ComposeMedia(r) => vec![(1, I64(r.req_id)), (2, I32(r.media)), (3, U64(r.types_hash))],
            Reply::RegisterUser(r) => vec![(1, I64(r.req_id)), (2, I64(r.user_id)), (3, Bool(r.created))],
            Reply::Login(r) => {
                vec![(1, I64(r.req_id)), (2, Bool(r.ok)), (3, Str(r.token.as_bytes())), (4, I32(r.carrier_entries))]
            }
        }
    }

    /// Writes the reply as a heap image at base 0 into `image` (cleared first): the
    /// struct, then the token string's bytes, as `docs/image-layout.md` lays them out.
    pub fn write_image(&self, image: &mut Vec<u8>) {
        let s = &SCHEMA.compiled;
        let m = &s.messages[SCHEMA.reply_msg[self.rpc() as usize]];
        let ptr = s.ptr() as usize;
        image.clear();
        image.resize(m.size as usize, 0);
        for (number, value) in self.fields() {
            let f = &m.fields[m.field_index(number).expect("reply field numbers are the .proto's")];
            debug_assert!(matches!(f.presence, Presence::Implicit), "reply fields are proto3 implicit");
            let at = f.offset as usize;
            match (value, f.kind) {
                (Value::I64(v), Kind::Int64) => image[at..at + 8].copy_from_slice(&v.to_le_bytes()),
                (Value::U64(v), Kind::Fixed64) => image[at..at + 8].copy_from_slice(&v.to_le_bytes()),
                (Value::I32(v), Kind::Int32) => image[at..at + 4].copy_from_slice(&v.to_le_bytes()),
                (Value::Bool(v), Kind::Bool) => image[at] = v as u8,
                (Value::Str(v), Kind::String) => {
                    if !v.is_empty() {
                        let data = image.len().next_multiple_of(8);
                        image.resize(data, 0);
                        image.extend_from_slice(v);
                        image[at..at + ptr].copy_from_slice(&(data as u64).to_le_bytes()[..ptr]);
                        image[at + ptr..at + 2 * ptr].copy_from_slice(&(v.len() as u64).to_le_bytes()[..ptr]);
                    }
                }
                (_, k) => unreachable!("reply field {number} of {} is {k:?}", m.full_name),
            }
        }
    }

    /// The reply's protobuf bytes, by heapwire's encoder over its image, appended to `out`.
    pub fn encode(&self, image: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        self.write_image(image);
        let s = &SCHEMA.compiled;
        encode(s, SCHEMA.reply_msg[self.rpc() as usize], &ImageView::for_schema(s, image, 0), 0, out)
    }
}
