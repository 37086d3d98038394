// The MSR paper's running example, end to end with live C++ objects:
// build 3+(5*4) from real polymorphic classes, serialize it through heapwire's C API
// (two passes, prefix order, object -> id map), print the wire bytes, rebuild the tree
// with heapwire into a preallocated buffer at that buffer's address (vtable pointers
// registered from this program), and call the virtual evaluate() on the rebuilt root.
// Then the scaled tree (paper Fig. 18) over a sweep of n up to 100000, and the paper's
// 32-bit layout (16-byte objects, Fig. 4) decoded and checked through the generated
// mirror structs.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include "heapwire.h"
#include "expr64.gen.h"  // generated: real-class layout checks (this machine, 64-bit)
#include "expr32.gen.h"  // generated: the paper's 32-bit layout as mirror structs

enum OperationType { eAddition = 0, eSubtraction = 1, eMultiplication = 2, eDivision = 3 };

class Node {
  HEAPWIRE_EXPR_LAYOUT_FRIEND
 public:
  Node(Node *l = nullptr, Node *r = nullptr) : m_left(l), m_right(r) {}
  virtual ~Node() {}
  virtual int evaluate() const = 0;
  virtual int getClassID() const = 0;
  // Objects rebuilt by heapwire live in a caller's buffer: never deleted one by one.
 protected:
  Node *m_left;
  Node *m_right;
};

class Literal : public Node {
  HEAPWIRE_EXPR_LAYOUT_FRIEND
 public:
  explicit Literal(int v) : m_value(v) {}
  int evaluate() const override { return m_value; }
  int getClassID() const override { return 0; }
 private:
  int m_value;
};

class Operation : public Node {
  HEAPWIRE_EXPR_LAYOUT_FRIEND
 public:
  Operation(OperationType t, Node *l, Node *r) : Node(l, r), m_eType(t) {}
  int evaluate() const override {
    int a = m_left->evaluate(), b = m_right->evaluate();
    switch (m_eType) {
      case eAddition: return a + b;
      case eSubtraction: return a - b;
      case eMultiplication: return a * b;
      default: return b ? a / b : 0;
    }
  }
  int getClassID() const override { return 1; }
 private:
  OperationType m_eType;
};

// The compiler checks heapwire's 64-bit layout against the real classes.
HEAPWIRE_EXPR_CHECK_CLASSES()

static void die(const char *what, int rc, const hw_error &e) {
  fprintf(stderr, "%s: %s at byte %llu\n", what, hw_code_name(rc), (unsigned long long)e.offset);
  exit(1);
}

static uintptr_t vptr_of(const void *obj) {
  uintptr_t v;
  memcpy(&v, obj, sizeof v);
  return v;
}

struct Ctx {
  hw_schema *g;
  int32_t node, lit, op;
};

static std::vector<uint8_t> serialize(Ctx &c, const Node *root) {
  std::vector<uint8_t> wire(1024);
  size_t n = 0;
  hw_error e;
  int rc = hw_encode_objects(c.g, c.node, root, wire.data(), wire.size(), &n, &e);
  if (rc == HW_BUFFER_TOO_SMALL) {
    wire.resize(e.needed);
    rc = hw_encode_objects(c.g, c.node, root, wire.data(), wire.size(), &n, &e);
  }
  if (rc) die("serialize", rc, e);
  wire.resize(n);
  return wire;
}

// Rebuilds the graph into `buf` (preallocated, 8-aligned) at the buffer's own address.
static Node *rebuild(Ctx &c, const std::vector<uint8_t> &wire, std::vector<uint64_t> &buf) {
  size_t n = 0;
  hw_error e;
  int rc = hw_decode(c.g, HW_WIRE_OBJGRAPH, c.node, wire.data(), wire.size(), (uint64_t)(uintptr_t)buf.data(), buf.data(),
                        buf.size() * 8, &n, &e);
  if (rc) die("rebuild", rc, e);
  return reinterpret_cast<Node *>(buf.data());
}

// The scaled tree: Op_0(L_0, Op_1(L_1, ... Op_{n-1}(L_{n-1}, L_n))) - n Operations,
// n+1 Literals, 2n+1 objects. Values keep every partial result small.
static OperationType op_of(int k) { return (OperationType)(k % 3); }
static int val_of(int k) { return k % 3 == 2 ? ((k / 3) % 2 ? -1 : 1) : k % 10 + 1; }

static int expected(int n) {
  int acc = 7;
  for (int k = n - 1; k >= 0; k--) {
    int a = val_of(k);
    acc = op_of(k) == eAddition ? a + acc : op_of(k) == eSubtraction ? a - acc : a * acc;
  }
  return acc;
}

static int run(const char *proto) {
  char msg[512];
  Ctx c;
  c.g = hw_open(proto, nullptr, 0, 64, 0, msg, sizeof msg);
  if (!c.g) { fprintf(stderr, "schema: %s\n", msg); return 2; }
  c.node = hw_type(c.g, "expr.Node");
  c.lit = hw_type(c.g, "expr.Literal");
  c.op = hw_type(c.g, "expr.Operation");
  // Per-type registers: the vtable pointers of this running program.
  {
    Literal l(0);
    Operation o(eAddition, nullptr, nullptr);
    hw_set_register(c.g, c.lit, vptr_of(&l));
    hw_set_register(c.g, c.op, vptr_of(&o));
  }

  // --- 3+(5*4), as in the paper (section 2.1) ---
  Node *l5 = new Literal(5);
  Node *l4 = new Literal(4);
  Node *l3 = new Literal(3);
  Node *mult = new Operation(eMultiplication, l5, l4);
  Node *add = new Operation(eAddition, l3, mult);
  std::vector<uint8_t> wire = serialize(c, add);
  std::string hex;
  for (uint8_t b : wire) { char t[3]; snprintf(t, sizeof t, "%02x", b); hex += t; }
  printf("wire (%zu bytes): %s\n", wire.size(), hex.c_str());
  static const uint8_t paper[54] = {5,0,0,0, 1,0,0,0, 0,0,0,0, 1,0,0,0, 0,0,0,0, 0,0,0,0,
                                    1,0,0,0, 2,0,0,0, 0, 3,0,0,0, 3,0,0,0, 4,0,0,0, 2, 5,0,0,0, 4,0,0,0};
  if (wire.size() != 54 || memcmp(wire.data(), paper, 54) != 0) { fprintf(stderr, "wire differs from the paper's table\n"); return 1; }
  printf("matches the paper's section 3.1 table: count 5; types 1,0,1,0,0; members\n");
  std::vector<uint64_t> buf(5 * expr_Literal_P64_SIZE / 8);
  Node *root = rebuild(c, wire, buf);
  printf("rebuilt %u-byte objects at %p (vtable pointers from this program)\n", hw_class_size(c.g, c.op), (void *)root);
  printf("evaluate = %d\n", root->evaluate());
  if (root->evaluate() != 23 || add->evaluate() != 23) return 1;
  delete add; delete mult; delete l3; delete l4; delete l5;

  // --- The scaled tree (Fig. 18) ---
  std::vector<int> ns;
  for (int n = 1; n <= 2000; n++) ns.push_back(n);
  for (double x = 2000 * 1.1; x < 100000; x *= 1.1) ns.push_back((int)x);
  ns.push_back(100000);
  size_t checked = 0;
  for (int n : ns) {
    std::vector<std::unique_ptr<Node>> pool;
    pool.reserve(2 * n + 1);
    pool.emplace_back(new Literal(7));
    Node *t = pool.back().get();
    for (int k = n - 1; k >= 0; k--) {
      pool.emplace_back(new Literal(val_of(k)));
      Node *l = pool.back().get();
      pool.emplace_back(new Operation(op_of(k), l, t));
      t = pool.back().get();
    }
    std::vector<uint8_t> w = serialize(c, t);
    if (w.size() != 21u * n + 12) { fprintf(stderr, "n=%d: %zu wire bytes, want 21n+12\n", n, w.size()); return 1; }
    std::vector<uint64_t> b((2 * n + 1) * 4);
    Node *r = rebuild(c, w, b);
    int want = expected(n);
    if (r->evaluate() != want || t->evaluate() != want) { fprintf(stderr, "n=%d: evaluate %d, want %d\n", n, r->evaluate(), want); return 1; }
    checked++;
  }
  printf("scaled tree: %zu sizes from n=1 to n=%d (every n up to 2000, then x1.1 steps), wire 21n+12 bytes, every evaluate() correct\n",
         checked, ns.back());

  // --- The paper's 32-bit layout (Fig. 4): 16-byte objects ---
  hw_schema *g32 = hw_open(proto, nullptr, 0, 32, 0, msg, sizeof msg);
  if (!g32) { fprintf(stderr, "schema: %s\n", msg); return 2; }
  const uint32_t vt_lit = 0x00401000u, vt_op = 0x00401020u;  // stand-ins for 32-bit vtables
  hw_set_register(g32, c.lit, vt_lit);
  hw_set_register(g32, c.op, vt_op);
  const uint32_t base32 = 0x00100000u;
  std::vector<uint32_t> img(5 * 4);
  size_t n = 0;
  hw_error e;
  int rc = hw_decode(g32, HW_WIRE_OBJGRAPH, c.node, paper, sizeof paper, base32, img.data(), img.size() * 4, &n, &e);
  if (rc) die("decode 32-bit", rc, e);
  printf("32-bit heap (%zu bytes, base 0x%08x):", n, base32);
  for (size_t i = 0; i < n / 4; i++) printf("%s%08x", i % 4 ? " " : " | ", img[i]);
  printf("\n");
  // Evaluate through the generated mirror structs (iteratively).
  const uint8_t *mem = reinterpret_cast<const uint8_t *>(img.data());
  std::vector<std::pair<uint32_t, bool>> stack{{base32, false}};
  std::vector<int> vals;
  while (!stack.empty()) {
    auto [p, done] = stack.back();
    stack.pop_back();
    const void *o = mem + (p - base32);
    if (((const expr_Node_p32 *)o)->hw_vptr == vt_lit) {
      vals.push_back(((const expr_Literal_p32 *)o)->value);
    } else if (!done) {
      const expr_Operation_p32 *op = (const expr_Operation_p32 *)o;
      stack.push_back({p, true});
      stack.push_back({op->right, false});
      stack.push_back({op->left, false});
    } else {
      int bv = vals.back(); vals.pop_back();
      int av = vals.back(); vals.pop_back();
      int t = ((const expr_Operation_p32 *)o)->type;
      vals.push_back(t == 0 ? av + bv : t == 1 ? av - bv : t == 2 ? av * bv : av / bv);
    }
  }
  printf("32-bit evaluate = %d (objects %u bytes each)\n", vals[0], (unsigned)sizeof(expr_Operation_p32));
  std::vector<uint8_t> again(64);
  rc = hw_encode_image(g32, HW_WIRE_OBJGRAPH, c.node, img.data(), n, base32, base32, again.data(), again.size(), &n, &e);
  if (rc) die("encode 32-bit", rc, e);
  if (vals[0] != 23 || n != 54 || memcmp(again.data(), paper, 54) != 0) { fprintf(stderr, "32-bit round trip failed\n"); return 1; }
  printf("32-bit image re-serializes to the same 54 bytes\n");
  hw_close(g32);
  hw_close(c.g);
  return 0;
}

struct Args { const char *proto; int rc; };

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s expr.proto\n", argv[0]); return 2; }
  // evaluate() recurses once per tree level (the user's code, not heapwire's): give the
  // deepest scaled tree (100000 levels) a large stack.
  Args a{argv[1], 1};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 512u << 20);
  pthread_t th;
  if (pthread_create(&th, &attr, [](void *p) -> void * {
        Args *a = (Args *)p;
        a->rc = run(a->proto);
        return nullptr;
      }, &a) != 0) { perror("pthread_create"); return 2; }
  pthread_join(th, nullptr);
  return a.rc;
}
