/*
 * heapprof/typed_new.hpp - the type of every `new T(...)` and `new T[n]`
 * of a C++ program, named at compile time, without naming types by hand.
 *
 *     g++ -include heapprof/typed_new.hpp ...      (or #include it first)
 *
 * Every new-expression compiled after this header becomes
 *
 *     heapprof_typed_new_ ->* new T(...)
 *
 * where operator->* is a template that sees the T* the expression yields
 * and calls heapprof_set_type_array(p, <T's name>, sizeof(T), <T's array
 * cookie>): the block is named T, and for new T[n] its n elements are
 * counted (report --by type). The recorder finds the block at p, or at p
 * less the array cookie (new T[n] of a T with a destructor stores n
 * there), so one operator serves new T and new T[n]. This is the
 * NewTrick of the type-preserving heap profiler (docs/attribution.md),
 * with ->* for *: it binds tighter (`sizeof(H) + new char[n]` stays what
 * it was) and, from C++17, its left side is evaluated first.
 *
 * Without heapprof the call is a weak symbol's null test and a branch:
 * the program runs unchanged. Under heapprof, each new costs a lookup of
 * its block (heapprof_set_type_array).
 *
 * Included first. A `new` macro breaks every header compiled after it
 * that names `operator new` (libstdc++'s allocators do, in <memory>,
 * <string>, <vector>, ...: `operator heapprof_typed_new_ ->* new(...)`
 * is no declaration), and would pass the placement news of the standard
 * containers (`::new((void*)p) T(...)`, one per element) through the
 * operator. So this header includes the standard library's headers that
 * do either (the containers, <memory>, <functional>, <algorithm>: their
 * include guards keep them from being read again) before it defines the
 * macro. That costs about 0.5 s of compile time per translation unit that
 * did not include them anyway (g++ 12).
 *
 * What it cannot see, or breaks:
 *   - placement new (`new (buf) T`) allocates nothing: it names the block
 *     buf starts only when buf is a block's start and the block is exactly
 *     a T or a whole array of T (`new (malloc(sizeof(T))) T` is a T);
 *     inside a block, or on the stack, it names nothing;
 *   - allocations that call ::operator new or malloc directly (templates
 *     with an allocator: std::allocator, the containers, make_shared) are
 *     not new-expressions: heapprof types those from the stack;
 *   - the standard library's own new-expressions, in the headers this one
 *     includes first (std::function's heap functor, std::thread's state);
 *   - code compiled without this header (libraries);
 *   - a header that declares or calls `operator new` itself, included
 *     after this one (a class's own operator new, <valarray>,
 *     <memory_resource>, boost.pool): compile errors. Put it between
 *     #include <heapprof/typed_new_off.hpp> and
 *     #include <heapprof/typed_new_on.hpp>, or include it first;
 *   - a C-style cast right before new (`(char *)new int[4]`) reads as a
 *     cast of the marker: a compile error; write `(char *)(new int[4])`
 *     or static_cast;
 *   - `delete new T` (a pm-expression is no cast-expression): write
 *     `delete (new T)`.
 *
 * A C translation unit (-include with gcc) sees nothing of it.
 */
#ifndef HEAPPROF_TYPED_NEW_HPP
#define HEAPPROF_TYPED_NEW_HPP

#ifdef __cplusplus

#pragma push_macro("new")
#undef new

/* The standard library first, the macro after (see above). */
#include <algorithm>
#include <deque>
#include <exception>
#include <forward_list>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>
#if __cplusplus >= 201703L
#include <any>
#include <optional>
#include <variant>
#endif

#include "../heapprof.hpp"

/* The marker the macro puts before every new: an enumerator of the global
 * namespace, so that `::new (p) T` (`::heapprof_typed_new_ ->* new (p)
 * T`) stays valid, and argument-dependent lookup finds the operator from
 * any namespace, whatever operator->* that namespace declares. */
enum heapprof_typed_new_t_ { heapprof_typed_new_ };

/* Names the block p points into T's (heapprof_set_type_array: sizeof(T)
 * and T's array cookie, the name its __PRETTY_FUNCTION__) and returns p.
 * Not async-signal-safe under heapprof (as heapprof_set_type). */
template <class T> inline T *operator->*(heapprof_typed_new_t_, T *p) noexcept
{
	if (::heapprof_set_type_array)
		::heapprof_set_type_array(p, ::heapprof::detail::type_name<T>(), sizeof(T),
					  ::heapprof::detail::array_cookie<T>());
	return p;
}

/* `*new T` (a reference to the new object) reads as `(*marker) ->* new
 * T`: unary operators bind tighter. The marker's * gives a second
 * marker, whose operator->* names the block the same way and returns *p. */
enum heapprof_typed_new_deref_t_ { heapprof_typed_new_deref_ };

inline heapprof_typed_new_deref_t_ operator*(heapprof_typed_new_t_) noexcept
{
	return heapprof_typed_new_deref_;
}

template <class T> inline T &operator->*(heapprof_typed_new_deref_t_, T *p) noexcept
{
	return *(heapprof_typed_new_->*p);
}

#pragma pop_macro("new")
#define new heapprof_typed_new_->*new

#endif /* __cplusplus */

#endif
