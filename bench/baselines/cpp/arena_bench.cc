// Baseline: protobuf C++ (Debian's libprotobuf 3.21) parsing with an Arena.
//
//   arena_bench --type pkg.Type [--reps K] [--clock cpu|wall] FILE
//
// FILE is a varint-length-delimited stream. The whole file is read into memory
// first; one untimed warm-up pass follows, then K timed passes. Each message is
// parsed with the protoc-generated class for --type into a message created on
// one arena that owns a 1 MiB initial block and is Reset() before every
// message, so the steady state does no heap allocation at all: the fastest
// realistic way to use the C++ library. Throughput counts message payload
// bytes only (not the length prefixes); MB = 10^6 bytes. --clock cpu (the
// default) times each pass with the calling thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID), so time the scheduler gives to other processes is
// not counted; --clock wall uses CLOCK_MONOTONIC. The last line printed is the
// median pass:
//
//   decode: <MB/s> MB/s, <msgs/s> msg/s
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <time.h>

#include <google/protobuf/arena.h>

#include "google_message1.pb.h"
#include "every_kind.pb.h"
#include "google_message2.pb.h"
#include "social.pb.h"

namespace {

struct Span {
  const uint8_t* data;
  size_t size;
};

bool SplitDelimited(const std::vector<uint8_t>& buf, std::vector<Span>* out) {
  size_t pos = 0;
  while (pos < buf.size()) {
    uint64_t len = 0;
    int shift = 0;
    for (;;) {
      if (pos >= buf.size() || shift > 63) return false;
      uint8_t b = buf[pos++];
      len |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
      shift += 7;
    }
    if (len > buf.size() - pos) return false;
    out->push_back(Span{buf.data() + pos, size_t(len)});
    pos += len;
  }
  return true;
}

clockid_t bench_clock = CLOCK_THREAD_CPUTIME_ID;

double NowS() {
  timespec ts;
  clock_gettime(bench_clock, &ts);
  return double(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// One pass over all messages; returns seconds, or -1 if a message failed to parse.
template <typename T>
double Pass(const std::vector<Span>& msgs, google::protobuf::Arena* arena) {
  double t0 = NowS();
  for (const Span& s : msgs) {
    arena->Reset();
    T* m = google::protobuf::Arena::CreateMessage<T>(arena);
    if (!m->ParseFromArray(s.data, int(s.size))) return -1;
  }
  return NowS() - t0;
}

using PassFn = double (*)(const std::vector<Span>&, google::protobuf::Arena*);

const std::map<std::string, PassFn>& Registry() {
  namespace s = heapwire::bench::social;
  static const std::map<std::string, PassFn> r = {
      {"heapwire.bench.social.ComposePostRequest", &Pass<s::ComposePostRequest>},
      {"heapwire.bench.social.StorePostRequest", &Pass<s::StorePostRequest>},
      {"heapwire.bench.social.ComposeMediaRequest", &Pass<s::ComposeMediaRequest>},
      {"heapwire.bench.social.RegisterUserRequest", &Pass<s::RegisterUserRequest>},
      {"heapwire.bench.social.LoginRequest", &Pass<s::LoginRequest>},
      {"heapwire.bench.social.Post", &Pass<s::Post>},
      {"heapwire.bench.gm1.Record", &Pass<heapwire::bench::gm1::Record>},
      {"heapwire.bench.gm2.Document", &Pass<heapwire::bench::gm2::Document>},
      {"heapwire.bench.kinds.EveryKind", &Pass<heapwire::bench::kinds::EveryKind>},
  };
  return r;
}

int Usage(const char* msg) {
  if (msg) std::fprintf(stderr, "arena_bench: %s\n", msg);
  std::fprintf(stderr, "usage: arena_bench --type pkg.Type [--reps K] [--clock cpu|wall] [--delimited] FILE\ntypes:\n");
  for (const auto& kv : Registry()) std::fprintf(stderr, "  %s\n", kv.first.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string type, file;
  int reps = 9;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--type" && i + 1 < argc) {
      type = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--clock" && i + 1 < argc) {
      std::string c = argv[++i];
      if (c == "cpu") {
        bench_clock = CLOCK_THREAD_CPUTIME_ID;
      } else if (c == "wall") {
        bench_clock = CLOCK_MONOTONIC;
      } else {
        return Usage(("--clock: '" + c + "' is neither cpu nor wall").c_str());
      }
    } else if (a == "--delimited") {
      // accepted for symmetry with `heapwire bench`; input is always delimited
    } else if (a == "-h" || a == "--help") {
      return Usage(nullptr);
    } else if (!a.empty() && a[0] == '-') {
      return Usage(("unknown flag " + a).c_str());
    } else {
      file = a;
    }
  }
  if (type.empty() || file.empty() || reps < 1) return Usage("need --type and FILE (and --reps >= 1)");
  auto it = Registry().find(type);
  if (it == Registry().end()) return Usage(("unknown type " + type).c_str());

  std::ifstream in(file, std::ios::binary);
  if (!in) return Usage(("cannot read " + file).c_str());
  std::vector<uint8_t> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<Span> msgs;
  if (!SplitDelimited(buf, &msgs)) {
    std::fprintf(stderr, "arena_bench: malformed length-delimited stream\n");
    return 1;
  }
  size_t payload = 0;
  for (const Span& s : msgs) payload += s.size;

  static char initial_block[1 << 20];
  google::protobuf::ArenaOptions opts;
  opts.initial_block = initial_block;
  opts.initial_block_size = sizeof(initial_block);
  google::protobuf::Arena arena(opts);

  if (it->second(msgs, &arena) < 0) {  // warm-up
    std::fprintf(stderr, "arena_bench: a message failed to parse as %s\n", type.c_str());
    return 1;
  }
  std::vector<double> secs;
  for (int r = 0; r < reps; r++) {
    double t = it->second(msgs, &arena);
    if (t < 0) return 1;
    secs.push_back(t);
    std::fprintf(stderr, "arena_bench: rep %d: %.1f MB/s\n", r + 1, payload / t / 1e6);
  }
  std::sort(secs.begin(), secs.end());
  double med = secs.size() % 2 ? secs[secs.size() / 2]
                               : (secs[secs.size() / 2 - 1] + secs[secs.size() / 2]) / 2;
  std::fprintf(stderr, "arena_bench: %s: %zu messages, %zu payload bytes, %d reps, %s clock\n",
               type.c_str(), msgs.size(), payload, reps,
               bench_clock == CLOCK_MONOTONIC ? "wall" : "cpu");
  std::printf("decode: %.1f MB/s, %.0f msg/s\n", payload / med / 1e6, msgs.size() / med);
  return 0;
}
