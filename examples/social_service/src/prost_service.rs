//! The baseline: the service as Rust users write it today — tonic's generated server,
//! prost structs decoded by `tonic_prost::ProstCodec` on the request's task — calling the
//! same handlers as the heapwire codec.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::handlers::{self, Handlers};
use crate::pb::req;
use crate::pb::rpc::{self, social_server::Social};
use crate::schema::Rpc;
use crate::stats::Counters;

/// A ComposePost or StorePost reply from the fields they share (`PostSummary`), plus any
/// of the type's own.
macro_rules! post_reply {
    ($ty:ident, $p:expr $(, $field:ident: $v:expr)*) => {{
        let p: handlers::PostSummary = $p;
        rpc::$ty { req_id: p.req_id, post_id: p.post_id, text_hash: p.text_hash, mentions: p.mentions, urls: p.urls, media: p.media $(, $field: $v)* }
    }};
}

pub struct ProstSocial {
    pub handlers: Arc<Handlers>,
    pub counters: Arc<Counters>,
}

#[tonic::async_trait]
impl Social for ProstSocial {
    async fn compose_post(&self, request: Request<req::ComposePostRequest>) -> Result<Response<rpc::ComposePostReply>, Status> {
        let r = request.get_ref();
        let out = self.handlers.compose_post(handlers::ComposePost {
            req_id: r.req_id,
            username: r.username.as_bytes(),
            user_id: r.user_id,
            text: r.text.as_bytes(),
            media_ids: r.media_ids.len(),
        });
        self.counters.served(Rpc::ComposePost);
        Ok(Response::new(post_reply!(ComposePostReply, out.post, author_known: out.author_known)))
    }

    async fn store_post(&self, request: Request<req::StorePostRequest>) -> Result<Response<rpc::StorePostReply>, Status> {
        let r = request.get_ref();
        let empty = req::Post::default();
        let p = r.post.as_ref().unwrap_or(&empty);
        let out = self.handlers.store_post(handlers::StorePost {
            req_id: r.req_id,
            post_id: p.post_id,
            text: p.text.as_bytes(),
            user_mentions: p.user_mentions.len(),
            urls: p.urls.len(),
            media: p.media.len(),
        });
        self.counters.served(Rpc::StorePost);
        Ok(Response::new(post_reply!(StorePostReply, out)))
    }

    async fn compose_media(&self, request: Request<req::ComposeMediaRequest>) -> Result<Response<rpc::ComposeMediaReply>, Status> {
        let r = request.get_ref();
        let out = self.handlers.compose_media(handlers::ComposeMedia {
            req_id: r.req_id,
            media_types: r.media_types.iter().map(|t| t.as_bytes()),
            media_types_len: r.media_types.len(),
            media_ids_len: r.media_ids.len(),
        });
        self.counters.served(Rpc::ComposeMedia);
        Ok(Response::new(rpc::ComposeMediaReply { req_id: out.req_id, media: out.media, types_hash: out.types_hash }))
    }

    async fn register_user(&self, request: Request<req::RegisterUserRequest>) -> Result<Response<rpc::RegisterUserReply>, Status> {
        let r = request.get_ref();
        let out = self
            .handlers
            .register_user(handlers::RegisterUser {
                req_id: r.req_id,
                username: r.username.as_bytes(),
                password: r.password.as_bytes(),
                user_id: r.user_id,
            })
            .map_err(|e| Status::resource_exhausted(e.to_string()))?;
        self.counters.served(Rpc::RegisterUser);
        Ok(Response::new(rpc::RegisterUserReply { req_id: out.req_id, user_id: out.user_id, created: out.created }))
    }

    async fn login(&self, request: Request<req::LoginRequest>) -> Result<Response<rpc::LoginReply>, Status> {
        let r = request.get_ref();
        let out = self.handlers.login(handlers::Login {
            req_id: r.req_id,
            username: r.username.as_bytes(),
            password: r.password.as_bytes(),
            carrier_entries: r.carrier.len(),
        });
        self.counters.served(Rpc::Login);
        Ok(Response::new(rpc::LoginReply { req_id: out.req_id, ok: out.ok, token: out.token, carrier_entries: out.carrier_entries }))
    }
}
