// Baseline: upb (the C kernel under Python's protobuf, PHP, Ruby and the official
// Rust crate), from the amalgamation the `protobuf` crate 4.31.1 vendors.
//
//   upb_bench --descriptor-set FDS.pb --type pkg.Type [--reps K] [--clock cpu|wall]
//             [--memcpy] FILE
//
// The MiniTables are built at run time: the descriptor set goes into a upb def
// pool, which makes a MiniTable per message. FILE is a varint-length-delimited
// stream, read whole first; one untimed warm-up pass, then K timed passes. Each
// message is decoded into a fresh arena (initialised on one reused 1 MiB block,
// so the steady state does not call malloc) with default options: strings are
// copied into the arena (kUpb_DecodeOption_AliasString off) and proto3 strings
// are checked for UTF-8. Throughput counts message payload bytes (no length
// prefixes); MB = 10^6 bytes. --clock cpu (the default) times each pass with the
// calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID), so time the scheduler gives
// to other processes is not counted; --clock wall uses CLOCK_MONOTONIC. The last
// line is the median pass:
//
//   decode: <MB/s> MB/s, <msgs/s> msg/s
//
// Built with UPB_ENABLE_FASTTABLE (clang), the harness also gives every MiniTable
// the fasttable upb's code generator would emit for it: the def pool of this upb
// release builds MiniTables without fasttable entries (only generated code has
// them), so fasttable_attach() below applies the generator's rules (upb_generator
// minitable "FastDecodeTable") to the run-time tables. It prints, per message
// type, how many fields got a fast entry, and checks before timing that every
// message decodes to the same content through both sets of tables.
//
// --memcpy measures the distance to the limit instead: the same loop copying
// each message's bytes into a buffer.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "upb/upb.h"

#define PRIV(x) x##_dont_copy_me__upb_internal_use_only

typedef struct {
  const char* data;
  size_t size;
} Span;

static clockid_t bench_clock = CLOCK_THREAD_CPUTIME_ID;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(bench_clock, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int usage(const char* msg) {
  if (msg) fprintf(stderr, "upb_bench: %s\n", msg);
  fprintf(stderr,
          "usage: upb_bench --descriptor-set FDS.pb --type pkg.Type [--reps K] "
          "[--clock cpu|wall] [--memcpy] [--delimited] FILE\n");
  return 2;
}

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 20, n = 0;
  char* buf = malloc(cap);
  for (;;) {
    if (n == cap) buf = realloc(buf, cap *= 2);
    size_t got = fread(buf + n, 1, cap - n, f);
    if (got == 0) break;
    n += got;
  }
  fclose(f);
  *size = n;
  return buf;
}

// Splits a varint-length-delimited stream; returns the count, or -1 if malformed.
static long split_delimited(const char* buf, size_t size, Span** out) {
  size_t pos = 0, n = 0, cap = 1024;
  Span* spans = malloc(cap * sizeof(Span));
  while (pos < size) {
    uint64_t len = 0;
    int shift = 0;
    for (;;) {
      if (pos >= size || shift > 63) return -1;
      uint8_t b = (uint8_t)buf[pos++];
      len |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
      shift += 7;
    }
    if (len > size - pos) return -1;
    if (n == cap) spans = realloc(spans, (cap *= 2) * sizeof(Span));
    spans[n].data = buf + pos;
    spans[n].size = (size_t)len;
    n++;
    pos += len;
  }
  *out = spans;
  return (long)n;
}

#ifdef UPB_ENABLE_FASTTABLE

// The fasttable parser functions, looked up by the names upb's generator emits.
typedef struct {
  const char* name;
  _upb_FieldParser* fn;
} NamedParser;

#define NP(name) {#name, &name},
#define PRIM_ONE(card, tb) \
  NP(upb_p##card##b1_##tb##bt) NP(upb_p##card##v4_##tb##bt) NP(upb_p##card##v8_##tb##bt) \
  NP(upb_p##card##z4_##tb##bt) NP(upb_p##card##z8_##tb##bt) NP(upb_p##card##f4_##tb##bt) \
  NP(upb_p##card##f8_##tb##bt)
#define PRIM(card) PRIM_ONE(card, 1) PRIM_ONE(card, 2)
#define STR_ONE(card, tb) NP(upb_p##card##s_##tb##bt) NP(upb_p##card##b_##tb##bt)
#define STR(card) STR_ONE(card, 1) STR_ONE(card, 2)
#define MSG_ONE(card, tb)                                                            \
  NP(upb_p##card##m_##tb##bt_max64b) NP(upb_p##card##m_##tb##bt_max128b)             \
  NP(upb_p##card##m_##tb##bt_max192b) NP(upb_p##card##m_##tb##bt_max256b)            \
  NP(upb_p##card##m_##tb##bt_maxmaxb)
#define MSG(card) MSG_ONE(card, 1) MSG_ONE(card, 2)

static const NamedParser kParsers[] = {
    PRIM(s) PRIM(o) PRIM(r) PRIM(p) STR(s) STR(o) STR(r) MSG(s) MSG(o) MSG(r)};

static _upb_FieldParser* parser_named(const char* name) {
  for (size_t i = 0; i < sizeof(kParsers) / sizeof(kParsers[0]); i++) {
    if (strcmp(kParsers[i].name, name) == 0) return kParsers[i].fn;
  }
  fprintf(stderr, "upb_bench: no fasttable parser %s\n", name);
  exit(1);
}

static uint32_t wire_type_of(const upb_MiniTableField* f) {
  if (upb_MiniTableField_IsPacked(f)) return kUpb_WireType_Delimited;
  switch (upb_MiniTableField_Type(f)) {
    case kUpb_FieldType_Double:
    case kUpb_FieldType_Fixed64:
    case kUpb_FieldType_SFixed64:
      return kUpb_WireType_64Bit;
    case kUpb_FieldType_Float:
    case kUpb_FieldType_Fixed32:
    case kUpb_FieldType_SFixed32:
      return kUpb_WireType_32Bit;
    case kUpb_FieldType_Group:
      return kUpb_WireType_StartGroup;
    case kUpb_FieldType_Message:
    case kUpb_FieldType_String:
    case kUpb_FieldType_Bytes:
      return kUpb_WireType_Delimited;
    default:
      return kUpb_WireType_Varint;
  }
}

// The field's tag as the bytes on the wire, little-endian in a word.
static uint64_t encoded_tag(const upb_MiniTableField* f) {
  uint64_t tag = (uint64_t)upb_MiniTableField_Number(f) << 3 | wire_type_of(f);
  uint64_t out = 0;
  int i = 0;
  do {
    uint64_t byte = tag & 0x7f;
    tag >>= 7;
    if (tag) byte |= 0x80;
    out |= byte << (8 * i++);
  } while (tag && i < 8);
  return out;
}

// The generator's entry for one field, or 0 when it leaves the field to the
// generic parser (closed enums, maps, groups, a hasbit past 31, ...).
static int fast_entry(const upb_MiniTable* mt, const upb_MiniTableField* f,
                      _upb_FastTable_Entry* ent) {
  const char* type;
  switch (upb_MiniTableField_Type(f)) {
    case kUpb_FieldType_Bool: type = "b1"; break;
    case kUpb_FieldType_Enum:
      if (upb_MiniTableField_IsClosedEnum(f)) return 0;
      type = "v4";
      break;
    case kUpb_FieldType_Int32:
    case kUpb_FieldType_UInt32: type = "v4"; break;
    case kUpb_FieldType_Int64:
    case kUpb_FieldType_UInt64: type = "v8"; break;
    case kUpb_FieldType_Fixed32:
    case kUpb_FieldType_SFixed32:
    case kUpb_FieldType_Float: type = "f4"; break;
    case kUpb_FieldType_Fixed64:
    case kUpb_FieldType_SFixed64:
    case kUpb_FieldType_Double: type = "f8"; break;
    case kUpb_FieldType_SInt32: type = "z4"; break;
    case kUpb_FieldType_SInt64: type = "z8"; break;
    case kUpb_FieldType_String: type = "s"; break;
    case kUpb_FieldType_Bytes: type = "b"; break;
    case kUpb_FieldType_Message: type = "m"; break;
    default: return 0;
  }
  char card;
  if (upb_MiniTableField_IsArray(f)) {
    card = upb_MiniTableField_IsPacked(f) ? 'p' : 'r';
  } else if (upb_MiniTableField_IsScalar(f)) {
    card = upb_MiniTableField_IsInOneof(f) ? 'o' : 's';
  } else {
    return 0;  // maps
  }
  uint64_t tag = encoded_tag(f);
  // data: offset (16) | oneof case offset (16) | presence (8) | submsg (8) | tag (16)
  uint64_t data = (uint64_t)f->PRIV(offset) << 48 | tag;
  if (!upb_MiniTableField_IsScalar(f)) {
    // repeated: no presence
  } else if (upb_MiniTableField_IsInOneof(f)) {
    uint64_t case_offset = (uint16_t)~f->presence;
    if (upb_MiniTableField_Number(f) > 0xff) return 0;
    data |= (uint64_t)upb_MiniTableField_Number(f) << 24 | case_offset << 32;
  } else {
    uint64_t hasbit = 63;  // none: a high bit nobody reads
    if (f->presence) {
      hasbit = (uint64_t)f->presence;
      if (hasbit > 31) return 0;
    }
    data |= hasbit << 24;
  }
  char name[64];
  const char* tagbytes = tag > 0xff ? "2" : "1";
  if (upb_MiniTableField_Type(f) == kUpb_FieldType_Message) {
    uint64_t idx = f->PRIV(submsg_index);
    if (idx > 255) return 0;
    data |= idx << 16;
    const upb_MiniTable* sub = upb_MiniTable_SubMessage(mt, f);
    size_t size = sub->PRIV(size) + 8;
    const char* ceil = size <= 64 ? "64" : size <= 128 ? "128" : size <= 192 ? "192"
                     : size <= 256 ? "256" : "max";
    snprintf(name, sizeof name, "upb_p%c%s_%sbt_max%sb", card, type, tagbytes, ceil);
  } else {
    snprintf(name, sizeof name, "upb_p%c%s_%sbt", card, type, tagbytes);
  }
  ent->field_data = data;
  ent->field_parser = parser_named(name);
  return 1;
}

typedef struct {
  const upb_MiniTable* from;
  upb_MiniTable* to;
} TableCopy;

static TableCopy g_copies[4096];
static int g_ncopies;

// A copy of `mt` with the generator's fasttable appended, its sub-message links
// pointing at the copies of the sub-messages (made recursively, once each).
static const upb_MiniTable* fasttable_attach(const upb_MiniTable* mt, upb_Arena* arena) {
  for (int i = 0; i < g_ncopies; i++) {
    if (g_copies[i].from == mt) return g_copies[i].to;
  }
  if (g_ncopies == (int)(sizeof g_copies / sizeof g_copies[0])) {
    fprintf(stderr, "upb_bench: too many message types\n");
    exit(1);
  }
  _upb_FastTable_Entry table[32];
  int size = 0, filled = 0;
  int nfields = upb_MiniTable_FieldCount(mt);
  int map_entry = (mt->PRIV(ext) & kUpb_ExtMode_IsMapEntry) != 0;
  // Hotness order = field-number order; a slot taken by a lower number stays.
  for (int i = 0; i < nfields && !map_entry; i++) {
    const upb_MiniTableField* f = upb_MiniTable_GetFieldByIndex(mt, i);
    uint64_t tag = encoded_tag(f);
    if (tag > 0x7fff) continue;
    int slot = (int)((tag & 0xf8) >> 3);
    _upb_FastTable_Entry ent;
    if (!fast_entry(mt, f, &ent)) continue;
    while (slot >= size) {
      int grown = size ? size * 2 : 1;
      for (int k = size; k < grown; k++) {
        table[k].field_data = 0;
        table[k].field_parser = &_upb_FastDecoder_DecodeGeneric;
      }
      size = grown;
    }
    if (table[slot].field_parser != &_upb_FastDecoder_DecodeGeneric) continue;
    table[slot] = ent;
    filled++;
  }
  upb_MiniTable* copy =
      upb_Arena_Malloc(arena, sizeof(upb_MiniTable) + (size_t)size * sizeof(_upb_FastTable_Entry));
  memcpy(copy, mt, sizeof(upb_MiniTable));
  // The generator emits a table only when it has more than one slot.
  copy->PRIV(table_mask) = size > 1 ? (uint8_t)((size - 1) << 3) : (uint8_t)-1;
  for (int k = 0; k < size; k++) copy->PRIV(fasttable)[k] = table[k];
  g_copies[g_ncopies].from = mt;
  g_copies[g_ncopies].to = copy;
  g_ncopies++;

  int nsubs = 0;
  for (int i = 0; i < nfields; i++) {
    const upb_MiniTableField* f = upb_MiniTable_GetFieldByIndex(mt, i);
    uint16_t idx = f->PRIV(submsg_index);
    if (idx != kUpb_NoSub && idx + 1 > nsubs) nsubs = idx + 1;
  }
  if (nsubs) {
    upb_MiniTableSubInternal* subs = upb_Arena_Malloc(arena, nsubs * sizeof(*subs));
    const upb_MiniTable** slots = upb_Arena_Malloc(arena, nsubs * sizeof(*slots));
    memcpy(subs, mt->PRIV(subs), nsubs * sizeof(*subs));
    copy->PRIV(subs) = subs;
    for (int i = 0; i < nfields; i++) {
      const upb_MiniTableField* f = upb_MiniTable_GetFieldByIndex(mt, i);
      if (upb_MiniTableField_CType(f) != kUpb_CType_Message) continue;
      uint16_t idx = f->PRIV(submsg_index);
      slots[idx] = fasttable_attach(upb_MiniTable_SubMessage(mt, f), arena);
      subs[idx].PRIV(submsg) = &slots[idx];
    }
  }
  if (!map_entry) {
    fprintf(stderr, "upb_bench: fasttable: %d of %d fields fast, %d slots\n", filled, nfields,
            size > 1 ? size : 0);
  }
  return copy;
}

#endif  // UPB_ENABLE_FASTTABLE

static char g_block[1 << 20];

// One pass; seconds, or -1 if a message failed to decode.
static double pass_upb(const Span* msgs, long n, const upb_MiniTable* mt) {
  double t0 = now_s();
  for (long i = 0; i < n; i++) {
    upb_Arena* arena = upb_Arena_Init(g_block, sizeof g_block, &upb_alloc_global);
    upb_Message* msg = upb_Message_New(mt, arena);
    upb_DecodeStatus st = upb_Decode(msgs[i].data, msgs[i].size, msg, mt, NULL, 0, arena);
    upb_Arena_Free(arena);
    if (st != kUpb_DecodeStatus_Ok) {
      fprintf(stderr, "upb_bench: message %ld: %s\n", i, upb_DecodeStatus_String(st));
      return -1;
    }
  }
  return now_s() - t0;
}

static double pass_memcpy(const Span* msgs, long n) {
  double t0 = now_s();
  for (long i = 0; i < n; i++) {
    memcpy(g_block, msgs[i].data, msgs[i].size);
    // Keep the copy: the compiler must not drop it.
    __asm__ volatile("" : : "r"(g_block) : "memory");
  }
  return now_s() - t0;
}

#ifdef UPB_ENABLE_FASTTABLE
// The fasttable tables are the harness's own doing, so before timing, every
// message is decoded both through them and through the def pool's plain tables
// and the two results, serialized deterministically, must be the same bytes.
static int check_fasttable(const Span* msgs, long n, const upb_MiniTable* plain,
                           const upb_MiniTable* fast) {
  for (long i = 0; i < n; i++) {
    upb_Arena* arena = upb_Arena_New();
    const upb_MiniTable* mts[2] = {plain, fast};
    char* out[2];
    size_t len[2];
    for (int k = 0; k < 2; k++) {
      upb_Message* msg = upb_Message_New(mts[k], arena);
      if (upb_Decode(msgs[i].data, msgs[i].size, msg, mts[k], NULL, 0, arena) !=
              kUpb_DecodeStatus_Ok ||
          upb_Encode(msg, mts[k], kUpb_EncodeOption_Deterministic, arena, &out[k], &len[k]) !=
              kUpb_EncodeStatus_Ok) {
        fprintf(stderr, "upb_bench: message %ld: %s tables fail\n", i, k ? "fast" : "plain");
        return 0;
      }
    }
    int same = len[0] == len[1] && memcmp(out[0], out[1], len[0]) == 0;
    upb_Arena_Free(arena);
    if (!same) {
      fprintf(stderr, "upb_bench: message %ld: the fasttable decode differs\n", i);
      return 0;
    }
  }
  return 1;
}
#endif

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  const char *fds_path = NULL, *type = NULL, *file = NULL;
  int reps = 9, copy_only = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--descriptor-set") && i + 1 < argc) {
      fds_path = argv[++i];
    } else if (!strcmp(a, "--type") && i + 1 < argc) {
      type = argv[++i];
    } else if (!strcmp(a, "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(a, "--clock") && i + 1 < argc) {
      const char* c = argv[++i];
      if (!strcmp(c, "cpu")) {
        bench_clock = CLOCK_THREAD_CPUTIME_ID;
      } else if (!strcmp(c, "wall")) {
        bench_clock = CLOCK_MONOTONIC;
      } else {
        fprintf(stderr, "upb_bench: --clock: '%s' is neither cpu nor wall\n", c);
        return usage(NULL);
      }
    } else if (!strcmp(a, "--memcpy")) {
      copy_only = 1;
    } else if (!strcmp(a, "--delimited")) {
      // input is always delimited; accepted for symmetry with `heapwire bench`
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      return usage(NULL);
    } else if (a[0] == '-') {
      fprintf(stderr, "upb_bench: unknown flag %s\n", a);
      return usage(NULL);
    } else {
      file = a;
    }
  }
  if (!fds_path || !type || !file || reps < 1)
    return usage("need --descriptor-set, --type and FILE (and --reps >= 1)");

  size_t fds_size, in_size;
  char* fds_buf = read_file(fds_path, &fds_size);
  if (!fds_buf) return usage("cannot read the descriptor set");
  char* in = read_file(file, &in_size);
  if (!in) return usage("cannot read FILE");
  Span* msgs;
  long n = split_delimited(in, in_size, &msgs);
  if (n < 0) {
    fprintf(stderr, "upb_bench: malformed length-delimited stream\n");
    return 1;
  }
  size_t payload = 0;
  for (long i = 0; i < n; i++) payload += msgs[i].size;

  upb_Arena* defs_arena = upb_Arena_New();
  upb_DefPool* pool = upb_DefPool_New();
  const google_protobuf_FileDescriptorSet* fds =
      google_protobuf_FileDescriptorSet_parse(fds_buf, fds_size, defs_arena);
  if (!fds) {
    fprintf(stderr, "upb_bench: %s is not a FileDescriptorSet\n", fds_path);
    return 2;
  }
  size_t nfiles;
  const google_protobuf_FileDescriptorProto* const* files =
      google_protobuf_FileDescriptorSet_file(fds, &nfiles);
  for (size_t i = 0; i < nfiles; i++) {
    upb_Status status;
    upb_Status_Clear(&status);
    if (!upb_DefPool_AddFile(pool, files[i], &status)) {
      fprintf(stderr, "upb_bench: descriptor set: %s\n", upb_Status_ErrorMessage(&status));
      return 2;
    }
  }
  const upb_MessageDef* md = upb_DefPool_FindMessageByName(pool, type);
  if (!md) {
    fprintf(stderr, "upb_bench: no message type %s in %s\n", type, fds_path);
    return 2;
  }
  const upb_MiniTable* mt = upb_MessageDef_MiniTable(md);
#ifdef UPB_ENABLE_FASTTABLE
  const upb_MiniTable* plain = mt;
  mt = fasttable_attach(mt, defs_arena);
  if (!copy_only && !check_fasttable(msgs, n, plain, mt)) return 1;
  const char* build = "fasttable";
#else
  const char* build = "default";
#endif
  if (copy_only) build = "memcpy";

  double (*run)(const Span*, long, const upb_MiniTable*) = pass_upb;
  double warm = copy_only ? pass_memcpy(msgs, n) : run(msgs, n, mt);
  if (warm < 0) {
    fprintf(stderr, "upb_bench: a message failed to decode as %s\n", type);
    return 1;
  }
  double* secs = malloc(reps * sizeof(double));
  for (int r = 0; r < reps; r++) {
    secs[r] = copy_only ? pass_memcpy(msgs, n) : run(msgs, n, mt);
    if (secs[r] < 0) return 1;
    fprintf(stderr, "upb_bench: rep %d: %.1f MB/s\n", r + 1, payload / secs[r] / 1e6);
  }
  qsort(secs, reps, sizeof(double), cmp_double);
  double med = reps % 2 ? secs[reps / 2] : (secs[reps / 2 - 1] + secs[reps / 2]) / 2;
  fprintf(stderr, "upb_bench (%s): %s: %ld messages, %zu payload bytes, %d reps, %s clock\n",
          build, type, n, payload, reps, bench_clock == CLOCK_MONOTONIC ? "wall" : "cpu");
  printf("decode: %.1f MB/s, %.0f msg/s\n", payload / med / 1e6, n / med);
  return 0;
}
