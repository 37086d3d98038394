//! `social_load`: open-loop gRPC load against heapwire's social service.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use heapwire_load::{parse_duration, run, Corpus, LoadConfig, Mix};

/// Offers requests to heapwire.social.v1.Social at a fixed rate (open loop) and reports
/// throughput and latency, measured from each request's scheduled send time.
#[derive(Parser)]
#[command(name = "social_load", version)]
struct Args {
    /// The server: HOST:PORT or http://HOST:PORT (plaintext HTTP/2)
    #[arg(long)]
    target: String,
    /// Requests per second offered
    #[arg(long)]
    rate: f64,
    /// How long to offer them (500ms, 10s, 2m, or seconds)
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    duration: Duration,
    /// A request without an answer by its scheduled send time plus this is a timeout
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    timeout: Duration,
    /// HTTP/2 connections; requests go round-robin over them
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Threads that carry the requests (the schedule runs on a thread of its own)
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Hold back due requests while this many are in flight (the wait counts in their latency)
    #[arg(long, default_value_t = 20_000)]
    max_in_flight: u64,
    /// Directory of request streams social_<rpc>.bin as bench/gen_workloads.py writes them
    #[arg(long, default_value = "bench/out/quick")]
    corpus: PathBuf,
    /// Relative weights of the rpcs, NAME=WEIGHT,...
    #[arg(long, default_value = Mix::DEFAULT)]
    mix: String,
    /// Use only the first N requests of each rpc's stream
    #[arg(long)]
    max_per_rpc: Option<usize>,
    /// Seed of the rpc sequence (the same seed offers the same sequence)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the report, with the latency CDF and a per-second timeline, as JSON
    #[arg(long)]
    json: Option<PathBuf>,
    /// No progress line on stderr
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mix = match Mix::parse(&args.mix) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("social_load: --mix {e}");
            return ExitCode::from(2);
        }
    };
    let corpus = match Corpus::load(&args.corpus, &mix, args.max_per_rpc) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("social_load: corpus: {e}");
            return ExitCode::from(2);
        }
    };
    let cfg = LoadConfig {
        target: args.target,
        rate: args.rate,
        duration: args.duration,
        timeout: args.timeout,
        connections: args.connections,
        threads: args.threads,
        max_in_flight: args.max_in_flight,
        mix,
        seed: args.seed,
        progress: !args.quiet,
    };
    let report = match run(&cfg, &corpus) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("social_load: {e}");
            return ExitCode::from(1);
        }
    };
    print!("{}", report.summary());
    if let Some(path) = args.json {
        let text = serde_json::to_string_pretty(&report.json()).expect("the report serializes");
        if let Err(e) = std::fs::write(&path, text + "\n") {
            eprintln!("social_load: --json {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
