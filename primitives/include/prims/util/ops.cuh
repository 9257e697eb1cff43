#pragma once
// The binary operators that the device algorithms take. Any __device__-callable associative functor works;
// these three are provided, and Equal, the default equality of the selections.

namespace prims {

/// a + b. Example: `prims::device::reduce(temp, bytes, in, out, n, prims::Sum{}, 0)`.
struct Sum {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

/// The smaller of a and b (a when they compare equal).
struct Min {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    return b < a ? b : a;
  }
};

/// The larger of a and b (a when they compare equal).
struct Max {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};

/// a == b: the equality unique and the by-key algorithms use unless given another.
struct Equal {
  template <class T>
  __host__ __device__ bool operator()(const T& a, const T& b) const {
    return a == b;
  }
};

}  // namespace prims
