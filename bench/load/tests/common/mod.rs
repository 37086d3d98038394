//! A stand-in gRPC server for the load generator's tests: it answers any method of
//! `heapwire.social.v1.Social` with raw bytes, and the test decides per request whether
//! to reply, fail, hold or stall.
#![allow(dead_code)] // each test file uses part of it

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::Instant;

use bytes::Bytes;
use heapwire_load::RawCodec;
use tonic::body::Body;
use tonic::codegen::http;
use tonic::codegen::{BoxFuture, Service, StdError};
use tonic::server::{Grpc, NamedService, UnaryService};
use tonic::Status;

/// What the stub does with one request.
pub enum Action {
    /// Answer at once, echoing the request.
    Reply,
    /// Answer with this status.
    Fail(Status),
    /// Answer once this instant has passed.
    HoldUntil(Instant),
    /// Never answer.
    Stall,
}

pub type Behaviour = Arc<dyn Fn(&str, &Bytes) -> Action + Send + Sync>;

#[derive(Clone)]
struct Stub {
    behaviour: Behaviour,
    received: Arc<AtomicU64>,
}

impl NamedService for Stub {
    const NAME: &'static str = "heapwire.social.v1.Social";
}

struct Method {
    stub: Stub,
    path: String,
}

impl UnaryService<Bytes> for Method {
    type Response = Bytes;
    type Future = BoxFuture<tonic::Response<Bytes>, Status>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        self.stub.received.fetch_add(1, Ordering::SeqCst);
        let body = request.into_inner();
        let action = (self.stub.behaviour)(&self.path, &body);
        Box::pin(async move {
            match action {
                Action::Reply => Ok(tonic::Response::new(body)),
                Action::Fail(status) => Err(status),
                Action::HoldUntil(t) => {
                    tokio::time::sleep_until(t.into()).await;
                    Ok(tonic::Response::new(body))
                }
                Action::Stall => std::future::pending().await,
            }
        })
    }
}

impl<B> Service<http::Request<B>> for Stub
where
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let method = Method { stub: self.clone(), path: req.uri().path().to_string() };
        Box::pin(async move { Ok(Grpc::new(RawCodec).unary(method, req).await) })
    }
}

/// A running stub on a loopback port, on a runtime and thread of its own; dropping it
/// stops it.
pub struct StubServer {
    pub addr: SocketAddr,
    received: Arc<AtomicU64>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl StubServer {
    pub fn start(behaviour: impl Fn(&str, &Bytes) -> Action + Send + Sync + 'static) -> StubServer {
        let stub = Stub { behaviour: Arc::new(behaviour), received: Arc::new(AtomicU64::new(0)) };
        let received = Arc::clone(&stub.received);
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let thread = thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                tonic::transport::Server::builder()
                    .add_service(stub)
                    .serve_with_incoming_shutdown(
                        tokio_stream::wrappers::TcpListenerStream::new(listener),
                        async {
                            let _ = stop.await;
                        },
                    )
                    .await
                    .unwrap();
            });
            // Requests still held or stalled are dropped with the runtime.
            rt.shutdown_background();
        });
        let addr = addr_rx.recv().expect("the stub server started");
        StubServer { addr, received, shutdown: Some(shutdown), thread: Some(thread) }
    }

    pub fn received(&self) -> u64 {
        self.received.load(Ordering::SeqCst)
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
