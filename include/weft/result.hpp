// weft/result.hpp - errors as values: result<T> holds a T or a weft::errc.
//
// The interface follows std::expected<T, errc> (has_value, operator bool, value,
// operator*, operator->, error, value_or) but is usable in device code, which has
// no exceptions: value() on an error is a contract violation (abort on the host,
// trap on the device), exactly like dereferencing an empty optional. Check first.
#pragma once
#include <new>
#include <type_traits>
#include <utility>

#include "weft/config.hpp"
#include "weft/errc.hpp"

namespace weft {

// The error side of a result; weft::unexpected(errc::out_of_memory) converts to any result<T>.
// errc{} (zero) is no error (errc.hpp): unexpected(errc{}) is a contract violation (it
// would be an error for result<T> and a success for result<void>).
class unexpected {
 public:
  WEFT_HOST_DEVICE constexpr explicit unexpected(errc e) noexcept : error_(e) {
    if (e == errc{}) detail::contract_violation("weft::unexpected(errc{}): zero is no error");
  }
  WEFT_HOST_DEVICE constexpr errc error() const noexcept { return error_; }

 private:
  errc error_;
};

template <class T>
class [[nodiscard]] result {
  static_assert(!std::is_reference_v<T>, "result<T&> is not supported; use result<T*>");

 public:
  using value_type = T;

  WEFT_HOST_DEVICE result() noexcept(std::is_nothrow_default_constructible_v<T>)
    requires std::is_default_constructible_v<T>
      : has_(true) {
    ::new (static_cast<void*>(&value_)) T();
  }
  template <class U = T>
    requires(std::is_constructible_v<T, U &&> && !std::is_same_v<std::remove_cvref_t<U>, result> &&
             !std::is_same_v<std::remove_cvref_t<U>, unexpected>)
  WEFT_HOST_DEVICE result(U&& v) noexcept(std::is_nothrow_constructible_v<T, U&&>) : has_(true) {
    ::new (static_cast<void*>(&value_)) T(std::forward<U>(v));
  }
  WEFT_HOST_DEVICE result(unexpected u) noexcept : error_(u.error()), has_(false) {}

  WEFT_HOST_DEVICE result(const result& o) noexcept(std::is_nothrow_copy_constructible_v<T>)
    requires std::is_copy_constructible_v<T>
      : has_(o.has_) {
    if (has_) ::new (static_cast<void*>(&value_)) T(o.value_);
    else error_ = o.error_;
  }
  WEFT_HOST_DEVICE result(result&& o) noexcept(std::is_nothrow_move_constructible_v<T>) : has_(o.has_) {
    if (has_) ::new (static_cast<void*>(&value_)) T(std::move(o.value_));
    else error_ = o.error_;
  }
  WEFT_HOST_DEVICE result& operator=(const result& o)
    requires std::is_copy_constructible_v<T>
  {
    if (this != &o) { destroy(); construct_from(o); }
    return *this;
  }
  WEFT_HOST_DEVICE result& operator=(result&& o) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &o) { destroy(); construct_from(std::move(o)); }
    return *this;
  }
  WEFT_HOST_DEVICE ~result() { destroy(); }

  WEFT_HOST_DEVICE bool has_value() const noexcept { return has_; }
  WEFT_HOST_DEVICE explicit operator bool() const noexcept { return has_; }

  WEFT_HOST_DEVICE T& value() & { check_value(); return value_; }
  WEFT_HOST_DEVICE const T& value() const& { check_value(); return value_; }
  WEFT_HOST_DEVICE T&& value() && { check_value(); return std::move(value_); }
  WEFT_HOST_DEVICE T& operator*() & { check_value(); return value_; }
  WEFT_HOST_DEVICE const T& operator*() const& { check_value(); return value_; }
  WEFT_HOST_DEVICE T&& operator*() && { check_value(); return std::move(value_); }
  WEFT_HOST_DEVICE T* operator->() { check_value(); return &value_; }
  WEFT_HOST_DEVICE const T* operator->() const { check_value(); return &value_; }

  // The error; only meaningful when !has_value() (a contract violation otherwise).
  WEFT_HOST_DEVICE errc error() const noexcept {
    if (has_) detail::contract_violation("result::error() on a result that holds a value");
    return error_;
  }
  template <class U>
  WEFT_HOST_DEVICE T value_or(U&& fallback) const& {
    return has_ ? value_ : static_cast<T>(std::forward<U>(fallback));
  }
  template <class U>
  WEFT_HOST_DEVICE T value_or(U&& fallback) && {
    return has_ ? std::move(value_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  WEFT_HOST_DEVICE void check_value() const {
    if (!has_) detail::contract_violation("result::value() on a result that holds an error");
  }
  WEFT_HOST_DEVICE void destroy() noexcept {
    if (has_) value_.~T();
  }
  template <class R>
  WEFT_HOST_DEVICE void construct_from(R&& o) {
    has_ = o.has_;
    if (has_) ::new (static_cast<void*>(&value_)) T(std::forward<R>(o).value_);
    else error_ = o.error_;
  }

  union {
    T value_;
    errc error_;
  };
  bool has_;
};

template <>
class [[nodiscard]] result<void> {
 public:
  using value_type = void;
  WEFT_HOST_DEVICE constexpr result() noexcept : error_{} {}
  WEFT_HOST_DEVICE constexpr result(unexpected u) noexcept : error_(u.error()) {}

  WEFT_HOST_DEVICE constexpr bool has_value() const noexcept { return error_ == errc{}; }
  WEFT_HOST_DEVICE constexpr explicit operator bool() const noexcept { return has_value(); }
  WEFT_HOST_DEVICE void value() const {
    if (!has_value()) detail::contract_violation("result<void>::value() on a result that holds an error");
  }
  WEFT_HOST_DEVICE void operator*() const { value(); }
  WEFT_HOST_DEVICE errc error() const noexcept {
    if (has_value()) detail::contract_violation("result::error() on a result that holds a value");
    return error_;
  }

 private:
  errc error_;  // errc{} (zero) means success
};

template <class T>
inline constexpr bool is_result_v = false;
template <class T>
inline constexpr bool is_result_v<result<T>> = true;

}  // namespace weft
