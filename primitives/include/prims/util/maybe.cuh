#pragma once
// Maybe<T>: a value that may be absent. Reductions and scans carry it where an op has no identity: threads with
// nothing to contribute (reduce), and scans with no seed (inclusive scans).

namespace prims::detail {

/// A value that may be absent: lets threads with nothing to contribute take part in a block reduce with an op
/// that has no identity.
template <class T>
struct Maybe {
  T value;
  bool valid;
};

template <class T, class Op>
struct MaybeOp {
  Op op;
  __device__ Maybe<T> operator()(const Maybe<T>& a, const Maybe<T>& b) const {
    if (!a.valid) return b;
    if (!b.valid) return a;
    return {op(a.value, b.value), true};
  }
};

template <class T, class Op>
__device__ __forceinline__ void fold_into(Maybe<T>& acc, const T& value, Op op) {
  acc.value = acc.valid ? op(acc.value, value) : value;
  acc.valid = true;
}

}  // namespace prims::detail
