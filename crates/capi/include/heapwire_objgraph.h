/* heapwire C API: object graphs (docs/objgraph-wire.md).
 *
 * Link with libheapwire.a (cargo build -p heapwire-capi; add -lpthread -ldl -lm) or
 * libheapwire.so. Every function is safe to call with any bytes as wire input; the
 * pointer arguments must be valid as documented. A handle is not thread-safe; use one
 * per thread.
 */
#ifndef HEAPWIRE_OBJGRAPH_H
#define HEAPWIRE_OBJGRAPH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled schema with its object-graph decoder and per-type registers. */
typedef struct hw_og hw_og;

/* Result codes: 0 is success; the others are error kinds (hw_og_error_name). */
enum {
  HW_OG_OK = 0,
  HW_OG_TRUNCATED = 1,
  HW_OG_COUNT_TOO_LARGE = 2,
  HW_OG_UNKNOWN_TYPE = 3,
  HW_OG_BAD_REFERENCE = 4,
  HW_OG_REFERENCE_TYPE = 5,
  HW_OG_ROOT_TYPE = 6,
  HW_OG_TRAILING_BYTES = 7,
  HW_OG_IMAGE_TOO_LARGE = 8,
  HW_OG_BAD_BASE = 9,
  HW_OG_BUFFER_TOO_SMALL = 10,
  HW_OG_NOT_A_CLASS = 11,
  HW_OG_UNKNOWN_HEADER = 12,
  HW_OG_BAD_POINTER = 13,
  HW_OG_VALUE_OUT_OF_RANGE = 14,
  HW_OG_TOO_MANY_OBJECTS = 15,
  HW_OG_BAD_ARGUMENT = 100
};

typedef struct {
  int32_t kind;    /* one of the codes above */
  uint64_t offset; /* decode: byte offset in the wire input; encode: address */
  uint64_t needed; /* HW_OG_BUFFER_TOO_SMALL: bytes needed */
} hw_og_error;

/* Compiles a .proto schema (classes marked with heapwire/options.proto) for pointer
 * width 32 or 64. include_dir may be NULL. On failure returns NULL and writes a
 * message into err (if err_cap > 0). */
hw_og *hw_og_open(const char *proto_path, const char *include_dir, uint32_t pointer_width, char *err, size_t err_cap);
/* Loads a table file written by `heapwire compile`. */
hw_og *hw_og_open_table(const uint8_t *bytes, size_t len, char *err, size_t err_cap);
void hw_og_close(hw_og *g);

/* Register number (message index) of a class by full name ("expr.Literal"), or -1. */
int32_t hw_og_type(const hw_og *g, const char *full_name);
/* Wire type id of a class, or -1 (abstract or not a class). */
int64_t hw_og_type_id(const hw_og *g, int32_t type);
/* Object size of a class in the image, or 0. */
uint32_t hw_og_object_size(const hw_og *g, int32_t type);

/* Sets the per-type register of `type`: the header word (vtable pointer) every object
 * of that class gets, and by which the serializer recognizes an object's class.
 * Unset registers hold the message index. Returns 0 or HW_OG_BAD_ARGUMENT. */
int32_t hw_og_set_register(hw_og *g, int32_t type, uint64_t word);

/* Rebuilds the object graph in `wire` into `out` (capacity `cap`), whose objects will
 * live at address `base` (normally (uint64_t)out). Object 0 (the root) must be of class
 * `root_type` or a subclass. On success *written is the image size. */
int32_t hw_og_decode(hw_og *g, int32_t root_type, const uint8_t *wire, size_t len, uint64_t base, void *out,
                     size_t cap, size_t *written, hw_og_error *err);

/* Serializes the live objects of this process reachable from `root` (a pointer to an
 * object of class root_type or a subclass; NULL gives an empty graph) into out. Every
 * reachable object must have a registered header word and heapwire's layout (check
 * with the generated header's static_asserts). On HW_OG_BUFFER_TOO_SMALL, err->needed
 * is the wire size. */
int32_t hw_og_encode(hw_og *g, int32_t root_type, const void *root, uint8_t *out, size_t cap, size_t *written,
                     hw_og_error *err);

/* Serializes from a heap image (bytes at address base), root at address root. */
int32_t hw_og_encode_image(hw_og *g, int32_t root_type, const void *image, size_t len, uint64_t base, uint64_t root,
                           uint8_t *out, size_t cap, size_t *written, hw_og_error *err);

/* "truncated", "bad_reference", ... (static strings). */
const char *hw_og_error_name(int32_t kind);

#ifdef __cplusplus
}
#endif

#endif /* HEAPWIRE_OBJGRAPH_H */
