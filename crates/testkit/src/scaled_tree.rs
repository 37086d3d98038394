//! The MSR paper's scaled expression tree (its Fig. 18) on the objgraph wire, for
//! `examples/expression_tree/expr.proto` (type ids: 0 `Literal`, 1 `Operation`). Shared by
//! the tests, the hardware system test and the figures, so they all measure one input.

/// A chain of `n` Operations, each with a Literal left child and the next Operation (the
/// last: a Literal) on its right, in prefix order: 2n+1 objects, 21n+12 wire bytes.
pub fn wire(n: usize) -> Vec<u8> {
    let mut types = Vec::new();
    let mut members = Vec::new();
    let mut id = 0u32;
    for k in 0..n {
        types.push(1u32);
        members.extend_from_slice(&(id + 1).to_le_bytes());
        members.extend_from_slice(&(id + 2).to_le_bytes());
        members.push((k % 4) as u8);
        types.push(0);
        members.extend_from_slice(&((k as i32 % 10) - 3).to_le_bytes());
        id += 2;
    }
    types.push(0);
    members.extend_from_slice(&7u32.to_le_bytes());
    let mut v = (types.len() as u32).to_le_bytes().to_vec();
    for t in types {
        v.extend_from_slice(&t.to_le_bytes());
    }
    v.extend_from_slice(&members);
    v
}
