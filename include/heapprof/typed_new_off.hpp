/*
 * heapprof/typed_new_off.hpp - turns heapprof/typed_new.hpp's `new` macro
 * off until heapprof/typed_new_on.hpp: around a header that declares or
 * calls `operator new` itself, or a placement new that must not name its
 * block. No include guard: it is meant to be included many times.
 *
 *     #include <heapprof/typed_new_off.hpp>
 *     #include <boost/pool/pool.hpp>
 *     #include <heapprof/typed_new_on.hpp>
 */
#pragma push_macro("new")
#undef new
