//! heapwire-image
