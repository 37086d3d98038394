//! A client that sends a request's protobuf bytes as they are and gets the reply's bytes
//! back: for corpora of pre-encoded requests, and for malformed ones no typed client
//! can produce.

use bytes::{Buf, BufMut, Bytes};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;
use tonic::Status;

use crate::schema::Rpc;

/// Encodes `Bytes` verbatim as the gRPC message and decodes a reply into its bytes; the
/// load generator (`bench/load`) sends its pre-encoded corpora through it too.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawCodec;

/// The encoding half of [`RawCodec`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RawEncoder;

/// The decoding half of [`RawCodec`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RawDecoder;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

impl Encoder for RawEncoder {
    type Item = Bytes;
    type Error = Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawDecoder {
    type Item = Bytes;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// A channel to the service that sends raw request bytes.
#[derive(Clone)]
pub struct RawClient {
    grpc: tonic::client::Grpc<Channel>,
}

impl RawClient {
    pub fn new(channel: Channel) -> RawClient {
        // no client-side limits: the server's are what is being tested
        RawClient { grpc: tonic::client::Grpc::new(channel).max_decoding_message_size(usize::MAX).max_encoding_message_size(usize::MAX) }
    }

    /// Calls `rpc` with `request` (protobuf bytes, sent unchecked); the reply's bytes.
    pub async fn call(&mut self, rpc: Rpc, request: impl Into<Bytes>) -> Result<Bytes, Status> {
        self.grpc.ready().await.map_err(|e| Status::unavailable(format!("channel not ready: {e}")))?;
        let path = tonic::codegen::http::uri::PathAndQuery::from_static(rpc.path());
        self.grpc.unary(tonic::Request::new(request.into()), path, RawCodec).await.map(|r| r.into_inner())
    }
}
