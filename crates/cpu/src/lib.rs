//! heapwire-cpu
