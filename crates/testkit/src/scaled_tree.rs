//! The MSR paper's expression trees on the objgraph wire, for
//! `examples/expression_tree/expr.proto` (type ids: 0 `Literal`, 1 `Operation`): its
//! `3 + (5 * 4)` and its scaled tree (Fig. 18). Shared by the tests, the hardware system
//! test and the figures, so they all check and measure the same inputs.

/// The paper's `3 + (5 * 4)` (its section 3.1 table, byte for byte): 5 objects, 54 bytes.
pub fn paper() -> Vec<u8> {
    let mut v = Vec::new();
    for w in [5u32, 1, 0, 1, 0, 0, 1, 2] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v.push(0); // add: eAddition
    for w in [3u32, 3, 4] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v.push(2); // mult: eMultiplication
    for w in [5u32, 4] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v
}

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
