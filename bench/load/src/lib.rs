//! heapwire's open-loop load generator for the social service (`social_load`).
//!
//! Requests are pre-encoded bytes (see [`corpus`]), sent through a raw-bytes tonic
//! codec (`RawCodec`, shared with the service's own test client) on a fixed schedule ([`run`]); outcomes and latencies are
//! accounted in [`record`] and summarised in [`report`].

pub mod corpus;
pub mod record;
pub mod report;
pub mod run;

pub use heapwire_social_service::client::RawCodec;
pub use corpus::{Corpus, Mix, Rpc};
pub use record::Outcome;
pub use report::Report;
pub use run::{parse_duration, run, LoadConfig};
