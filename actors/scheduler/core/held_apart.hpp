#pragma once
// A value held on the heap only when it is set: a member most objects leave empty costs a pointer
// instead of its size. Copies copy the value; an unset one reads as a default-constructed T.

#include <memory>

namespace kai::core {

template <class T>
class HeldApart {
 public:
  HeldApart() = default;
  HeldApart(const HeldApart& o) : value_(o.value_ ? std::make_unique<T>(*o.value_) : nullptr) {}
  HeldApart(HeldApart&&) noexcept = default;
  HeldApart& operator=(const HeldApart& o) {
    if (this != &o) value_ = o.value_ ? std::make_unique<T>(*o.value_) : nullptr;
    return *this;
  }
  HeldApart& operator=(HeldApart&&) noexcept = default;
  ~HeldApart() = default;

  /// The value, or a default one when unset.
  const T& operator*() const { return value_ ? *value_ : empty(); }
  const T* operator->() const { return &**this; }
  /// The value to change, made on first use.
  T& mut() {
    if (!value_) value_ = std::make_unique<T>();
    return *value_;
  }
  bool operator==(const HeldApart& o) const { return **this == *o; }

 private:
  static const T& empty() {
    static const T kEmpty{};
    return kEmpty;
  }
  std::unique_ptr<T> value_;
};

}  // namespace kai::core
