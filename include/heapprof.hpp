/*
 * heapprof.hpp - heapprof's public API for C++: types named at compile
 * time, context scopes as RAII objects.
 *
 * Everything here calls include/heapprof.h's weak functions only when they
 * are there, so a program built with this header runs unchanged without
 * heapprof. Header-only; needs C++11 (C++17 for nothing more).
 *
 *     struct Node *n = static_cast<Node *>(std::malloc(sizeof *n));
 *     heapprof::set_type<Node>(n);            // "Node"
 *
 *     Widget *w = new Widget[16];
 *     heapprof::set_type_array(w);           // 16 elements of Widget
 *
 * (include/heapprof/typed_new.hpp does this at every new by itself.)
 *
 *     void handle(Request &r)
 *     {
 *             HEAPPROF_SCOPE("handle");      // allocations below count in "handle"
 *             ...
 *     }
 *
 * C++ objects with a virtual table need none of this: their dynamic type
 * is read from the vtable at snapshots. Allocations through std::allocator
 * (containers, make_shared, make_unique) are typed from the stack when the
 * program has debug information.
 */
#ifndef HEAPPROF_HPP
#define HEAPPROF_HPP

#include <cerrno>
#include <cstddef>
#include <type_traits>

#include "heapprof.h"

namespace heapprof {

namespace detail {

/* The name of T with no RTTI and no string built at run time: a string
 * literal per T, the compiler's own spelling of the function, which ends
 * in "[with T = Foo]" (g++) or "[T = Foo]" (clang++). heapprof's analyzer
 * keeps the Foo. */
template <class T> inline const char *type_name() noexcept
{
	return __PRETTY_FUNCTION__;
}

/* The bytes new T[n] puts before the first element (the Itanium C++ ABI's
 * array cookie, x86-64 and most others): the element count, when T's
 * destructor is not trivial, padded to T's alignment. A class with its own
 * sized operator delete[] has a cookie too: name its arrays with set_type
 * on the pointer operator new[] returned. */
template <class T> constexpr std::size_t array_cookie() noexcept
{
	return std::is_trivially_destructible<T>::value
		       ? 0
		       : (alignof(T) > sizeof(std::size_t) ? alignof(T) : sizeof(std::size_t));
}

} // namespace detail

/* Names T the type of the live block that starts at p (what new T, malloc
 * or a custom heap returned). Returns heapprof_set_type's result: 0,
 * -ENOENT when p is not a recorded block, -ENODEV without heapprof. Not
 * async-signal-safe. */
template <class T> inline int set_type(const void *p) noexcept
{
	return ::heapprof_set_type ? ::heapprof_set_type(p, detail::type_name<T>()) : -ENODEV;
}

/* The same for an array made by new T[n] (or malloc'd for n T), given
 * its first element: the block starts at the array cookie, when T has
 * one; report --by type counts its n elements (heapprof_set_type_array).
 * Returns 0, -ENOENT, -EINVAL (the block is no whole array of T), or
 * -ENODEV without heapprof. */
template <class T> inline int set_type_array(const T *first) noexcept
{
	if (::heapprof_set_type_array)
		return ::heapprof_set_type_array(first, detail::type_name<T>(), sizeof(T),
						 detail::array_cookie<T>());
	/* A recorder from before heapprof_set_type_array: the name alone. */
	const char *block = reinterpret_cast<const char *>(first) - detail::array_cookie<T>();
	return set_type<T>(block);
}

/* A context scope for as long as the object lives (heapprof_context_push
 * and _pop). name must outlive the scope; a string literal does.
 * Async-signal-safe, as push and pop are. */
class scope {
      public:
	explicit scope(const char *name) noexcept : pushed_(::heapprof_context_push != nullptr)
	{
		if (pushed_)
			::heapprof_context_push(name);
	}
	~scope()
	{
		if (pushed_ && ::heapprof_context_pop)
			::heapprof_context_pop();
	}
	scope(const scope &) = delete;
	scope &operator=(const scope &) = delete;

      private:
	bool pushed_;
};

} // namespace heapprof

#define HEAPPROF_CAT2(a, b) a##b
#define HEAPPROF_CAT(a, b) HEAPPROF_CAT2(a, b)
/* Opens a context scope named name until the end of the enclosing block. */
#define HEAPPROF_SCOPE(name) ::heapprof::scope HEAPPROF_CAT(heapprof_scope_, __LINE__)(name)

#endif
