//! What the service's tests share: a deterministic corpus of the five requests, and
//! servers started in this process on 127.0.0.1.
#![allow(dead_code)]

use std::collections::HashMap;
use std::time::Duration;

use heapwire_social_service::client::RawClient;
use heapwire_social_service::pb::req;
use heapwire_social_service::schema::{Rpc, SCHEMA};
use heapwire_social_service::server::{self, Config, Server};
use heapwire_testkit::Rng;
use prost::Message;

/// One request: which rpc, and its protobuf bytes.
#[derive(Clone, Debug)]
pub struct Case {
    pub rpc: Rpc,
    pub bytes: Vec<u8>,
    pub what: &'static str,
}

fn word(r: &mut Rng, n: usize) -> String {
    (0..n).map(|_| (b'a' + r.below(26) as u8) as char).collect()
}

fn carrier(r: &mut Rng) -> HashMap<String, String> {
    let mut m = HashMap::new();
    m.insert("uber-trace-id".into(), format!("{:x}:{:x}:0:1", r.next() as u32, r.next() as u32));
    if r.chance(30) {
        m.insert("baggage".into(), word(r, 8));
    }
    m
}

fn text(r: &mut Rng) -> String {
    let mut words = Vec::new();
    for _ in 0..r.below(40) {
        words.push(match r.below(12) {
            0 => format!("@username_{}", r.below(50)),
            1 => format!("http://short-url/{}", word(r, 10)),
            2 => format!("https://example.com/{}", word(r, 6)),
            3 => "@".into(),
            4 => "caf\u{e9}\u{1f600}".into(),
            _ => {
                let n = 1 + r.below(9) as usize;
                word(r, n)
            }
        });
    }
    words.join(if r.chance(20) { "\n" } else { " " })
}

/// Valid requests shaped like the bench generator's (`bench/gen_workloads.py`): users
/// registered (some twice), logins right and wrong, posts by known and unknown authors
/// with mentions and urls, media with mismatched counts, and a Login whose carrier map
/// repeats a key (two encoded messages concatenated: protobuf merges them).
pub fn valid_corpus(seed: u64, n: usize) -> Vec<Case> {
    let mut r = Rng::new(seed);
    let mut out = Vec::new();
    let pw = |u: u64| format!("pw{}", u * 7919 % 1000);
    for u in 0..20u64 {
        let m = req::RegisterUserRequest {
            req_id: r.next() as i64,
            first_name: word(&mut r, 5),
            last_name: word(&mut r, 7),
            username: format!("username_{u}"),
            password: pw(u),
            user_id: u as i64 + 1000,
            carrier: carrier(&mut r),
        };
        out.push(Case { rpc: Rpc::RegisterUser, bytes: m.encode_to_vec(), what: "register" });
    }
    for i in 0..n {
        let u = r.below(30);
        let (rpc, bytes, what) = match i % 6 {
            0 => {
                let m = req::RegisterUserRequest {
                    req_id: r.next() as i64,
                    username: format!("username_{u}"),
                    password: pw(u),
                    user_id: r.below(5000) as i64,
                    carrier: carrier(&mut r),
                    ..Default::default()
                };
                (Rpc::RegisterUser, m.encode_to_vec(), "register")
            }
            1 => {
                let password = if r.chance(70) { pw(u) } else { word(&mut r, 4) };
                let m = req::LoginRequest { req_id: r.next() as i64, username: format!("username_{u}"), password, carrier: carrier(&mut r) };
                let mut b = m.encode_to_vec();
                if r.chance(20) {
                    // the same keys again: a map keeps one entry per key
                    b.extend(req::LoginRequest { carrier: carrier(&mut r), ..Default::default() }.encode_to_vec());
                }
                (Rpc::Login, b, "login")
            }
            2 => {
                let k = r.below(4) as usize;
                let m = req::ComposePostRequest {
                    req_id: r.next() as i64,
                    username: format!("username_{u}"),
                    user_id: if r.chance(70) { u as i64 + 1000 } else { r.below(5000) as i64 },
                    text: text(&mut r),
                    media_ids: (0..k).map(|_| r.next() as i64).collect(),
                    media_types: (0..k).map(|_| "png".to_string()).collect(),
                    post_type: r.below(4) as i32,
                    carrier: carrier(&mut r),
                };
                (Rpc::ComposePost, m.encode_to_vec(), "compose_post")
            }
            3 => {
                let post = r.chance(90).then(|| req::Post {
                    post_id: r.next() as i64,
                    creator: Some(req::Creator { user_id: u as i64, username: format!("username_{u}") }),
                    req_id: r.next() as i64,
                    text: text(&mut r),
                    user_mentions: (0..r.below(3)).map(|i| req::UserMention { user_id: i as i64, username: word(&mut r, 6) }).collect(),
                    media: (0..r.below(3)).map(|i| req::Media { media_id: i as i64, media_type: "jpg".into() }).collect(),
                    urls: (0..r.below(3)).map(|_| req::Url { shortened_url: word(&mut r, 5), expanded_url: word(&mut r, 20) }).collect(),
                    timestamp: r.next() as i64 >> 20,
                    post_type: r.below(4) as i32,
                });
                let m = req::StorePostRequest { req_id: r.next() as i64, post, carrier: carrier(&mut r) };
                (Rpc::StorePost, m.encode_to_vec(), "store_post")
            }
            4 => {
                let types = ["png", "jpg", "gif", "mp4"];
                let m = req::ComposeMediaRequest {
                    req_id: r.next() as i64,
                    media_types: (0..r.below(5)).map(|_| types[r.below(4) as usize].to_string()).collect(),
                    media_ids: (0..r.below(5)).map(|_| r.next() as i64).collect(),
                    carrier: carrier(&mut r),
                };
                (Rpc::ComposeMedia, m.encode_to_vec(), "compose_media")
            }
            _ => {
                // an empty request of a random rpc: every field default
                (Rpc::ALL[r.below(5) as usize], Vec::new(), "empty")
            }
        };
        out.push(Case { rpc, bytes, what });
    }
    out
}

/// Schema-driven random requests (`heapwire_testkit::protobuf_gen`: repeats, merges,
/// unknown fields, wrong wire types, bad UTF-8 now and then), then mutations and
/// truncations of valid requests (`protobuf_gen::mutate`).
pub fn hostile_corpus(seed: u64, valid: &[Case], n: usize) -> Vec<Case> {
    let mut r = Rng::new(seed);
    let s = &SCHEMA.compiled;
    let mut out = Vec::new();
    for i in 0..n {
        let rpc = Rpc::ALL[r.below(5) as usize];
        if i % 2 == 0 {
            let mut bytes = Vec::new();
            let mut budget = 40i64;
            heapwire_testkit::protobuf_gen::message(&mut r, s, SCHEMA.request_msg[rpc as usize], 0, &mut budget, &mut bytes);
            out.push(Case { rpc, bytes, what: "random" });
        } else {
            let base = &valid[r.below(valid.len() as u64) as usize];
            let bytes = if base.bytes.is_empty() || r.chance(70) {
                heapwire_testkit::protobuf_gen::mutate(&mut r, &base.bytes)
            } else {
                base.bytes[..r.below(base.bytes.len() as u64) as usize].to_vec()
            };
            out.push(Case { rpc: base.rpc, bytes, what: "mutated" });
        }
    }
    out
}

/// A service in this process on a free port of 127.0.0.1, and a client runtime.
pub struct Running {
    pub server: Option<Server>,
    pub client: RawClient,
    pub rt: tokio::runtime::Runtime,
}

pub fn start(config: Config) -> Running {
    let server = server::start(Config { listen: "127.0.0.1:0".into(), ..config }).expect("the service starts");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let url = format!("http://{}", server.addr);
    let channel = rt.block_on(async { tonic::transport::Endpoint::from_shared(url).unwrap().connect().await }).expect("connects");
    Running { server: Some(server), client: RawClient::new(channel), rt }
}

impl Running {
    pub fn call(&mut self, rpc: Rpc, bytes: Vec<u8>) -> Result<Vec<u8>, tonic::Status> {
        let c = &mut self.client;
        self.rt.block_on(async { tokio::time::timeout(Duration::from_secs(20), c.call(rpc, bytes)).await }).expect("answered within 20 s").map(|r| r.to_vec())
    }

    pub fn server(&self) -> &Server {
        self.server.as_ref().unwrap()
    }

    /// Stops the service; its statistics JSON.
    pub fn stop(mut self) -> String {
        let server = self.server.take().unwrap();
        // the client's runtime runs only inside `call`: drop it (and its connection) first,
        // or the server's graceful shutdown waits for a connection nobody closes
        drop(self);
        server.stop(Duration::from_secs(5))
    }
}
