//! The service on heapwire: a tonic [`Codec`] whose requests are heap images read in
//! place through the generated Rust views (no prost structs) and whose replies are
//! written by heapwire's encoder, served by a hand-written router (one generic unary
//! path for the five rpcs, so each call's codec knows its rpc and the service's mode).
//!
//! Where the decode runs is the mode: `inline` in the codec's decoder, on the request's
//! own task; `pool` and `device` after it, the codec handing the wire bytes on to the
//! offload pool or the device and the task awaiting the image.

use std::cell::RefCell;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, BufMut};
use heapwire_cpu::CpuEngine;
use heapwire_engine::{Engine, Error, Options, Request, Wire};
use heapwire_image::rt::Image;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::{http, Body, BoxFuture, Service, StdError};
use tonic::{Response, Status};

use crate::handlers::{self, distinct_keys, Handlers};
use crate::offload::{rejected, DeviceOffload, PoolOffload, RequestImage};
use crate::schema::{Reply, Rpc, SCHEMA};
use crate::stats::Counters;
use crate::views::*;

/// Where requests are decoded.
pub enum Decode {
    /// In the codec, on the request's task.
    Inline,
    Pool(PoolOffload),
    Device(DeviceOffload),
}

/// What the service holds, shared by every call.
pub struct HeapwireSocial {
    pub handlers: Arc<Handlers>,
    pub counters: Arc<Counters>,
    pub decode: Decode,
}

thread_local! {
    /// Each application thread's engine for inline decodes (engines keep scratch memory).
    static ENGINE: RefCell<Option<CpuEngine>> = const { RefCell::new(None) };
    /// Scratch for encoding replies: the reply's image and its wire bytes.
    static REPLY_BUFS: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

static OPTIONS: std::sync::LazyLock<Options> = std::sync::LazyLock::new(Options::default);

/// Decodes `input` as message `msg` with this thread's CPU engine, into an image at base 0.
pub fn decode_inline(msg: usize, input: &[u8]) -> Result<Vec<u8>, Error> {
    ENGINE.with(|e| {
        let mut e = e.borrow_mut();
        let engine = e.get_or_insert_with(|| CpuEngine::new(SCHEMA.compiled.clone()));
        let mut image = Vec::new();
        engine.decode(&Request { msg, wire: Wire::Protobuf, input, options: &OPTIONS }, &mut image)?;
        Ok(image)
    })
}

/// A request as the codec hands it to the call.
pub enum Incoming {
    /// Decoded in the codec (inline).
    Image(Vec<u8>),
    /// The wire bytes, for the pool or the device.
    Wire(Vec<u8>),
}

/// heapwire's tonic codec for one rpc.
pub struct HeapwireCodec {
    rpc: Rpc,
    inline: bool,
    counters: Arc<Counters>,
}

impl Codec for HeapwireCodec {
    type Encode = Reply;
    type Decode = Incoming;
    type Encoder = ReplyEncoder;
    type Decoder = RequestDecoder;

    fn encoder(&mut self) -> ReplyEncoder {
        ReplyEncoder
    }

    fn decoder(&mut self) -> RequestDecoder {
        RequestDecoder { msg: SCHEMA.request_msg[self.rpc as usize], inline: self.inline, counters: self.counters.clone() }
    }
}

pub struct ReplyEncoder;

impl Encoder for ReplyEncoder {
    type Item = Reply;
    type Error = Status;

    fn encode(&mut self, item: Reply, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        REPLY_BUFS.with(|b| {
            let (image, wire) = &mut *b.borrow_mut();
            wire.clear();
            item.encode(image, wire).map_err(|e| Status::internal(format!("encoding the reply: {e}")))?;
            dst.put_slice(wire);
            Ok(())
        })
    }
}

pub struct RequestDecoder {
    msg: usize,
    inline: bool,
    counters: Arc<Counters>,
}

impl Decoder for RequestDecoder {
    type Item = Incoming;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Incoming>, Status> {
        // one gRPC message, contiguous in tonic's buffer
        let len = src.remaining();
        let bytes = &src.chunk()[..len];
        let item = if self.inline {
            match decode_inline(self.msg, bytes) {
                Ok(image) => Incoming::Image(image),
                Err(Error::Rejected(r)) => return Err(rejected(&r, &self.counters)),
                Err(Error::Engine(m)) => return Err(Status::internal(format!("decode failed: {m}"))),
            }
        } else {
            Incoming::Wire(bytes.to_vec())
        };
        src.advance(len);
        Ok(Some(item))
    }
}

impl HeapwireSocial {
    /// One call: the image (decoded already, or now off the task), then the handler.
    async fn call(&self, rpc: Rpc, incoming: Incoming) -> Result<Reply, Status> {
        let msg = SCHEMA.request_msg[rpc as usize];
        let image = match (incoming, &self.decode) {
            (Incoming::Image(v), _) => RequestImage::Owned(v),
            (Incoming::Wire(w), Decode::Pool(p)) => p.decode(msg, w).await?,
            (Incoming::Wire(w), Decode::Device(d)) => d.decode(msg, w).await?,
            (Incoming::Wire(_), Decode::Inline) => unreachable!("inline codecs decode"),
        };
        let reply = handle(&self.handlers, rpc, &image).map_err(|e| Status::resource_exhausted(e.to_string()))?;
        self.counters.served(rpc);
        Ok(reply)
    }
}

/// Runs rpc `rpc`'s handler on a request image, reading its fields in place.
pub fn handle(h: &Handlers, rpc: Rpc, image: &RequestImage) -> Result<Reply, handlers::Refusal> {
    let img = Image::new(image.bytes(), image.base(), PTR_WIDTH);
    Ok(match rpc {
        Rpc::ComposePost => {
            let v = heapwire_bench_social_ComposePostRequest::at(img, 0);
            Reply::ComposePost(h.compose_post(handlers::ComposePost {
                req_id: v.req_id(),
                username: v.username(),
                user_id: v.user_id(),
                text: v.text(),
                media_ids: v.media_ids_len(),
            }))
        }
        Rpc::StorePost => {
            let v = heapwire_bench_social_StorePostRequest::at(img, 0);
            let p = v.post();
            Reply::StorePost(h.store_post(handlers::StorePost {
                req_id: v.req_id(),
                post_id: p.map_or(0, |p| p.post_id()),
                text: p.map_or(&[][..], |p| p.text()),
                user_mentions: p.map_or(0, |p| p.user_mentions_len()),
                urls: p.map_or(0, |p| p.urls_len()),
                media: p.map_or(0, |p| p.media_len()),
            }))
        }
        Rpc::ComposeMedia => {
            let v = heapwire_bench_social_ComposeMediaRequest::at(img, 0);
            Reply::ComposeMedia(h.compose_media(handlers::ComposeMedia {
                req_id: v.req_id(),
                media_types: (0..v.media_types_len()).map(|i| v.media_types(i)),
                media_types_len: v.media_types_len(),
                media_ids_len: v.media_ids_len(),
            }))
        }
        Rpc::RegisterUser => {
            let v = heapwire_bench_social_RegisterUserRequest::at(img, 0);
            Reply::RegisterUser(h.register_user(handlers::RegisterUser {
                req_id: v.req_id(),
                username: v.username(),
                password: v.password(),
                user_id: v.user_id(),
            })?)
        }
        Rpc::Login => {
            let v = heapwire_bench_social_LoginRequest::at(img, 0);
            Reply::Login(h.login(handlers::Login {
                req_id: v.req_id(),
                username: v.username(),
                password: v.password(),
                carrier_entries: distinct_keys((0..v.carrier_len()).map(|i| v.carrier(i).key())),
            }))
        }
    })
}

/// One rpc's unary call, as tonic's server machinery runs it.
struct Call {
    rpc: Rpc,
    service: Arc<HeapwireSocial>,
}

impl tonic::server::UnaryService<Incoming> for Call {
    type Response = Reply;
    type Future = BoxFuture<Response<Reply>, Status>;

    fn call(&mut self, request: tonic::Request<Incoming>) -> Self::Future {
        let (rpc, service) = (self.rpc, self.service.clone());
        Box::pin(async move { service.call(rpc, request.into_inner()).await.map(Response::new) })
    }
}

/// The `heapwire.social.v1.Social` service on heapwire's codec.
#[derive(Clone)]
pub struct HeapwireSocialServer {
    service: Arc<HeapwireSocial>,
    max_request_bytes: usize,
}

impl HeapwireSocialServer {
    /// Requests over `max_request_bytes` are refused by tonic from their length prefix,
    /// before any byte of them is decoded (`OUT_OF_RANGE`).
    pub fn new(service: Arc<HeapwireSocial>, max_request_bytes: usize) -> Self {
        HeapwireSocialServer { service, max_request_bytes }
    }
}

impl<B> Service<http::Request<B>> for HeapwireSocialServer
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let Some(rpc) = Rpc::from_path(req.uri().path()) else {
            return Box::pin(async move { Ok(Status::unimplemented("no such method in heapwire.social.v1.Social").into_http()) });
        };
        let service = self.service.clone();
        let codec = HeapwireCodec { rpc, inline: matches!(service.decode, Decode::Inline), counters: service.counters.clone() };
        let mut grpc = tonic::server::Grpc::new(codec).apply_max_message_size_config(Some(self.max_request_bytes), None);
        Box::pin(async move { Ok(grpc.unary(Call { rpc, service }, req).await) })
    }
}

impl tonic::server::NamedService for HeapwireSocialServer {
    const NAME: &'static str = "heapwire.social.v1.Social";
}
