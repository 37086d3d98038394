/// The prost types and tonic service of the baseline, one module per protobuf package.
pub mod pb {
    pub mod heapwire {
        pub mod bench {
            pub mod social {
                tonic::include_proto!("heapwire.bench.social");
            }
        }
        pub mod social {
            pub mod v1 {
                tonic::include_proto!("heapwire.social.v1");
            }
        }
    }
    pub use heapwire::bench::social as req;
    pub use heapwire::social::v1 as rpc;
}
include!(concat!(env!("OUT_DIR"), "/social_service_views.gen.rs"));

pub mod client;
pub mod handlers;
pub mod heapwire_service;
pub mod offload;
pub mod prost_service;
pub mod schema;
pub mod server;
pub mod stats;
