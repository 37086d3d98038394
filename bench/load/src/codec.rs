//! A tonic codec that moves message bytes as they are: the load generator sends
//! requests encoded beforehand and does not look inside the replies, so it depends on
//! neither server codec (heapwire's or prost's).

use bytes::{Buf, BufMut, Bytes};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

/// Encodes `Bytes` verbatim as the gRPC message and decodes a reply into its bytes.
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
