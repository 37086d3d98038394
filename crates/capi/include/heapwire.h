/* heapwire C API: protobuf and object-graph wire bytes <-> heap images (docs/c-api.md).
 *
 * Link with libheapwire.a (cargo build --release -p heapwire-capi; add -lpthread -ldl -lm)
 * or libheapwire.so. Wire, JSON and image inputs are untrusted: any bytes give a result
 * code, never a crash. Pointer arguments must be valid for the lengths given (NULL is
 * accepted with length 0, and for the optional out-parameters `written` and `err`).
 *
 * A handle (hw_schema) is not thread-safe: use one per thread (hw_clone shares the
 * compiled schema). Checked against crates/capi/src/lib.rs and src/device.rs by
 * crates/capi/tests/header.rs.
 */
#ifndef HEAPWIRE_H
#define HEAPWIRE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled schema with its engine, per-type registers and limits. */
typedef struct hw_schema hw_schema;

/* Result codes. 0 is success; 1-99 are the engine's reject kinds (the same numbers as
 * `heapwire decode`'s kinds and the hardware cores' error register); 100 and above are
 * this API's own. hw_code_name gives the name. */
/* BEGIN CODES: generated from RejectKind::ALL; refresh with
 * `cargo run -p heapwire-capi --example update_header` */
enum hw_code {
  HW_OK = 0,
  HW_TRUNCATED = 1,
  HW_VARINT_TOO_LONG = 2,
  HW_FIELD_NUMBER_ZERO = 3,
  HW_INVALID_WIRE_TYPE = 4,
  HW_LENGTH_PAST_END = 5,
  HW_DEPTH_EXCEEDED = 6,
  HW_INVALID_UTF8 = 7,
  HW_GROUP_MISMATCH = 8,
  HW_PACKED_LENGTH = 9,
  HW_MISSING_REQUIRED = 10,
  HW_IMAGE_TOO_LARGE = 11,
  HW_BAD_BASE = 12,
  HW_CAPACITY = 13,
  HW_UNSUPPORTED = 14,
  HW_BUFFER_TOO_SMALL = 15,
  HW_COUNT_TOO_LARGE = 32,
  HW_UNKNOWN_TYPE = 33,
  HW_BAD_REFERENCE = 34,
  HW_REFERENCE_TYPE = 35,
  HW_ROOT_TYPE = 36,
  HW_TRAILING_BYTES = 37,
  HW_NOT_A_CLASS = 38,
  HW_UNKNOWN_HEADER = 39,
  HW_BAD_POINTER = 40,
  HW_VALUE_OUT_OF_RANGE = 41,
  HW_TOO_MANY_OBJECTS = 42,
  HW_BAD_ARGUMENT = 100,
  HW_BAD_TYPE = 101,
  HW_BAD_IMAGE = 102,
  HW_JSON = 103,
  HW_INTERNAL = 104,
  HW_DEVICE = 105,
  HW_LINK = 106
};
/* END CODES */
/* HW_BAD_ARGUMENT: a NULL handle or string, NULL with a non-zero length, a misaligned
 *   out-parameter, output overlapping an input, an unknown wire, a bad option value.
 * HW_BAD_TYPE: a type index the schema does not have (hw_type gives -1 for unknown names).
 * HW_BAD_IMAGE: encoding from a protobuf image that points outside itself.
 * HW_JSON: JSON text that does not parse or fit the schema.
 * HW_INTERNAL: a bug in heapwire, caught; the handle refuses every later call.
 * HW_DEVICE: a device refused a request or operation; err->offset is its code (64-99).
 * HW_LINK: the link to a device failed; the device handle refuses every later call. */

/* The `wire` argument. */
enum hw_wire { HW_WIRE_PROTOBUF = 0, HW_WIRE_OBJGRAPH = 1 };

/* Filled by every call that takes one (also on success: code 0). */
typedef struct hw_error {
  int32_t code;    /* the call's return value */
  uint64_t offset; /* decode: byte in the input; object-graph encode: address; protobuf
                      encode: image offset; JSON: byte in the text */
  uint64_t needed; /* HW_BUFFER_TOO_SMALL: the bytes the output needs */
} hw_error;

/* --- Handles --------------------------------------------------------------------- */

/* Compiles a .proto file (imports resolved in include_dirs, then beside it;
 * heapwire/options.proto is built in) for pointer width 32 or 64, with header words
 * (0 or 1) at the start of every struct. A table file given by path is loaded instead
 * (its layout is its own). On failure returns NULL and writes the schema error,
 * NUL-terminated, into errbuf (if errbuf_cap > 0). */
hw_schema *hw_open(const char *path, const char *const *include_dirs, size_t include_count, uint32_t pointer_width,
                   int32_t header_words, char *errbuf, size_t errbuf_cap);
/* Loads a table file (`heapwire compile`'s SCHEMA.hwsc) from memory. */
hw_schema *hw_open_table(const uint8_t *bytes, size_t len, char *errbuf, size_t errbuf_cap);
/* A new handle sharing h's compiled schema, with h's registers and limits: one per
 * thread. NULL if h is NULL. */
hw_schema *hw_clone(const hw_schema *h);
/* Frees a handle (NULL is ignored). Images and wire bytes already written stay valid. */
void hw_close(hw_schema *h);
/* The text of the last failed call on h ("truncated at byte 8", a JSON error, what
 * argument was bad), "" after a success; valid until the next call on h. */
const char *hw_last_error(const hw_schema *h);
/* "ok", "truncated", "bad_argument", ... (static); "unknown" for other values. */
const char *hw_code_name(int32_t code);

/* --- Types and layout ------------------------------------------------------------ */

/* Message types are numbered 0 .. hw_type_count(h) - 1. */
int32_t hw_type_count(const hw_schema *h);
/* The type index of a message by full name ("pkg.Msg", "pkg.Outer.Inner"), or -1. */
int32_t hw_type(const hw_schema *h, const char *full_name);
/* Size and alignment of a type's struct in a protobuf image (0 for a bad type). */
uint32_t hw_type_size(const hw_schema *h, int32_t msg_type);
uint32_t hw_type_align(const hw_schema *h, int32_t msg_type);
/* Object size of a class in an object-graph image (0: not a class). */
uint32_t hw_class_size(const hw_schema *h, int32_t msg_type);
/* Object-graph wire type id of a class, or -1 (abstract, or not a class). */
int64_t hw_class_type_id(const hw_schema *h, int32_t msg_type);
/* The layout: pointer width in bits (32 or 64), header words (1) or not (0). */
uint32_t hw_pointer_width(const hw_schema *h);
int32_t hw_header_words(const hw_schema *h);

/* --- Registers and limits (per handle) --------------------------------------------- */

/* Sets the per-type register of `msg_type`: the header word its structs (with header words)
 * or objects (classes: the vtable pointer) get, and by which object-graph encoding
 * recognizes an object's class. Unset registers hold the type index. */
int32_t hw_set_register(hw_schema *h, int32_t msg_type, uint64_t word);
/* Deepest nesting below the root that decoding accepts (default 100); also the limit
 * for protobuf encoding from an image. */
int32_t hw_set_max_depth(hw_schema *h, uint32_t max_depth);
/* Largest image decoding produces (default 1 GiB): HW_IMAGE_TOO_LARGE beyond. */
int32_t hw_set_max_image_bytes(hw_schema *h, uint64_t max_image_bytes);

/* --- Decode ------------------------------------------------------------------------ */

/* Decodes `input` (protobuf or object graph) as message type `msg_type` into `out`
 * (capacity `cap`), laid out for address `base` (a multiple of 8; normally
 * (uint64_t)(uintptr_t)out, or where the image will be copied or mapped). *written is
 * the image size. If the image does not fit: HW_BUFFER_TOO_SMALL with err->needed
 * (cap 0 with out NULL asks for the size). Object graphs: object 0 must be of class
 * `msg_type` or a subclass. Rejections give the kind and err->offset, the input byte.
 * After a failure the bytes of `out` are unspecified (part of an image may be there). */
int32_t hw_decode(hw_schema *h, uint32_t wire, int32_t msg_type, const uint8_t *input, size_t len, uint64_t base,
                  void *out, size_t cap, size_t *written, hw_error *err);

/* --- Encode ------------------------------------------------------------------------ */

/* Encodes from a heap image (`len` bytes at `image`, laid out for address `base`) the
 * message at address `root` (protobuf: normally `base`; object graph: the root object,
 * 0 for an empty graph) into wire bytes in `out`. HW_BUFFER_TOO_SMALL: err->needed. */
int32_t hw_encode_image(hw_schema *h, uint32_t wire, int32_t msg_type, const void *image, size_t len, uint64_t base,
                        uint64_t root, uint8_t *out, size_t cap, size_t *written, hw_error *err);
/* Serializes the live objects of this process reachable from `root` (an object of class
 * `msg_type` or a subclass; NULL gives an empty graph) as an object graph. Every reachable
 * object must have a registered header word and heapwire's layout (check with the
 * generated header's static_asserts); the schema's pointer width must be the
 * process's. */
int32_t hw_encode_objects(hw_schema *h, int32_t msg_type, const void *root, uint8_t *out, size_t cap, size_t *written,
                          hw_error *err);

/* --- JSON -------------------------------------------------------------------------- */

/* Decodes `input` and prints it as JSON (protobuf: the proto3 JSON mapping as the
 * official library prints it; object graphs: heapwire's object list) into `out`: one
 * line, no newline, no NUL; *written is its length. */
int32_t hw_to_json(hw_schema *h, uint32_t wire, int32_t msg_type, const uint8_t *input, size_t len, char *out,
                   size_t cap, size_t *written, hw_error *err);
/* Parses one JSON document (`len` bytes of UTF-8) as message type `msg_type` into wire
 * bytes. Errors: HW_JSON with err->offset and the text in hw_last_error. */
int32_t hw_from_json(hw_schema *h, uint32_t wire, int32_t msg_type, const char *json, size_t len, uint8_t *out,
                     size_t cap, size_t *written, hw_error *err);

/* --- Devices (the PCIe paper's API; docs/c-api.md "Devices") ------------------------ */

/* An open device: a heapwire-device in this process ("inproc:cpu" or "inproc:sim", with
 * "?slots=N&in=BYTES&out=BYTES") or across a link ("udp://HOST:PORT", "tcp://HOST:PORT").
 * Not thread-safe: one thread at a time per handle. */
typedef struct hw_device hw_device;

/* hw_device_open's options (NULL, or a zero field, takes the default). */
typedef struct hw_device_options {
  uint32_t inflight;    /* requests in flight at most (default 16) */
  uint32_t timeout_ms;  /* time a request or operation may take on the link (default 30000) */
  const char *key_file; /* shared-key file, as `heapwire device serve --key-file`; NULL: none */
} hw_device_options;

/* The device's header block (docs of crates/device/src/regs.rs). */
typedef struct hw_device_info {
  uint32_t version, caps, slots, in_bytes, out_bytes, ptr_widths, engine, type_regs, table_bytes, time_unit;
} hw_device_info;

/* The device's counters, in the order of its counter registers. */
typedef struct hw_device_stats {
  uint64_t requests;
  uint64_t bytes_in;
  uint64_t bytes_out;
  uint64_t rejections;
  uint64_t protocol_errors;
  uint64_t reloads;
  uint64_t reload_bytes;
} hw_device_stats;

/* One slot: state (0 empty, 1 loading, 2 ready), table checksum (CRC-32C), table
 * length, message types, schema name (NUL-terminated). */
typedef struct hw_device_slot {
  uint32_t state, checksum, table_len, types;
  char name[65];
} hw_device_slot;

/* CreateDevice: opens `uri` and reads the device's header block; *out is the handle
 * (NULL on failure, with the text in errbuf). HW_BAD_ARGUMENT: a bad URI or option;
 * HW_LINK: no answer, or not a heapwire device. */
int32_t hw_device_open(const char *uri, const hw_device_options *opts, hw_device **out, char *errbuf,
                       size_t errbuf_cap);
/* DestroyDevice: waits for the replies in flight and frees the handle (also on
 * HW_LINK); results not received are dropped. NULL is ignored. */
int32_t hw_device_close(hw_device *dev);
/* The text of the last failed call on dev, "" after a success. */
const char *hw_device_last_error(const hw_device *dev);
/* The header block read at open. */
int32_t hw_device_header(hw_device *dev, hw_device_info *out);
/* The counters (read from the device). */
int32_t hw_device_counters(hw_device *dev, hw_device_stats *out);
/* Slot `slot` as the device reports it. */
int32_t hw_device_slot_info(hw_device *dev, uint32_t slot, hw_device_slot *out);
/* ReadDevReg / WriteDevReg: `count` 32-bit registers from word address `addr`. A missing
 * or read-only register: HW_DEVICE. */
int32_t hw_device_read_regs(hw_device *dev, uint32_t addr, uint32_t *values, size_t count);
int32_t hw_device_write_regs(hw_device *dev, uint32_t addr, const uint32_t *values, size_t count);
/* SetBitstreams: installs the compiled schema of `s` into `slot` under `name` (NULL: its
 * first message's package), with s's per-type registers (hw_set_register). Requests in
 * flight on the slot finish first. */
int32_t hw_device_install(hw_device *dev, uint32_t slot, const hw_schema *s, const char *name);
/* Transmit: queues message type `msg_type` of `s` from `input` (copied) on `wire`, its
 * image laid out for `base`; *ticket numbers it (0, 1, 2, ... per handle). Returns at
 * once while the window has room; a schema that no slot holds is installed first into the
 * least recently used idle slot. The request runs with s's registers and depth limit as
 * they are now (a change of registers waits for the requests outstanding); its image
 * is limited by the device's output memory, not hw_set_max_image_bytes. */
int32_t hw_device_submit(hw_device *dev, const hw_schema *s, uint32_t wire, int32_t msg_type, const uint8_t *input,
                         size_t len, uint64_t base, uint64_t *ticket, hw_error *err);
/* Receive: blocks for the oldest result not yet received (submission order); *ticket
 * is its ticket. 0: the image, *written bytes, in `out` -- what hw_decode gives for the
 * same input, base and registers. HW_BUFFER_TOO_SMALL: err->needed; the result is kept
 * and the next call returns it again. A rejection: its kind and err->offset, as
 * hw_decode. HW_DEVICE: the device refused the request (err->offset its code: 70 input
 * larger than its input memory, ...). HW_BAD_ARGUMENT: nothing outstanding. */
int32_t hw_device_next(hw_device *dev, uint64_t *ticket, void *out, size_t cap, size_t *written, hw_error *err);
/* Requests submitted and not yet received (0 for NULL). */
uint64_t hw_device_outstanding(const hw_device *dev);

#ifdef __cplusplus
}
#endif

#endif /* HEAPWIRE_H */
