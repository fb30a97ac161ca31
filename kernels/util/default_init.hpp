// default_init.hpp — an allocator adaptor whose value construction with no arguments
// default-initializes (leaves trivial types such as Fr and uint32_t unwritten), so that
// vector::resize(n) reserves pages without touching them and parallel writers fault them in on
// their own cores. Use only where every element is written before it is read.
#pragma once
#include <memory>
#include <utility>
#include <vector>

namespace zk {

template <class T, class Base = std::allocator<T>>
class DefaultInitAllocator : public Base {
  using Traits = std::allocator_traits<Base>;

 public:
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U, typename Traits::template rebind_alloc<U>>;
  };
  using Base::Base;

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    Traits::construct(static_cast<Base&>(*this), p, std::forward<Args>(args)...);
  }
};

template <class T>
using UninitializedVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace zk
