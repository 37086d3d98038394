//! A client that sends a request's protobuf bytes as they are and gets the reply's bytes
//! back: for corpora of pre-encoded requests, and for malformed ones no typed client
//! can produce.

use bytes::{Buf, BufMut};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;
use tonic::Status;

use crate::schema::Rpc;

/// Bytes in, bytes out.
#[derive(Clone, Copy, Debug, Default)]
pub struct RawCodec;

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }
    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let mut v = vec![0; src.remaining()];
        src.copy_to_slice(&mut v);
        Ok(Some(v))
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
    pub async fn call(&mut self, rpc: Rpc, request: Vec<u8>) -> Result<Vec<u8>, Status> {
        self.grpc.ready().await.map_err(|e| Status::unavailable(format!("channel not ready: {e}")))?;
        let path = tonic::codegen::http::uri::PathAndQuery::from_static(rpc.path());
        self.grpc.unary(tonic::Request::new(request), path, RawCodec).await.map(|r| r.into_inner())
    }
}
