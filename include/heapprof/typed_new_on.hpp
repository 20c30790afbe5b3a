/*
 * heapprof/typed_new_on.hpp - turns heapprof/typed_new.hpp's `new` macro
 * back on after heapprof/typed_new_off.hpp (the two pair as push and pop).
 * No include guard: it is meant to be included many times.
 */
#pragma pop_macro("new")
