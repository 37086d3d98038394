// Object-graph deserialization: heapwire vs a plain C++ deserializer written the
// paper's way (section 5.1: per-object new, virtual read(), id -> pointer table with
// dynamic_cast), on the paper's scaled expression tree (Fig. 18, n Operation nodes,
// 2n+1 objects, 21n+12 wire bytes). Both read the same wire bytes; both results are
// checked by evaluating them. Beside them, memset and memcpy of the image's byte count
// into the same buffer: how fast this machine writes that many bytes at all. Prints
// one CSV line per n on stdout.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "heapwire.h"
#include "expr64.gen.h"

enum OperationType { eAddition = 0, eSubtraction = 1, eMultiplication = 2, eDivision = 3 };

class Serializer;
class Object {
 public:
  virtual ~Object() {}
  virtual void read(const char *buffer, int *pos, const Serializer *s) = 0;
};

class Serializer {
 public:
  std::vector<Object *> L;
  Object *getObject(int id) const { return id >= 0 && (size_t)id < L.size() ? L[id] : nullptr; }
};

class Node : public Object {
  HEAPWIRE_EXPR_LAYOUT_FRIEND
 public:
  virtual int evaluate() const = 0;
 protected:
  Node *m_left = nullptr;
  Node *m_right = nullptr;
};

class Literal : public Node {
  HEAPWIRE_EXPR_LAYOUT_FRIEND
 public:
  Literal() {}
  explicit Literal(int v) : m_value(v) {}
  int evaluate() const override { return m_value; }
  void read(const char *buffer, int *pos, const Serializer *) override {
    memcpy(&m_value, buffer + *pos, 4);
    *pos += 4;  // sizeof(m_value) == 4 bytes
  }
 private:
  int m_value = 0;
};

class Operation : public Node {
  HEAPWIRE_EXPR_LAYOUT_FRIEND
 public:
  Operation() {}
  Operation(OperationType t, Node *l, Node *r) : m_eType(t) { m_left = l; m_right = r; }
  int evaluate() const override {
    int a = m_left->evaluate(), b = m_right->evaluate();
    return m_eType == eAddition ? a + b : m_eType == eSubtraction ? a - b : a * b;
  }
  void read(const char *buffer, int *pos, const Serializer *s) override {
    int left, right;
    memcpy(&left, &buffer[*pos], 4);
    *pos += 4;
    memcpy(&right, &buffer[*pos], 4);
    *pos += 4;
    m_left = dynamic_cast<Node *>(s->getObject(left));
    m_right = dynamic_cast<Node *>(s->getObject(right));
    m_eType = (OperationType)buffer[*pos];
    (*pos)++;
  }
 private:
  OperationType m_eType = eAddition;
};

HEAPWIRE_EXPR_CHECK_CLASSES()

// The paper's software deserializer (section 5.1), phase 1 and phase 2.
static Object *deserialize(const char *buf, Serializer &s) {
  int pos = 0;
  int n;
  memcpy(&n, buf, 4);
  pos += 4;
  s.L.clear();
  s.L.reserve(n);
  for (int i = 0; i < n; i++) {
    int t;
    memcpy(&t, buf + pos, 4);
    pos += 4;
    Object *o = t == 0 ? (Object *)new Literal() : (Object *)new Operation();  // allocate, set vtable
    s.L.push_back(o);
  }
  for (int i = 0; i < n; i++) s.L[i]->read(buf, &pos, &s);
  return n ? s.L[0] : nullptr;
}

static OperationType op_of(int k) { return (OperationType)(k % 3); }
static int val_of(int k) { return k % 3 == 2 ? ((k / 3) % 2 ? -1 : 1) : k % 10 + 1; }

static int eval_iter(const Node *root);

// This thread's CPU time: on a shared, loaded machine the time slices other processes
// take do not count against either side (both are timed the same way).
static double now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: bench expr.proto [n...]\n"); return 2; }
  char msg[512];
  hw_schema *g = hw_open(argv[1], nullptr, 0, 64, 0, msg, sizeof msg);
  if (!g) { fprintf(stderr, "%s\n", msg); return 2; }
  int32_t node = hw_type(g, "expr.Node"), lit = hw_type(g, "expr.Literal"), op = hw_type(g, "expr.Operation");
  { Literal l; Operation o; uint64_t v; memcpy(&v, &l, 8); hw_set_register(g, lit, v); memcpy(&v, &o, 8); hw_set_register(g, op, v); }
  std::vector<int> ns;
  for (int i = 2; i < argc; i++) ns.push_back(atoi(argv[i]));
  if (ns.empty()) ns = {1, 2, 3, 4, 8, 16, 32, 64, 96, 127, 255, 511, 1023, 4095, 16383, 65535, 100000};
  printf("n,objects,wire_bytes,heap_bytes,cpp_ns,heapwire_ns,speedup,memset_ns,memcpy_ns\n");
  for (int n : ns) {
    // Build the tree with C++ and serialize it with heapwire.
    std::vector<Node *> pool;
    Node *t = new Literal(7);
    pool.push_back(t);
    for (int k = n - 1; k >= 0; k--) {
      Node *l = new Literal(val_of(k));
      t = new Operation(op_of(k), l, t);
      pool.push_back(l);
      pool.push_back(t);
    }
    std::vector<uint8_t> wire(21 * (size_t)n + 12);
    size_t wl = 0;
    hw_error e;
    if (hw_encode_objects(g, node, t, wire.data(), wire.size(), &wl, &e)) { fprintf(stderr, "encode failed\n"); return 1; }
    int want = eval_iter(t);
    size_t heap = (2 * (size_t)n + 1) * 32;
    std::vector<uint64_t> buf(heap / 8), copy_src(heap / 8, 0x0101010101010101ull);
    // Batch so each timed interval is ~2 ms or more; 15 timed rounds, median.
    size_t batch = std::max<size_t>(1, 400000 / (2 * (size_t)n + 1));
    std::vector<Serializer> sers(batch);
    std::vector<double> tc, th, ts, tm;
    for (int round = 0; round < 15; round++) {
      double t0 = now();
      for (size_t b = 0; b < batch; b++) deserialize((const char *)wire.data(), sers[b]);
      double t1 = now();
      if (eval_iter((Node *)sers[0].L[0]) != want) { fprintf(stderr, "C++ result wrong\n"); return 1; }
      for (size_t b = 0; b < batch; b++) { for (Object *o : sers[b].L) delete o; sers[b].L.clear(); }
      double t2 = now();
      for (size_t b = 0; b < batch; b++) {
        size_t w;
        int rc = hw_decode(g, HW_WIRE_OBJGRAPH, node, wire.data(), wl, (uint64_t)(uintptr_t)buf.data(), buf.data(), heap, &w, &e);
        if (rc) { fprintf(stderr, "decode: %s\n", hw_code_name(rc)); return 1; }
      }
      double t3 = now();
      if (eval_iter((const Node *)buf.data()) != want) { fprintf(stderr, "heapwire result wrong\n"); return 1; }
      // The write limit, after the decode in the same round: the image's bytes set and
      // copied (the compiler barrier keeps the batch's stores).
      double t4 = now();
      for (size_t b = 0; b < batch; b++) { memset(buf.data(), (int)b, heap); asm volatile("" : : "r"(buf.data()) : "memory"); }
      double t5 = now();
      for (size_t b = 0; b < batch; b++) { memcpy(buf.data(), copy_src.data(), heap); asm volatile("" : : "r"(buf.data()) : "memory"); }
      double t6 = now();
      tc.push_back((t1 - t0) / batch);
      th.push_back((t3 - t2) / batch);
      ts.push_back((t5 - t4) / batch);
      tm.push_back((t6 - t5) / batch);
    }
    std::sort(tc.begin(), tc.end());
    std::sort(th.begin(), th.end());
    std::sort(ts.begin(), ts.end());
    std::sort(tm.begin(), tm.end());
    double c = tc[tc.size() / 2] * 1e9, h = th[th.size() / 2] * 1e9, ms = ts[ts.size() / 2] * 1e9, mc = tm[tm.size() / 2] * 1e9;
    printf("%d,%d,%zu,%zu,%.1f,%.1f,%.2f,%.1f,%.1f\n", n, 2 * n + 1, wl, heap, c, h, c / h, ms, mc);
    fflush(stdout);
    for (Node *p : pool) delete p;
  }
  hw_close(g);
  return 0;
}

// Evaluation without recursion (the chain is deep); same semantics as evaluate().
class Peek : public Node {
 public:
  static const Node *L(const Node *n) { return ((const Peek *)n)->m_left; }
  static const Node *R(const Node *n) { return ((const Peek *)n)->m_right; }
};
static int eval_iter(const Node *root) {
  // Right spine: Op(L, Op(L, ... L)). Collect, then fold from the bottom.
  std::vector<const Node *> spine;
  const Node *p = root;
  while (dynamic_cast<const Operation *>(p)) { spine.push_back(p); p = Peek::R(p); }
  int acc = p->evaluate();
  for (size_t i = spine.size(); i-- > 0;) {
    const Operation *o = (const Operation *)spine[i];
    int a = Peek::L(o)->evaluate();
    OperationType t;
    memcpy(&t, (const char *)o + 24, 4);
    acc = t == eAddition ? a + acc : t == eSubtraction ? a - acc : a * acc;
  }
  return acc;
}
